package file

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
)

// TestLineMatchesJava reads each record value of testdata/java_lines.tsv
// through Sluice's JsonConverter and checks that the sink writes for it
// exactly the line Kafka's FileStreamSink wrote for it on Java 17 (the
// third column, which JavaLines.java made from Kafka's own classes).
func TestLineMatchesJava(t *testing.T) {
	f, err := os.Open("testdata/java_lines.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		row := sc.Text()
		if row == "" || strings.HasPrefix(row, "#") {
			continue
		}
		cols := strings.Split(row, "\t")
		if len(cols) != 3 && len(cols) != 4 {
			t.Fatalf("row %q: %d columns", row, len(cols))
		}
		want := cols[2]
		if len(cols) == 4 {
			// A known deviation: the same entries, bucket-mates in
			// another order.
			if !sameRunes(cols[2], cols[3]) {
				t.Errorf("row %q: the deviation is more than an order", row)
			}
			want = cols[3]
		}
		var c converters.JSON
		if err := c.Configure(map[string]string{converters.SchemasEnableConfig: cols[0]}, false); err != nil {
			t.Fatal(err)
		}
		schema, value, err := c.ToConnectData("t", []byte(cols[1]))
		if err != nil {
			t.Errorf("%s: %v", cols[1], err)
			continue
		}
		if got := Line(schema, value); got != want {
			t.Errorf("schemas.enable=%s %s\n got: %s\nwant: %s", cols[0], cols[1], got, want)
		}
		n++
	}
	if n < 90 {
		t.Fatalf("only %d rows checked", n)
	}
}

// sameRunes reports whether a and b are made of the same characters.
func sameRunes(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	slices.Sort(ra)
	slices.Sort(rb)
	return slices.Equal(ra, rb)
}

// TestLineDeviations pins what Sluice writes where Java's text cannot be
// reproduced: byte arrays, which Java prints as an identity hash.
func TestLineDeviations(t *testing.T) {
	bytesField := &connect.Schema{Type: connect.SchemaTypeStruct, Fields: []connect.Field{
		{Name: "raw", Schema: connect.OptionalBytesSchema}, {Name: "n", Schema: connect.Int64Schema}}}
	for _, tt := range []struct {
		name   string
		schema *connect.Schema
		value  any
		want   string
	}{
		{"bytes as the whole value are the line itself", connect.BytesSchema, []byte("raw \xff bytes"), "raw \xff bytes"},
		{"schemaless bytes too", nil, []byte("abc"), "abc"},
		{"bytes in a struct are base64", bytesField, map[string]any{"raw": []byte("hi"), "n": int64(1)}, "Struct{raw=aGk=,n=1}"},
		{"bytes in an array are base64", nil, []any{[]byte{0, 255}}, "[AP8=]"},
	} {
		if got := Line(tt.schema, tt.value); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
