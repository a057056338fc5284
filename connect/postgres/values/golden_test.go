package values

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sluice-io/sluice/connect/converters"
)

// goldenDir is where the capture of Debezium 3.6.1's records lives (see
// connect/postgres/testdata/debezium/schema.sql); SLUICE_DEBEZIUM_GOLDEN
// points elsewhere.
func goldenDir(t *testing.T) string {
	dir := os.Getenv("SLUICE_DEBEZIUM_GOLDEN")
	if dir == "" {
		dir = filepath.Join("..", "testdata", "debezium")
	}
	if _, err := os.Stat(filepath.Join(dir, "schema.sql")); err != nil {
		t.Skipf("no Debezium golden files in %s (set SLUICE_DEBEZIUM_GOLDEN to a capture): %v", dir, err)
	}
	return dir
}

// allTypes is cdc.all_types of schema.sql as the catalog describes it.
var allTypes = func() []Column {
	mood := enum("mood", "sad", "ok", "happy")
	serialDefault := "nextval('cdc.all_types_c_serial_seq'::regclass)"
	cols := []Column{
		{Name: "id", Type: base("int4")},
		{Name: "c_int2", Type: base("int2")},
		{Name: "c_int4", Type: base("int4")},
		{Name: "c_int8", Type: base("int8")},
		{Name: "c_serial", Type: base("int4"), Default: &serialDefault},
		{Name: "c_numeric", Type: mod(base("numeric"), numericMod(10, 2))},
		{Name: "c_numeric_any", Type: base("numeric")},
		{Name: "c_float4", Type: base("float4")},
		{Name: "c_float8", Type: base("float8")},
		{Name: "c_bool", Type: base("bool")},
		{Name: "c_text", Type: base("text")},
		{Name: "c_varchar", Type: mod(base("varchar"), 24)},
		{Name: "c_char", Type: mod(base("bpchar"), 9)},
		{Name: "c_bytea", Type: base("bytea")},
		{Name: "c_date", Type: base("date")},
		{Name: "c_time", Type: base("time")},
		{Name: "c_time3", Type: mod(base("time"), 3)},
		{Name: "c_timetz", Type: base("timetz")},
		{Name: "c_timestamp", Type: base("timestamp")},
		{Name: "c_timestamp3", Type: mod(base("timestamp"), 3)},
		{Name: "c_timestamptz", Type: base("timestamptz")},
		{Name: "c_interval", Type: base("interval")},
		{Name: "c_json", Type: base("json")},
		{Name: "c_jsonb", Type: base("jsonb")},
		{Name: "c_uuid", Type: base("uuid")},
		{Name: "c_xml", Type: base("xml")},
		{Name: "c_int4_array", Type: arrayOf(base("int4"))},
		{Name: "c_text_array", Type: arrayOf(base("text"))},
		{Name: "c_enum", Type: mood},
		{Name: "c_domain_int", Type: domain("positive_int", base("int4"), -1)},
		{Name: "c_domain_numeric", Type: domain("amount", base("numeric"), numericMod(8, 3))},
		{Name: "c_inet", Type: base("inet")},
		{Name: "c_cidr", Type: base("cidr")},
		{Name: "c_macaddr", Type: base("macaddr")},
		{Name: "c_macaddr8", Type: base("macaddr8")},
		{Name: "c_money", Type: base("money")},
		{Name: "c_bit1", Type: mod(base("bit"), 1)},
		{Name: "c_bit4", Type: mod(base("bit"), 4)},
		{Name: "c_varbit", Type: base("varbit")},
	}
	for i := range cols {
		cols[i].Optional = cols[i].Name != "id" && cols[i].Name != "c_serial"
	}
	return cols
}()

// allTypesText is what PostgreSQL prints (with the session settings the
// package documents) for schema.sql's rows of cdc.all_types, by id; a
// missing column is NULL.
var allTypesText = map[int]map[string]string{
	1: {"id": "1", "c_int2": "12345", "c_int4": "1234567", "c_int8": "123456789012", "c_serial": "1",
		"c_numeric": "12345678.91", "c_numeric_any": "3.14159265358979323846264338327950288", "c_float4": "1.5",
		"c_float8": "2.718281828459045", "c_bool": "t", "c_text": "hello", "c_varchar": "varchar text", "c_char": "abc  ",
		"c_bytea": `\xdeadbeef`, "c_date": "2024-02-29", "c_time": "13:45:30.123456", "c_time3": "13:45:30.123",
		"c_timetz": "13:45:30.5+02", "c_timestamp": "2024-02-29 13:45:30.123456", "c_timestamp3": "2024-02-29 13:45:30.123",
		"c_timestamptz": "2024-02-29 11:45:30.123456+00", "c_interval": "1 year 2 mons 3 days 04:05:06.789",
		"c_json": `{"a": 1, "b": [true, null]}`, "c_jsonb": `{"a": 1, "b": [true, null]}`,
		"c_uuid": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "c_xml": `<doc><item n="1">x &amp; y</item></doc>`,
		"c_int4_array": "{1,2,3}", "c_text_array": `{a,"b c","d,e"}`, "c_enum": "happy", "c_domain_int": "42",
		"c_domain_numeric": "12345.678", "c_inet": "192.168.1.1", "c_cidr": "10.0.0.0/8", "c_macaddr": "08:00:2b:01:02:03",
		"c_macaddr8": "08:00:2b:01:02:03:04:05", "c_money": "$1,234.56", "c_bit1": "1", "c_bit4": "1010", "c_varbit": "10110"},
	2: {"id": "2", "c_serial": "2"},
	3: {"id": "3", "c_int2": "32767", "c_int4": "2147483647", "c_int8": "9223372036854775807", "c_serial": "3",
		"c_numeric": "99999999.99", "c_numeric_any": "NaN", "c_float4": "NaN", "c_float8": "Infinity", "c_bool": "f",
		"c_text": `héllo wörld ☃ 😀 日本語 "quoted" \ back`, "c_varchar": "", "c_char": "ü    ", "c_bytea": `\x`,
		"c_date": "infinity", "c_time": "24:00:00", "c_time3": "23:59:59.999", "c_timetz": "23:59:59.999999-12",
		"c_timestamp": "infinity", "c_timestamp3": "294276-12-31 23:59:59.999", "c_timestamptz": "infinity",
		"c_interval": "-1 years -2 mons -3 days -04:05:06.789", "c_json": "[]", "c_jsonb": "{}",
		"c_uuid": "00000000-0000-0000-0000-000000000000", "c_xml": "<a/>", "c_int4_array": "{}", "c_text_array": "{NULL,x,NULL}",
		"c_enum": "sad", "c_domain_int": "2147483647", "c_domain_numeric": "99999.999", "c_inet": "::1", "c_cidr": "2001:db8::/32",
		"c_macaddr": "ff:ff:ff:ff:ff:ff", "c_macaddr8": "ff:ff:ff:ff:ff:ff:ff:ff", "c_money": "$92,233,720,368,547,758.07",
		"c_bit1": "0", "c_bit4": "0000", "c_varbit": ""},
	4: {"id": "4", "c_int2": "-32768", "c_int4": "-2147483648", "c_int8": "-9223372036854775808", "c_serial": "4",
		"c_numeric": "-99999999.99", "c_numeric_any": "-Infinity", "c_float4": "-Infinity", "c_float8": "NaN", "c_bool": "f",
		"c_text": "line\nbreak\ttab", "c_varchar": "exactly twenty chars", "c_char": "abcde", "c_bytea": `\x00ff`,
		"c_date": "-infinity", "c_time": "00:00:00", "c_time3": "00:00:00", "c_timetz": "00:00:00+14",
		"c_timestamp": "-infinity", "c_timestamp3": "0001-01-01 00:00:00", "c_timestamptz": "-infinity",
		"c_interval": "-178000000 years", "c_json": "null", "c_jsonb": `"text"`, "c_uuid": "ffffffff-ffff-ffff-ffff-ffffffffffff",
		"c_xml": "text only", "c_int4_array": "{1,NULL,3}", "c_text_array": "{}", "c_enum": "ok", "c_domain_int": "1",
		"c_domain_numeric": "-99999.999", "c_inet": "0.0.0.0", "c_cidr": "0.0.0.0/0", "c_macaddr": "00:00:00:00:00:00",
		"c_macaddr8": "00:00:00:00:00:00:00:00", "c_money": "-$92,233,720,368,547,758.08", "c_bit1": "1", "c_bit4": "1111", "c_varbit": "1"},
	5: {"id": "5", "c_int2": "0", "c_int4": "0", "c_int8": "0", "c_serial": "5", "c_numeric": "NaN", "c_numeric_any": "Infinity",
		"c_float4": "Infinity", "c_float8": "-Infinity", "c_bool": "t", "c_text": " ", "c_varchar": "x", "c_char": "     ",
		"c_bytea": `\x00`, "c_date": "1970-01-01", "c_time": "00:00:00.000001", "c_time3": "12:00:00", "c_timetz": "12:00:00+00",
		"c_timestamp": "1970-01-01 00:00:00", "c_timestamp3": "1970-01-01 00:00:00", "c_timestamptz": "1970-01-01 00:00:00+00",
		"c_interval": "178000000 years", "c_json": "0", "c_jsonb": "150000000000000000000",
		"c_uuid": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "c_xml": "<doc/>", "c_int4_array": "{-1}", "c_text_array": `{""}`,
		"c_enum": "happy", "c_domain_int": "7", "c_domain_numeric": "0.000", "c_inet": "10.1.2.3/24", "c_cidr": "10.1.2.0/24",
		"c_macaddr": "01:02:03:04:05:06", "c_macaddr8": "01:02:03:04:05:06:07:08", "c_money": "$0.00", "c_bit1": "0",
		"c_bit4": "0101", "c_varbit": "0000000011"},
}

// rowText is the text of a row after changes.sql's statements: a snapshot
// row (op r) as inserted, a streamed insert (ids 101–105) a copy of one,
// an update (op u) with changes.sql's new values.
func rowText(op string, id int) (map[string]string, bool) {
	baseID := id
	if id > 100 {
		baseID = id - 100
	}
	if id == 20 {
		baseID = 4 // the primary-key update's new row
	}
	row, ok := allTypesText[baseID]
	if !ok {
		return nil, false
	}
	out := map[string]string{}
	for k, v := range row {
		out[k] = v
	}
	out["id"] = jsonInt(id)
	if op != "u" {
		return out, true
	}
	set := map[int]map[string]*string{
		1: {"c_text": str("updated"), "c_int4": str("1234568"), "c_numeric_any": str("NaN"), "c_date": str("-infinity")},
		2: {"c_int2": str("1"), "c_jsonb": str(`{"now": "set"}`), "c_int4_array": str("{NULL}"), "c_interval": str("-1 days")},
		3: {"c_text": nil, "c_float8": nil, "c_timestamptz": nil},
	}[id]
	for k, v := range set {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = *v
		}
	}
	return out, true
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

// goldenConfigs are the capture's connector configs (the directories) and
// the modes they set.
var goldenConfigs = map[string]Modes{
	"a-defaults": DefaultModes(),
	"b-double-adaptive-micros": withModes(func(m *Modes) {
		m.Decimal, m.Time, m.Interval, m.Binary = DecimalDouble, TimeAdaptiveTimeMicroseconds, IntervalString, BinaryBase64
	}),
	"c-string-connect-hex": withModes(func(m *Modes) { m.Decimal, m.Time, m.Binary = DecimalString, TimeConnect, BinaryHex }),
}

// decodeJSON decodes keeping numbers' text, so 1.0 and 1 differ as they do
// on the wire.
func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return v
}

// TestDebeziumGoldenAllTypes compares the schema and every value of
// cdc.all_types that Debezium 3.6.1 wrote (snapshot, streamed inserts,
// updates, key-only old rows of deletes) with this package's, through the
// JsonConverter, under each captured config.
func TestDebeziumGoldenAllTypes(t *testing.T) {
	dir := goldenDir(t)
	for cfg, m := range goldenConfigs {
		t.Run(cfg, func(t *testing.T) {
			f, err := os.Open(filepath.Join(dir, cfg, "cdc.all_types.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			convs := map[string]*Converter{}
			for _, c := range allTypes {
				if convs[c.Name], err = Compile(c, m); err != nil {
					t.Fatal(err)
				}
			}
			checked := 0
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				var rec struct {
					Value *struct {
						Schema  map[string]any             `json:"schema"`
						Payload map[string]json.RawMessage `json:"payload"`
					} `json:"value"`
				}
				if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
					t.Fatal(err)
				}
				if rec.Value == nil {
					continue // a tombstone
				}
				checkSchemas(t, rec.Value.Schema, convs)
				var op string
				_ = json.Unmarshal(rec.Value.Payload["op"], &op)
				for _, side := range []string{"before", "after"} {
					if string(rec.Value.Payload[side]) == "null" || rec.Value.Payload[side] == nil {
						continue
					}
					row := decodeJSON(t, rec.Value.Payload[side]).(map[string]any)
					id, _ := row["id"].(json.Number).Int64()
					text, ok := rowText(op, int(id))
					if side == "before" {
						// REPLICA IDENTITY DEFAULT: the old row has its key only.
						text, ok = map[string]string{"id": jsonInt(int(id))}, true
					}
					if !ok {
						t.Errorf("%s %s of id %d: no text for this row", op, side, id)
						continue
					}
					for _, c := range allTypes {
						var in *string
						if v, ok := text[c.Name]; ok {
							in = &v
						}
						got := renderValue(t, convs[c.Name], in, op == "r")
						if want := row[c.Name]; !reflect.DeepEqual(got, want) {
							t.Errorf("%s %s id %d %s (%v): got %#v, want %#v", op, side, id, c.Name, deref(in), got, want)
						}
						checked++
					}
				}
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			if checked < 500 {
				t.Fatalf("compared only %d values", checked)
			}
			t.Logf("%d values compared", checked)
		})
	}
}

// checkSchemas compares the envelope's after-field schemas with Compile's.
func checkSchemas(t *testing.T, envelope map[string]any, convs map[string]*Converter) {
	t.Helper()
	for _, f := range envelope["fields"].([]any) {
		after := f.(map[string]any)
		if after["field"] != "after" {
			continue
		}
		for _, cf := range after["fields"].([]any) {
			want := cf.(map[string]any)
			name := want["field"].(string)
			cv := convs[name]
			if cv == nil {
				t.Errorf("golden column %s is not in allTypes", name)
				continue
			}
			delete(want, "field")
			if d, ok := want["default"]; ok {
				got, has := cv.Default()
				if !has || mustJSON(got) != mustJSON(d) {
					t.Errorf("%s default: got %v (%v), want %v", name, got, has, d)
				}
			} else if got, has := cv.Default(); has {
				t.Errorf("%s default: got %v, Debezium has none", name, got)
			}
			conv := &converters.JSON{}
			if err := conv.Configure(nil, false); err != nil {
				t.Fatal(err)
			}
			b, err := conv.FromConnectData("t", cv.Schema(), nil)
			if err != nil {
				// A required field: render it with its zero value.
				b, err = conv.FromConnectData("t", cv.Schema(), cv.spec.zero)
			}
			if err != nil {
				t.Fatal(err)
			}
			var env struct{ Schema any }
			if err := json.Unmarshal(b, &env); err != nil {
				t.Fatal(err)
			}
			if gotJSON, wantJSON := mustJSON(env.Schema), mustJSON(want); gotJSON != wantJSON {
				t.Errorf("%s schema:\n got %s\nwant %s", name, gotJSON, wantJSON)
			}
		}
	}
}

// mustJSON re-encodes decoded JSON with sorted keys, for comparing.
func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// renderValue is what the JsonConverter writes for a column's value, decoded
// again; a conversion Debezium fails on is null, as its default
// event.converting.failure.handling.mode=warn writes it.
func renderValue(t *testing.T, cv *Converter, text *string, snapshot bool) any {
	t.Helper()
	var v any
	var err error
	if snapshot {
		v, err = cv.SnapshotValue(text)
	} else {
		v, err = cv.Value(text)
	}
	if err != nil {
		return nil
	}
	return decodeJSON(t, []byte(jsonOfValue(t, cv.Schema(), v)))
}
