package values

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/connect"
)

func TestUnsupportedAndOmittedTypes(t *testing.T) {
	composite := Type{Name: "address", Modifier: -1, Kind: Kind(99)}
	tests := []struct {
		typ  Type
		want error
	}{
		{base("geometry"), ErrUnsupported},
		{base("vector"), ErrUnsupported},
		{base("box"), ErrOmitted},
		{base("pg_lsn"), ErrOmitted},
		{base("tsquery"), ErrOmitted},
		{arrayOf(base("money")), ErrOmitted},
		{arrayOf(base("interval")), ErrOmitted},
		{arrayOf(base("xml")), ErrOmitted},
		{arrayOf(domain("posint", base("int4"), -1)), ErrOmitted},
		{composite, ErrOmitted},
	}
	for _, tt := range tests {
		t.Run(tt.typ.Name, func(t *testing.T) {
			_, err := Schema(Column{Name: "the_col", Type: tt.typ, Optional: true}, DefaultModes())
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), "the_col") || !strings.Contains(err.Error(), tt.typ.Name) {
				t.Errorf("error %q names neither the column nor the type", err)
			}
		})
	}
	_, err := Schema(Column{Name: "d", Type: Type{Name: "broken", Kind: KindDomain, Modifier: -1}}, DefaultModes())
	if err == nil {
		t.Error("a domain without a base type was accepted")
	}
}

func TestValueErrors(t *testing.T) {
	tests := []struct {
		name string
		col  Column
		m    Modes
		text string
		want string
	}{
		{"NaN in precise mode", Column{Name: "n", Type: base("numeric"), Optional: true}, DefaultModes(), "NaN", "decimal.handling.mode=precise"},
		{"Infinity in precise fixed scale", Column{Name: "n", Type: mod(base("numeric"), numericMod(10, 2)), Optional: true}, DefaultModes(), "Infinity", "special value"},
		{"not an integer", Column{Name: "i", Type: base("int2"), Optional: true}, DefaultModes(), "40000", "i of type int2"},
		{"escape-format bytea", Column{Name: "b", Type: base("bytea"), Optional: true}, DefaultModes(), `abc\000`, "bytea_output=hex"},
		{"German date", Column{Name: "d", Type: base("date"), Optional: true}, DefaultModes(), "15.01.2024", "not an ISO date"},
		{"bad array", Column{Name: "a", Type: arrayOf(base("int4")), Optional: true}, DefaultModes(), "{1,2", "array"},
		{"2-D array", Column{Name: "a", Type: arrayOf(base("int4")), Optional: true}, DefaultModes(), "{{1,2},{3,4}}", "multi-dimensional"},
		{"bad element", Column{Name: "a", Type: arrayOf(base("int4")), Optional: true}, DefaultModes(), "{1,x}", "element 2"},
		{"NaN in numeric[] in string mode", Column{Name: "a", Type: arrayOf(base("numeric")), Optional: true},
			withModes(func(m *Modes) { m.Decimal = DecimalString }), "{1,NaN}", "whole array"},
		{"infinity in timestamp[]", Column{Name: "a", Type: arrayOf(base("timestamp")), Optional: true}, DefaultModes(), "{infinity}", "infinite element"},
		{"bit[]", Column{Name: "a", Type: arrayOf(mod(base("bit"), 3)), Optional: true}, DefaultModes(), "{101}", "writes null"},
		{"bad hstore", Column{Name: "h", Type: base("hstore"), Optional: true}, DefaultModes(), `"a"=>`, "hstore"},
		{"timestamp out of nanosecond range", Column{Name: "t", Type: base("timestamp"), Optional: true},
			withModes(func(m *Modes) { m.Time = TimeNanoseconds }), "2300-01-01 00:00:00", "int64 epoch nanoseconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Value(tt.col, tt.m, &tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestNotNullWithoutValue: a NOT NULL column missing from a delete's old
// row is Debezium's fallback (or the column's default).
func TestNotNullWithoutValue(t *testing.T) {
	def := DefaultModes()
	tests := []struct {
		name string
		col  Column
		m    Modes
		want string
	}{
		{"int4", Column{Name: "c", Type: base("int4")}, def, `0`},
		{"int2", Column{Name: "c", Type: base("int2")}, def, `0`},
		{"text", Column{Name: "c", Type: base("text")}, def, `""`},
		{"bool", Column{Name: "c", Type: base("bool")}, def, `false`},
		{"float8", Column{Name: "c", Type: base("float8")}, def, `0.0`},
		{"numeric(5,2)", Column{Name: "c", Type: mod(base("numeric"), numericMod(5, 2))}, def, `"AA=="`},
		{"numeric", Column{Name: "c", Type: base("numeric")}, def, `{"scale":0,"value":"AA=="}`},
		{"numeric(5,2) string", Column{Name: "c", Type: mod(base("numeric"), numericMod(5, 2))}, withModes(func(m *Modes) { m.Decimal = DecimalString }), `"0.00"`},
		{"money string", Column{Name: "c", Type: base("money")}, withModes(func(m *Modes) { m.Decimal = DecimalString }), `"0.00"`},
		{"timestamptz", Column{Name: "c", Type: base("timestamptz")}, def, `"1970-01-01T00:00:00Z"`},
		{"timetz", Column{Name: "c", Type: base("timetz")}, def, `"00:00:00Z"`},
		{"interval string", Column{Name: "c", Type: base("interval")}, withModes(func(m *Modes) { m.Interval = IntervalString }), `"P0Y0M0DT0H0M0S"`},
		{"time(3)", Column{Name: "c", Type: mod(base("time"), 3)}, def, `0`},
		{"int4[]", Column{Name: "c", Type: arrayOf(base("int4"))}, def, `[]`},
		{"hstore", Column{Name: "c", Type: base("hstore")}, def, `"{}"`},
		{"point", Column{Name: "c", Type: base("point")}, def, `{"x":0.0,"y":0.0,"wkb":"AQEAAAAAAAAAAAAAAAAAAAAAAAAA","srid":null}`},
		{"serial takes its default", Column{Name: "c", Type: base("int4"), Default: str("nextval('t_c_seq'::regclass)")}, def, `0`},
		{"literal default", Column{Name: "c", Type: base("int8"), Default: str("'42'::bigint")}, def, `42`},
		{"text default", Column{Name: "c", Type: base("text"), Default: str("'n/a'::text")}, def, `"n/a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jsonOf(t, tt.col, tt.m, nil, false); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	def := DefaultModes()
	tests := []struct {
		name    string
		typ     Type
		expr    string
		m       Modes
		want    any
		present bool
	}{
		{"serial", base("int4"), "nextval('t_id_seq'::regclass)", def, int32(0), true},
		{"negative int", base("int4"), "'-1'::integer", def, int32(-1), true},
		{"bare int", base("int2"), "7", def, int16(7), true},
		{"bool", base("bool"), "true", def, true, true},
		{"float8", base("float8"), "1.5", def, 1.5, true},
		{"numeric rescaled", mod(base("numeric"), numericMod(6, 2)), "1.5", def, []byte{0x00, 0x96}, true},
		{"numeric too precise", mod(base("numeric"), numericMod(6, 2)), "1.555", def, nil, false},
		{"variable numeric is a struct", base("numeric"), "1.5", def, nil, false},
		{"variable numeric as string", base("numeric"), "1.50", withModes(func(m *Modes) { m.Decimal = DecimalString }), "1.50", true},
		{"varchar", mod(base("varchar"), 14), "'it''s'::character varying", def, "it", true},
		{"NULL cast", base("text"), "NULL::text", def, nil, false},
		{"json function", base("jsonb"), "jsonb_build_object('a', 1)", def, "{}", true},
		{"uuid", base("uuid"), "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid", def, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", true},
		{"uuid generated", base("uuid"), "gen_random_uuid()", def, "00000000-0000-0000-0000-000000000000", true},
		{"date literal", base("date"), "'2024-02-29'::date", def, int32(19782), true},
		{"date now", base("date"), "CURRENT_DATE", def, int32(0), true},
		{"time", base("time"), "'12:00:00'::time without time zone", def, int64(43200000000), true},
		{"timestamp now", base("timestamp"), "now()", def, int64(0), true},
		{"timestamp literal", mod(base("timestamp"), 3), "'2024-01-01 00:00:01.5'::timestamp without time zone", def, int64(1704067201500), true},
		{"timestamptz now", base("timestamptz"), "now()", def, "1970-01-01T00:00:00.000000Z", true},
		{"interval", base("interval"), "'01:00:00'::interval", def, int64(3600000000), true},
		{"bit(1)", mod(base("bit"), 1), `B'1'::"bit"`, def, true, true},
		{"bit(3)", mod(base("bit"), 3), `'101'::"bit"`, def, []byte{5}, true},
		{"enum", enum("mood", "sad", "ok"), "'ok'::cdc.mood", def, "ok", true},
		{"enum cast to another type", enum("mood", "sad", "ok"), "'ok'::other", def, nil, false},
		{"domain has none", domain("posint", base("int4"), -1), "1", def, nil, false},
		{"money has none", base("money"), "'$1.00'::money", def, nil, false},
		{"array has none", arrayOf(base("int4")), "'{1}'::integer[]", def, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cv, err := Compile(Column{Name: "c", Type: tt.typ, Optional: true, Default: &tt.expr}, tt.m)
			if err != nil {
				t.Fatal(err)
			}
			got, present := cv.Default()
			if present != tt.present || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v (%v), want %#v (%v)", got, present, tt.want, tt.present)
			}
		})
	}
}

func TestSnapshotValue(t *testing.T) {
	date, err := Compile(Column{Name: "d", Type: base("date"), Optional: true}, DefaultModes())
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string][2]int32{
		"infinity":   {-2147472692, -622191234},
		"-infinity":  {-2147472691, -625821272},
		"2024-02-29": {19782, 19782},
	} {
		streamed, _ := date.Value(&text)
		snap, _ := date.SnapshotValue(&text)
		if streamed != want[0] || snap != want[1] {
			t.Errorf("%s: streamed %v, snapshot %v; want %v", text, streamed, snap, want)
		}
	}
	name, err := Compile(Column{Name: "n", Type: base("name"), Optional: true}, DefaultModes())
	if err != nil {
		t.Fatal(err)
	}
	text := "relname"
	if v, _ := name.Value(&text); v != nil {
		t.Errorf("a streamed name is %v, Debezium streams null", v)
	}
	if v, _ := name.SnapshotValue(&text); v != "relname" {
		t.Errorf("a snapshot name is %v, want its text", v)
	}
	// An array's dates reach Debezium through pgjdbc when streamed too.
	dates, err := Compile(Column{Name: "ds", Type: arrayOf(base("date")), Optional: true}, DefaultModes())
	if err != nil {
		t.Fatal(err)
	}
	arr := "{infinity,NULL}"
	if v, _ := dates.Value(&arr); !reflect.DeepEqual(v, []any{int32(-622191234), nil}) {
		t.Errorf("date[] streamed %v", v)
	}
}

func TestUnavailable(t *testing.T) {
	ph := []byte(DefaultUnavailablePlaceholder)
	def := DefaultModes()
	tests := []struct {
		name string
		typ  Type
		m    Modes
		want any
	}{
		{"text", base("text"), def, DefaultUnavailablePlaceholder},
		{"jsonb", base("jsonb"), def, DefaultUnavailablePlaceholder},
		{"bytea", base("bytea"), def, ph},
		{"bytea hex", base("bytea"), withModes(func(m *Modes) { m.Binary = BinaryHex }), DefaultUnavailablePlaceholder},
		{"bytea base64", base("bytea"), withModes(func(m *Modes) { m.Binary = BinaryBase64 }), nil},
		{"text[]", arrayOf(base("text")), def, []any{DefaultUnavailablePlaceholder}},
		{"int4[]", arrayOf(base("int4")), def, []any{int32('_'), int32('_'), int32('d')}},
		{"uuid[]", arrayOf(base("uuid")), def, []any{"b68a35a7-17ad-35b3-af2a-ae46edb4545a"}},
		{"hstore", base("hstore"), def, `{"__debezium_unavailable_value":"__debezium_unavailable_value"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cv, err := Compile(Column{Name: "c", Type: tt.typ, Optional: true}, tt.m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := cv.Unavailable(ph)
			if err != nil {
				t.Fatal(err)
			}
			if arr, ok := got.([]any); ok && tt.name == "int4[]" {
				got = arr[:3] // the placeholder's first bytes, as numbers
				if len(arr) != len(ph) {
					t.Errorf("%d elements, want one per placeholder byte (%d)", len(arr), len(ph))
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
	for _, c := range []struct {
		typ Type
		m   Modes
	}{
		{base("numeric"), def},
		{base("int4"), def},
		{arrayOf(base("float8")), def},
		{arrayOf(base("date")), withModes(func(m *Modes) { m.Time = TimeConnect })},
		{base("money"), withModes(func(m *Modes) { m.Decimal = DecimalString })},
		{arrayOf(base("bytea")), withModes(func(m *Modes) { m.Binary = BinaryHex })},
	} {
		cv, err := Compile(Column{Name: "n", Type: c.typ, Optional: true}, c.m)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := cv.Unavailable(ph); err == nil {
			t.Errorf("%s: placeholder %v accepted; Debezium's does not fit the schema", c.typ.Name, v)
		}
	}
}

// TestHstoreJSONOrder: Debezium writes an hstore's JSON in the iteration
// order of a java.util.HashMap (checked against Java 17 for these keys,
// which include a hash collision, "Aa" and "BB", and force a resize).
func TestHstoreJSONOrder(t *testing.T) {
	keys := []string{"zeta", "alpha", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11", "k12", "key with space", "ü", "日本", "Aa", "BB"}
	javaOrder := []string{"zeta", "Aa", "BB", "k1", "k2", "k3", "k4", "k5", "k11", "k6", "k10", "日本", "k7", "k8", "k12", "k9", "key with space", "alpha", "ü"}
	var pairs []hstorePair
	for _, k := range keys {
		pairs = append(pairs, hstorePair{key: k})
	}
	var got []string
	for _, p := range javaHashOrder(pairs) {
		got = append(got, p.key)
	}
	if !reflect.DeepEqual(got, javaOrder) {
		t.Errorf("got  %q\nwant %q", got, javaOrder)
	}
}

// TestHstoreAsDebeziumWritesIt: PostgreSQL's text of a 20-key hstore and
// the JSON Debezium 3.6.1's converter made of it.
func TestHstoreAsDebeziumWritesIt(t *testing.T) {
	text := `"a"=>NULL, "b"=>"2", "Aa"=>"x", "BB"=>"y", "k1"=>"1", "k2"=>"2", "k3"=>"3", "k4"=>"4", "k5"=>"5", "k6"=>"6", ` +
		`"k7"=>"7", "k8"=>"8", "k9"=>"9", "ü"=>"日本", "k10"=>"10", "k11"=>"11", "k12"=>"12", "k13"=>"13", "q\"k"=>"v\\w", "zeta"=>"z"`
	want := `{"Aa":"x","BB":"y","zeta":"z","a":null,"b":"2","k1":"1","k2":"2","k3":"3","k4":"4","k5":"5","k11":"11","k6":"6",` +
		`"k10":"10","k7":"7","k13":"13","k8":"8","k12":"12","k9":"9","q\"k":"v\\w","ü":"日本"}`
	got, err := Value(Column{Name: "h", Type: base("hstore"), Optional: true}, DefaultModes(), &text)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

// TestSchemaIsOptionalPerColumn: the schema's optionality is the column's,
// and converters do not share schemas.
func TestSchemaIsOptionalPerColumn(t *testing.T) {
	a, _ := Schema(Column{Name: "a", Type: base("date"), Optional: true}, DefaultModes())
	b, _ := Schema(Column{Name: "b", Type: base("date")}, DefaultModes())
	if !a.Optional || b.Optional || a == b {
		t.Errorf("optional %v and %v, shared %v", a.Optional, b.Optional, a == b)
	}
	if b.Type != connect.SchemaTypeInt32 || b.Name != "io.debezium.time.Date" || *b.Version != 1 {
		t.Errorf("date schema %+v", b)
	}
}
