package converters

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/connect"
)

func mustConfigure(t *testing.T, c connect.Converter, props map[string]string, isKey bool) {
	t.Helper()
	if err := c.Configure(props, isKey); err != nil {
		t.Fatal(err)
	}
}

func TestJSONWrite(t *testing.T) {
	i32 := &connect.Schema{Type: connect.SchemaTypeInt32}
	tests := []struct {
		name    string
		props   map[string]string
		schema  *connect.Schema
		value   any
		want    string
		wantNil bool
	}{
		{"string envelope", nil, connect.StringSchema, "hi", `{"schema":{"type":"string","optional":false},"payload":"hi"}`, false},
		{"optional null", nil, connect.OptionalStringSchema, nil, `{"schema":{"type":"string","optional":true},"payload":null}`, false},
		{"no schema no value", nil, nil, nil, "", true},
		{"bytes base64", nil, connect.BytesSchema, []byte("hi"), `{"schema":{"type":"bytes","optional":false},"payload":"aGk="}`, false},
		{"int32", nil, i32, int32(7), `{"schema":{"type":"int32","optional":false},"payload":7}`, false},
		{"double", nil, &connect.Schema{Type: connect.SchemaTypeFloat64}, 1.0, `{"schema":{"type":"double","optional":false},"payload":1.0}`, false},
		{"float", nil, &connect.Schema{Type: connect.SchemaTypeFloat32}, float32(1.1), `{"schema":{"type":"float","optional":false},"payload":1.1}`, false},
		{"boolean", nil, connect.BooleanSchema, true, `{"schema":{"type":"boolean","optional":false},"payload":true}`, false},
		{"array", nil, &connect.Schema{Type: connect.SchemaTypeArray, ValueSchema: i32}, []any{int32(1), int32(2)},
			`{"schema":{"type":"array","items":{"type":"int32","optional":false},"optional":false},"payload":[1,2]}`, false},
		{"struct", nil, &connect.Schema{Type: connect.SchemaTypeStruct, Name: "S", Fields: []connect.Field{{Name: "a", Schema: i32}, {Name: "b", Schema: connect.OptionalStringSchema}}},
			map[string]any{"a": int32(1), "b": "x"},
			`{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"a"},{"type":"string","optional":true,"field":"b"}],"optional":false,"name":"S"},"payload":{"a":1,"b":"x"}}`, false},
		{"schemaless map", nil, nil, map[string]any{"b": "<&>", "a": int64(1)}, `{"schema":null,"payload":{"a":1,"b":"<&>"}}`, false},
		{"schemaless non-string keys", nil, nil, map[int]string{2: "x"}, `{"schema":null,"payload":[[2,"x"]]}`, false},
		{"plain", map[string]string{"schemas.enable": "false"}, connect.StringSchema, "hi", `"hi"`, false},
		{"plain map", map[string]string{"schemas.enable": "false"}, nil, map[string]any{"k": []any{true, nil}}, `{"k":[true,null]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &JSON{}
			mustConfigure(t, c, tt.props, false)
			got, err := c.FromConnectData("t", tt.schema, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantNil != (got == nil) || string(got) != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	i64 := connect.Int64Schema
	schemas := []struct {
		schema *connect.Schema
		value  any
	}{
		{connect.StringSchema, "héllo\n\"x\""},
		{connect.BytesSchema, []byte{0, 1, 255}},
		{i64, int64(-5)},
		{&connect.Schema{Type: connect.SchemaTypeInt8}, int8(3)},
		{&connect.Schema{Type: connect.SchemaTypeFloat64}, 2.5},
		{connect.BooleanSchema, false},
		{&connect.Schema{Type: connect.SchemaTypeMap, KeySchema: connect.StringSchema, ValueSchema: i64}, map[string]any{"a": int64(1)}},
		{&connect.Schema{Type: connect.SchemaTypeMap, KeySchema: i64, ValueSchema: connect.StringSchema}, map[any]any{int64(4): "four"}},
		{&connect.Schema{Type: connect.SchemaTypeArray, Optional: true, ValueSchema: connect.StringSchema}, []any{"a", "b"}},
	}
	c := &JSON{}
	mustConfigure(t, c, nil, true)
	for _, tt := range schemas {
		data, err := c.FromConnectData("t", tt.schema, tt.value)
		if err != nil {
			t.Fatalf("%v: %v", tt.value, err)
		}
		s, v, err := c.ToConnectData("t", data)
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if !reflect.DeepEqual(v, tt.value) || s.Type != tt.schema.Type || s.Optional != tt.schema.Optional {
			t.Errorf("%s: got %#v (%+v), want %#v", data, v, s, tt.value)
		}
	}
}

func TestJSONRead(t *testing.T) {
	c := &JSON{}
	mustConfigure(t, c, nil, false)
	if _, _, err := c.ToConnectData("t", []byte(`{"a":1}`)); err == nil || !strings.HasPrefix(err.Error(), `JsonConverter with schemas.enable requires "schema" and "payload" fields`) {
		t.Errorf("plain JSON with schemas.enable: %v", err)
	}
	if s, v, err := c.ToConnectData("t", nil); s != nil || v != nil || err != nil {
		t.Errorf("tombstone = %v %v %v", s, v, err)
	}
	if _, v, err := c.ToConnectData("t", []byte(`{"schema":null,"payload":{"n":1,"f":1.5}}`)); err != nil ||
		!reflect.DeepEqual(v, map[string]any{"n": int64(1), "f": 1.5}) {
		t.Errorf("schemaless envelope = %#v, %v", v, err)
	}
	if _, _, err := c.ToConnectData("t", []byte(`{"schema":{"type":"string","optional":false},"payload":null}`)); err == nil ||
		err.Error() != "Invalid null value for required STRING field" {
		t.Errorf("required null: %v", err)
	}
	plain := &JSON{}
	mustConfigure(t, plain, map[string]string{"schemas.enable": "false"}, false)
	if s, v, err := plain.ToConnectData("t", []byte(`[1,"x",true]`)); s != nil || err != nil || !reflect.DeepEqual(v, []any{int64(1), "x", true}) {
		t.Errorf("plain read = %v %#v %v", s, v, err)
	}
	// Kafka reads a JSON fraction as a BigDecimal, which has no -0.
	if _, v, err := plain.ToConnectData("t", []byte(`-0.0`)); err != nil || math.Signbit(v.(float64)) {
		t.Errorf("-0.0 read as %v, %v", v, err)
	}
	if _, v, err := c.ToConnectData("t", []byte(`{"schema":{"type":"float","optional":false},"payload":-0.0}`)); err != nil || math.Signbit(float64(v.(float32))) {
		t.Errorf("-0.0 as a float read as %v, %v", v, err)
	}
	// A Go map cannot be keyed by an array: an error, not a panic.
	arrayKeys := `{"schema":{"type":"map","optional":false,"keys":{"type":"array","items":{"type":"int32","optional":false},"optional":false},` +
		`"values":{"type":"int32","optional":false}},"payload":[[[1,2],1]]}`
	if _, _, err := c.ToConnectData("t", []byte(arrayKeys)); err == nil || err.Error() != "Sluice does not support maps keyed by ARRAY values" {
		t.Errorf("array keys: %v", err)
	}
}

func TestJSONConfigure(t *testing.T) {
	err := (&JSON{}).Configure(map[string]string{"schemas.enable": "maybe"}, false)
	if err == nil || err.Error() != "Invalid value maybe for configuration schemas.enable: Expected value to be either true or false" {
		t.Errorf("err = %v", err)
	}
	err = (&JSON{}).Configure(map[string]string{"decimal.format": "hex"}, false)
	if err == nil || err.Error() != "Invalid value hex for configuration decimal.format: String must be one of (case insensitive): NUMERIC, BASE64" {
		t.Errorf("err = %v", err)
	}
}

func TestString(t *testing.T) {
	c := &String{}
	mustConfigure(t, c, nil, false)
	for _, v := range []any{"abc", "", "ü"} {
		b, err := c.FromConnectData("t", connect.StringSchema, v)
		if err != nil {
			t.Fatal(err)
		}
		s, got, err := c.ToConnectData("t", b)
		if err != nil || got != v || s != connect.OptionalStringSchema {
			t.Errorf("round trip %q = %q, %v", v, got, err)
		}
	}
	if b, _ := c.FromConnectData("t", nil, nil); b != nil {
		t.Errorf("null = %q", b)
	}
	if _, v, _ := c.ToConnectData("t", nil); v != nil {
		t.Errorf("null read = %v", v)
	}
	if b, _ := c.FromConnectData("t", nil, int64(42)); string(b) != "42" {
		t.Errorf("number = %q", b)
	}
	latin := &String{}
	mustConfigure(t, latin, map[string]string{"converter.encoding": "ISO-8859-1"}, true)
	if b, _ := latin.FromConnectData("t", nil, "é"); !bytes.Equal(b, []byte{0xe9}) {
		t.Errorf("latin1 = %x", b)
	}
	if err := (&String{}).Configure(map[string]string{"converter.encoding": "EBCDIC"}, false); err == nil {
		t.Errorf("unknown encoding accepted")
	}
}

func TestByteArray(t *testing.T) {
	c := ByteArray{}
	b, err := c.FromConnectData("t", connect.OptionalBytesSchema, []byte("x"))
	if err != nil || string(b) != "x" {
		t.Errorf("bytes = %q, %v", b, err)
	}
	if b, err := c.FromConnectData("t", connect.StringSchema, "héllo"); err != nil || string(b) != "héllo" {
		t.Errorf("string value = %q, %v", b, err)
	}
	if _, err := c.FromConnectData("t", &connect.Schema{Type: "int64"}, int64(1)); err == nil || err.Error() != "Invalid schema type for ByteArrayConverter: INT64" {
		t.Errorf("schema err = %v", err)
	}
	if _, err := c.FromConnectData("t", nil, 1.5); err == nil || err.Error() != "ByteArrayConverter is not compatible with objects of type float64" {
		t.Errorf("type err = %v", err)
	}
	if s, v, _ := c.ToConnectData("t", []byte("y")); s != connect.OptionalBytesSchema || string(v.([]byte)) != "y" {
		t.Errorf("read = %v %v", s, v)
	}
}

type lookup map[string]*connect.Plugin

func (l lookup) Lookup(name string) (*connect.Plugin, bool) { p, ok := l[name]; return p, ok }

func TestNew(t *testing.T) {
	reg := lookup{}
	for _, p := range Plugins() {
		reg[p.Class] = p
	}
	reg["JsonConverter"] = reg[JSONClass]
	props := map[string]string{
		"value.converter":                "JsonConverter",
		"value.converter.schemas.enable": "false",
		"key.converter.schemas.enable":   "nonsense: not used by the string converter",
	}
	v, err := New(reg, props, StringClass, false)
	if err != nil {
		t.Fatal(err)
	}
	if j, ok := v.(*JSON); !ok || !j.schemasDisabled {
		t.Errorf("value converter = %#v", v)
	}
	k, err := New(reg, props, StringClass, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := k.(*String); !ok {
		t.Errorf("key converter = %#v", k)
	}
	if _, err := New(reg, map[string]string{"key.converter": "Nope"}, StringClass, true); err == nil ||
		err.Error() != "Failed to find any class that implements Converter and which name matches Nope" {
		t.Errorf("unknown err = %v", err)
	}
	if _, err := New(reg, nil, "", true); err == nil {
		t.Errorf("no converter accepted")
	}
	if _, err := New(reg, map[string]string{"value.converter.schemas.enable": "x"}, JSONClass, false); err == nil {
		t.Errorf("bad prefixed prop accepted")
	}
}

// A schema's default is written after its parameters (Jackson's order, as
// Debezium's source.snapshot shows it) and stands in for a null unless
// replace.null.with.default=false.
func TestJSONDefault(t *testing.T) {
	v1 := int32(1)
	snapshot := &connect.Schema{Type: connect.SchemaTypeString, Optional: true, Name: "io.debezium.data.Enum", Version: &v1,
		Parameters: map[string]string{"allowed": "true,false"}, Default: "false"}
	s := &connect.Schema{Type: connect.SchemaTypeStruct, Fields: []connect.Field{{Name: "snapshot", Schema: snapshot}}}
	const schemaJSON = `{"type":"struct","fields":[{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,` +
		`"parameters":{"allowed":"true,false"},"default":"false","field":"snapshot"}],"optional":false}`
	for _, tt := range []struct {
		props   map[string]string
		payload string
		read    any
	}{
		{nil, `{"snapshot":"false"}`, "false"},
		{map[string]string{"replace.null.with.default": "false"}, `{"snapshot":null}`, nil},
	} {
		c := &JSON{}
		mustConfigure(t, c, tt.props, false)
		got, err := c.FromConnectData("t", s, map[string]any{"snapshot": nil})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"schema":` + schemaJSON + `,"payload":` + tt.payload + `}`; string(got) != want {
			t.Errorf("%v: got %s, want %s", tt.props, got, want)
		}
		rs, rv, err := c.ToConnectData("t", []byte(`{"schema":`+schemaJSON+`,"payload":{"snapshot":null}}`))
		if err != nil {
			t.Fatal(err)
		}
		if d := rs.Fields[0].Schema.Default; d != "false" {
			t.Errorf("read default = %#v", d)
		}
		if got := rv.(map[string]any)["snapshot"]; got != tt.read {
			t.Errorf("%v: null read as %#v, want %#v", tt.props, got, tt.read)
		}
	}
	// A default that does not fit its schema is an error, not broken JSON.
	bad := &connect.Schema{Type: connect.SchemaTypeInt32, Default: "x"}
	if _, err := (&JSON{}).FromConnectData("t", bad, int32(1)); err == nil {
		t.Error("a string default on an int32 schema was written")
	}
}
