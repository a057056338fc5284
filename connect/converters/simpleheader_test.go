package converters

import (
	"testing"

	"github.com/sluice-io/sluice/connect"
)

// TestSimpleHeader reads and writes header values as Kafka's
// SimpleHeaderConverter does (Values.parseString and convertToString).
func TestSimpleHeader(t *testing.T) {
	for _, tc := range []struct {
		in   string
		typ  string
		want any
		out  string
	}{
		{"hello", connect.SchemaTypeString, "hello", "hello"},
		{"TRUE", connect.SchemaTypeBoolean, true, "true"},
		{"42", connect.SchemaTypeInt8, int8(42), "42"},
		{"300", connect.SchemaTypeInt16, int16(300), "300"},
		{"70000", connect.SchemaTypeInt32, int32(70000), "70000"},
		{"5000000000", connect.SchemaTypeInt64, int64(5000000000), "5000000000"},
		{"1.0", connect.SchemaTypeInt8, int8(1), "1"},
		{"1.50", connect.SchemaTypeFloat32, float32(1.5), "1.5"},
		{"1e39", connect.SchemaTypeFloat64, 1e39, "1.0E39"},
		{" 7", connect.SchemaTypeString, " 7", " 7"},
		{"", connect.SchemaTypeString, "", ""},
	} {
		s, v, err := SimpleHeader{}.ToConnectData("t", []byte(tc.in))
		if err != nil || s.Type != tc.typ || v != tc.want {
			t.Errorf("parse %q: %v %#v %v, want %s %#v", tc.in, s, v, err, tc.typ, tc.want)
			continue
		}
		if b, _ := (SimpleHeader{}).FromConnectData("t", s, v); string(b) != tc.out {
			t.Errorf("write %#v: %q, want %q", v, b, tc.out)
		}
	}
	if got := ValuesString(map[string]any{"b": []any{int32(1), "x"}, "a": nil}); got != `{"a":null,"b":[1,"x"]}` {
		t.Errorf("a map: %s", got)
	}
	if b, _ := (SimpleHeader{}).FromConnectData("t", nil, nil); b != nil {
		t.Errorf("null header: %q", b)
	}
}

// TestSimpleHeaderStruct writes a struct as Kafka's Values.append does:
// fields in schema order (not sorted), strings quoted with only backslashes
// and quotes escaped, a Decimal as BigDecimal's text — the form of
// Debezium's __debezium.oldkey header.
func TestSimpleHeaderStruct(t *testing.T) {
	dec := &connect.Schema{Type: connect.SchemaTypeBytes, Name: "org.apache.kafka.connect.data.Decimal", Parameters: map[string]string{"scale": "2"}}
	key := &connect.Schema{Type: connect.SchemaTypeStruct, Name: "p.s.t.Key", Fields: []connect.Field{
		{Name: "z", Schema: &connect.Schema{Type: connect.SchemaTypeInt32}},
		{Name: "a", Schema: connect.StringSchema},
		{Name: "d", Schema: dec},
		{Name: "n", Schema: &connect.Schema{Type: connect.SchemaTypeString, Optional: true, Default: "x"}},
	}}
	v := map[string]any{"z": int32(7), "a": "say \"hi\"\\\n", "d": []byte{0xfb, 0x2e}, "n": nil}
	b, err := SimpleHeader{}.FromConnectData("t", key, v)
	if want := "{\"z\":7,\"a\":\"say \\\"hi\\\"\\\\\n\",\"d\":-12.34,\"n\":\"x\"}"; err != nil || string(b) != want {
		t.Errorf("got %s, %v; want %s", b, err, want)
	}
}
