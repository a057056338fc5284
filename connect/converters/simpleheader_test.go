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
