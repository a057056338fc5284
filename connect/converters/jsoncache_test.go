package converters

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-io/sluice/connect"
)

// cachedAndNot are two JsonConverters alike but for their schema caches:
// Kafka's default size, and none.
func cachedAndNot(t *testing.T, props map[string]string) (cached, uncached *JSON) {
	t.Helper()
	cached, uncached = &JSON{}, &JSON{}
	mustConfigure(t, cached, props, false)
	off := map[string]string{SchemasCacheSizeConfig: "0"}
	for k, v := range props {
		off[k] = v
	}
	mustConfigure(t, uncached, off, false)
	if cached.written == nil || cached.read == nil || uncached.written != nil || uncached.read != nil {
		t.Fatal("schemas.cache.size did not set the caches")
	}
	return cached, uncached
}

// sameWrite checks that c writes what ref (no cache) writes, on a miss and
// on the hit that follows.
func sameWrite(t *testing.T, c, ref *JSON, s *connect.Schema, v any) {
	t.Helper()
	want, wantErr := ref.FromConnectData("t", s, v)
	for _, pass := range []string{"miss", "hit"} {
		got, err := c.FromConnectData("t", s, v)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || string(got) != string(want) {
			t.Errorf("%s: got %s, %v; want %s, %v", pass, got, err, want, wantErr)
		}
	}
}

func int32p(v int32) *int32 { return &v }

func TestJSONSchemaCacheWritesTheSameBytes(t *testing.T) {
	i32 := &connect.Schema{Type: connect.SchemaTypeInt32}
	point := &connect.Schema{Type: connect.SchemaTypeStruct, Name: "io.debezium.data.geometry.Point", Version: int32p(1), Doc: "Geometry \"POINT\"\n",
		Fields: []connect.Field{{Name: "x", Schema: &connect.Schema{Type: connect.SchemaTypeFloat64}}, {Name: "srid", Schema: &connect.Schema{Type: connect.SchemaTypeInt32, Optional: true}}}}
	cases := []struct {
		name   string
		schema *connect.Schema
		value  any
	}{
		{"no schema", nil, map[string]any{"a": int64(1)}},
		{"string", connect.StringSchema, "hi"},
		{"optional null", connect.OptionalStringSchema, nil},
		{"float", &connect.Schema{Type: connect.SchemaTypeFloat32}, float32(1.5)},
		{"array", &connect.Schema{Type: connect.SchemaTypeArray, Optional: true, ValueSchema: i32}, []any{int32(1)}},
		{"map", &connect.Schema{Type: connect.SchemaTypeMap, KeySchema: i32, ValueSchema: connect.OptionalStringSchema}, map[any]any{int32(2): "x"}},
		{"decimal", &connect.Schema{Type: connect.SchemaTypeBytes, Name: "org.apache.kafka.connect.data.Decimal", Version: int32p(1),
			Parameters: map[string]string{"scale": "2", "connect.decimal.precision": "10", "a": "\x01"}}, []byte{4, 210}},
		{"empty parameters", &connect.Schema{Type: connect.SchemaTypeString, Parameters: map[string]string{}}, "x"},
		{"defaults", &connect.Schema{Type: connect.SchemaTypeStruct, Fields: []connect.Field{
			{Name: "n", Schema: &connect.Schema{Type: connect.SchemaTypeInt64, Default: int64(0)}},
			{Name: "s", Schema: &connect.Schema{Type: connect.SchemaTypeString, Optional: true, Default: "new"}},
			{Name: "b", Schema: &connect.Schema{Type: connect.SchemaTypeBoolean, Default: true}},
			{Name: "f", Schema: &connect.Schema{Type: connect.SchemaTypeFloat64, Default: 0.5}},
			{Name: "l", Schema: &connect.Schema{Type: connect.SchemaTypeArray, ValueSchema: connect.StringSchema, Default: []any{"a"}}},
		}}, map[string]any{"n": nil, "s": nil, "b": nil, "f": nil, "l": nil}},
		{"nested structs", &connect.Schema{Type: connect.SchemaTypeStruct, Name: "Envelope", Fields: []connect.Field{
			{Name: "before", Schema: point}, {Name: "after", Schema: point}}},
			map[string]any{"before": map[string]any{"x": 1.0, "srid": nil}, "after": map[string]any{"x": 2.0, "srid": int32(4326)}}},
		{"a default that does not fit", &connect.Schema{Type: connect.SchemaTypeInt32, Default: "x"}, int32(1)},
		{"a value that does not fit", i32, "x"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			for _, props := range []map[string]string{nil, {ReplaceNullWithDefaultConfig: "false"}} {
				c, ref := cachedAndNot(t, props)
				sameWrite(t, c, ref, tt.schema, tt.value)
			}
		})
	}
}

// The write cache is keyed by what a schema holds, not by the pointer: a
// schema changed in place between two records is written as it now is.
func TestJSONSchemaCacheSeesChangesInPlace(t *testing.T) {
	c, ref := cachedAndNot(t, nil)
	field := &connect.Schema{Type: connect.SchemaTypeInt32}
	s := &connect.Schema{Type: connect.SchemaTypeStruct, Name: "T", Fields: []connect.Field{{Name: "a", Schema: field}}}
	value := map[string]any{"a": int32(1), "b": int32(1)}
	changes := []struct {
		name   string
		change func()
	}{
		{"unchanged", func() {}},
		{"optional", func() { s.Optional = true }},
		{"name", func() { s.Name = "T2" }},
		{"name to doc", func() { s.Name, s.Doc = "T", "2" }},
		{"version", func() { s.Version = int32p(3) }},
		{"version value", func() { *s.Version = 4 }},
		{"empty parameters", func() { s.Parameters = map[string]string{} }},
		{"a parameter", func() { s.Parameters["k"] = "v" }},
		{"a parameter's value", func() { s.Parameters["k"] = "w" }},
		{"a field's name", func() { s.Fields[0].Name = "b" }},
		{"a nested type", func() { field.Type = connect.SchemaTypeInt64 }},
		{"a nested default", func() { field.Default = int64(7) }},
		{"a nested default's value", func() { field.Default = int64(8) }},
		{"a field added", func() { s.Fields = append(s.Fields, connect.Field{Name: "c", Schema: connect.OptionalStringSchema}) }},
	}
	for _, ch := range changes {
		ch.change()
		want, err := ref.FromConnectData("t", s, value)
		if err != nil {
			t.Fatalf("%s: %v", ch.name, err)
		}
		if got, err := c.FromConnectData("t", s, value); err != nil || string(got) != string(want) {
			t.Errorf("after a change of %s: got %s, %v; want %s", ch.name, got, err, want)
		}
	}
	if n := c.written.len(); n != len(changes) {
		t.Errorf("%d schemas cached, want %d (one per content)", n, len(changes))
	}
}

// Equal schemas share an entry, whoever built them; schemas that differ
// anywhere do not, however they share their parts.
func TestJSONSchemaCacheKeysByContent(t *testing.T) {
	c, ref := cachedAndNot(t, nil)
	row := func(doc string) *connect.Schema {
		return &connect.Schema{Type: connect.SchemaTypeStruct, Optional: true, Doc: doc,
			Fields: []connect.Field{{Name: "id", Schema: &connect.Schema{Type: connect.SchemaTypeInt32}}}}
	}
	envelope := func(before, after *connect.Schema) *connect.Schema {
		return &connect.Schema{Type: connect.SchemaTypeStruct, Fields: []connect.Field{{Name: "before", Schema: before}, {Name: "after", Schema: after}}}
	}
	shared := row("")
	value := map[string]any{"before": nil, "after": map[string]any{"id": int32(1)}}
	for range 3 { // a new, equal schema per record, as a transformation makes
		sameWrite(t, c, ref, envelope(row(""), row("")), value)
	}
	sameWrite(t, c, ref, envelope(shared, shared), value) // one struct, met twice
	if n := c.written.len(); n != 1 {
		t.Fatalf("%d entries for equal schemas, want 1", n)
	}
	sameWrite(t, c, ref, envelope(shared, row("other")), value)
	sameWrite(t, c, ref, envelope(row("other"), shared), value)
	sameWrite(t, c, ref, envelope(row("other"), row("other")), value)
	if n := c.written.len(); n != 4 {
		t.Errorf("%d entries for 4 different schemas", n)
	}
}

func TestJSONSchemaCacheBound(t *testing.T) {
	c := &JSON{}
	mustConfigure(t, c, map[string]string{SchemasCacheSizeConfig: "3"}, false)
	var envelopes [][]byte
	for i := range 5 {
		s := &connect.Schema{Type: connect.SchemaTypeInt32, Name: fmt.Sprintf("s%d", i)}
		data, err := c.FromConnectData("t", s, int32(i))
		if err != nil {
			t.Fatal(err)
		}
		envelopes = append(envelopes, data)
		if _, _, err := c.ToConnectData("t", data); err != nil {
			t.Fatal(err)
		}
	}
	if w, r := c.written.len(), c.read.len(); w != 3 || r != 3 {
		t.Errorf("%d schemas written and %d read are cached, want at most 3 each", w, r)
	}
	// The last three are the ones kept.
	first, _, _ := c.ToConnectData("t", envelopes[4])
	again, _, _ := c.ToConnectData("t", envelopes[4])
	if first != again {
		t.Error("the most recent schema read was dropped")
	}
	old, _, _ := c.ToConnectData("t", envelopes[0])
	if oldAgain, _, _ := c.ToConnectData("t", envelopes[0]); old != oldAgain || c.read.len() != 3 {
		t.Errorf("reading a dropped schema again: cached %v, %d entries", old == oldAgain, c.read.len())
	}
}

func TestJSONSchemaCacheSize(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  int // 0: no cache
	}{{"", 1000}, {"1", 1}, {"0", 0}, {"-5", 0}} {
		props := map[string]string{}
		if tt.value != "" {
			props[SchemasCacheSizeConfig] = tt.value
		}
		c := &JSON{}
		mustConfigure(t, c, props, false)
		got := 0
		if c.written != nil {
			got = c.written.max
		}
		if got != tt.want || (c.read == nil) != (tt.want == 0) {
			t.Errorf("schemas.cache.size=%q: write cache of %d, read cache %v; want %d", tt.value, got, c.read != nil, tt.want)
		}
		// Without cache, each read builds its own schema.
		data := []byte(`{"schema":{"type":"int8","optional":false},"payload":1}`)
		s1, _, _ := c.ToConnectData("t", data)
		s2, _, _ := c.ToConnectData("t", data)
		if (s1 == s2) != (tt.want > 0) {
			t.Errorf("schemas.cache.size=%q: the same schema read twice is shared: %v", tt.value, s1 == s2)
		}
	}
	if err := (&JSON{}).Configure(map[string]string{SchemasCacheSizeConfig: "many"}, false); err == nil ||
		err.Error() != "Invalid value many for configuration schemas.cache.size: Not a number of type INT" {
		t.Errorf("schemas.cache.size=many: %v", err)
	}
}

// sameRead checks that c reads data as ref (no cache) does, twice (a miss,
// then a hit when c caches the schema).
func sameRead(t *testing.T, c, ref *JSON, data string) {
	t.Helper()
	ws, wv, werr := ref.ToConnectData("t", []byte(data))
	for _, pass := range []string{"first", "second"} {
		s, v, err := c.ToConnectData("t", []byte(data))
		if fmt.Sprint(err) != fmt.Sprint(werr) || !reflect.DeepEqual(s, ws) || !reflect.DeepEqual(v, wv) {
			t.Errorf("%s read of %s: got %+v, %#v, %v; want %+v, %#v, %v", pass, data, s, v, err, ws, wv, werr)
		}
	}
}

func TestJSONReadCacheReadsTheSame(t *testing.T) {
	const i32 = `{"type":"int32","optional":false}`
	const point = `{"type":"struct","fields":[{"type":"double","optional":false,"field":"x"},` +
		`{"type":"int32","optional":true,"default":4326,"field":"srid"}],"optional":true,"name":"P","version":1,"parameters":{"k":"v"}}`
	inputs := []string{
		`{"schema":` + i32 + `,"payload":7}`,
		`{"payload":7,"schema":` + i32 + `}`,
		" \t\r\n{ \"schema\" : " + i32 + " , \"payload\" : 7 } \n",
		`{"schema":` + i32 + `,"payload":7} trailing words`,
		`{"schema":` + point + `,"payload":{"x":1.5,"srid":null}}`,
		`{"schema":` + point + `,"payload":null}`,
		`{"schema":{"type":"string","optional":false},"payload":"a}\"]{\\"}`,
		`{"schema":{"type":"array","items":{"type":"string","optional":false},"optional":false},"payload":["]","[",""]}`,
		`{"schema":null,"payload":{"n":1,"f":-0.0,"l":[true,null]}}`,
		`{"schema":null,"payload":"x"}`,
		// Shapes the quick split leaves to the full decoder.
		`{"schema":{"type":"int64","optional":false},"payload":1,"schema":` + i32 + `}`,
		`{"sch\u0065ma":` + i32 + `,"payload":7}`,
		`{"schema":` + i32 + `,"payload":7,"extra":1}`,
		`{"schema":` + i32 + `}`,
		`{}`,
		`[1,2]`,
		`null`,
		`"text"`,
		// Errors: syntax anywhere, then the schema's, then the payload's.
		`{"schema":` + i32 + `,"payload":[1,}`,
		`{"schema":{"type":"int32","optional":false,},"payload":7}`,
		`{"schema":{"type":"nope"},"payload":[1,}`,
		`{"schema":{"type":"nope"},"payload":7}`,
		`{"schema":` + i32 + `,"payload":"seven"}`,
		`{"schema":` + i32 + `,"payload":nul}`,
		`{"schema":` + i32 + `,"payload":7`,
		`{"schema":` + i32 + `,"payload":"7`,
		`{"schema":` + i32 + ` "payload":7}`,
		`{"schema" ` + i32 + `,"payload":7}`,
		`{"schema":` + i32 + `,"payload":7 8}`,
		`{"schema":` + i32 + `,"payload":"a` + "\x01" + `"}`,
		`{"schema":{"type":"string","optional":false},"payload":"a` + "\xff" + `"}`,
	}
	for _, props := range []map[string]string{nil, {ReplaceNullWithDefaultConfig: "false"}} {
		c, ref := cachedAndNot(t, props)
		for _, data := range inputs {
			sameRead(t, c, ref, data)
		}
	}
}

func TestJSONReadCacheSharesTheSchema(t *testing.T) {
	c, _ := cachedAndNot(t, nil)
	const data = `{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"a"}],"optional":false},"payload":{"a":%d}}`
	s1, v1, err := c.ToConnectData("t", fmt.Appendf(nil, data, 1))
	if err != nil {
		t.Fatal(err)
	}
	s2, v2, err := c.ToConnectData("t", fmt.Appendf(nil, data, 2))
	if err != nil {
		t.Fatal(err)
	}
	if s1 != s2 || c.read.len() != 1 {
		t.Errorf("two records of one schema: schemas shared %v, %d cached", s1 == s2, c.read.len())
	}
	if v1.(map[string]any)["a"] != int32(1) || v2.(map[string]any)["a"] != int32(2) {
		t.Errorf("payloads %v, %v", v1, v2)
	}
	// The cache holds the bytes, not the caller's buffer.
	buf := fmt.Appendf(nil, data, 3)
	s3, _, _ := c.ToConnectData("t", buf)
	copy(buf, strings.Repeat(" ", len(buf)))
	if s4, _, _ := c.ToConnectData("t", fmt.Appendf(nil, data, 4)); s4 != s3 {
		t.Error("the cached schema was lost when the caller reused its buffer")
	}
}

// A converter is shared by whoever holds it: many goroutines writing and
// reading through one, the caches smaller than the schemas in use so that
// they drop entries all along, each record as a converter without cache
// makes it. Run with -race.
func TestJSONSchemaCacheConcurrentUse(t *testing.T) {
	c := &JSON{}
	mustConfigure(t, c, map[string]string{SchemasCacheSizeConfig: "4"}, false)
	ref := &JSON{}
	mustConfigure(t, ref, map[string]string{SchemasCacheSizeConfig: "0"}, false)
	type record struct {
		schema *connect.Schema
		value  any
		data   []byte
	}
	var records []record
	for i := range 10 {
		s := &connect.Schema{Type: connect.SchemaTypeStruct, Name: fmt.Sprintf("r%d", i), Fields: []connect.Field{
			{Name: "id", Schema: &connect.Schema{Type: connect.SchemaTypeInt64}},
			{Name: "tag", Schema: &connect.Schema{Type: connect.SchemaTypeString, Optional: true, Default: fmt.Sprint(i)}},
		}}
		v := map[string]any{"id": int64(i), "tag": nil}
		data, err := ref.FromConnectData("t", s, v)
		if err != nil {
			t.Fatal(err)
		}
		records = append(records, record{s, v, data})
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for n := range 200 {
				r := records[(g*7+n)%len(records)]
				got, err := c.FromConnectData("t", r.schema, r.value)
				if err != nil || string(got) != string(r.data) {
					t.Errorf("goroutine %d wrote %s, %v; want %s", g, got, err, r.data)
					return
				}
				s, v, err := c.ToConnectData("t", r.data)
				if err != nil || s.Name != r.schema.Name || v.(map[string]any)["id"] != r.value.(map[string]any)["id"] {
					t.Errorf("goroutine %d read %s as %+v, %v, %v", g, r.data, s, v, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if w, r := c.written.len(), c.read.len(); w > 4 || r > 4 {
		t.Errorf("caches of 4 hold %d and %d", w, r)
	}
}

// A record's buffer is allocated by the size of the one before, within
// bounds: a large record leaves the next, small one a small buffer.
func TestJSONBufferFollowsTheLastRecord(t *testing.T) {
	c := &JSON{}
	mustConfigure(t, c, nil, false)
	if _, err := c.FromConnectData("t", connect.StringSchema, strings.Repeat("x", 1<<20)); err != nil {
		t.Fatal(err)
	}
	small, err := c.FromConnectData("t", connect.StringSchema, "x")
	if err != nil {
		t.Fatal(err)
	}
	if string(small) != `{"schema":{"type":"string","optional":false},"payload":"x"}` || cap(small) > 2*maxSizeHint {
		t.Errorf("after a 1 MB record, a small one is %q in %d bytes", small, cap(small))
	}
}
