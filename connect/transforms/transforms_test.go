package transforms

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
)

// lookup resolves the package's own plugins by class name, as the
// registry does.
type lookup struct{}

func (lookup) Lookup(cls string) (*connect.Plugin, bool) {
	for _, p := range Plugins() {
		if p.Class == cls {
			return p, true
		}
	}
	return nil, false
}

// newT configures the transformation of class with kv.
func newT(t *testing.T, class string, kv ...string) connect.Transformation {
	t.Helper()
	for _, p := range Plugins() {
		if p.Class == class {
			tr := p.NewTransformation()
			if err := tr.Configure(props(kv...)); err != nil {
				t.Fatalf("configure %s: %v", class, err)
			}
			return tr
		}
	}
	t.Fatalf("no transformation %s", class)
	return nil
}

func props(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func apply(t *testing.T, tr connect.Transformation, r *connect.TransformRecord) *connect.TransformRecord {
	t.Helper()
	out, err := tr.Apply(r)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return out
}

var (
	partition int32 = 3
	offset    int64 = 42
	ts              = time.UnixMilli(1_700_000_000_123)
)

func sinkRec(schema *connect.Schema, value any) *connect.TransformRecord {
	return &connect.TransformRecord{Topic: "orders", KafkaPartition: &partition, KafkaOffset: &offset, Timestamp: ts,
		ValueSchema: schema, Value: value, Key: "k", KeySchema: connect.StringSchema}
}

func TestRouters(t *testing.T) {
	r := newT(t, RegexRouterClass, "regex", "(ord)ers", "replacement", "$1-v2")
	if got := apply(t, r, sinkRec(nil, nil)).Topic; got != "ord-v2" {
		t.Errorf("RegexRouter: %s", got)
	}
	// Only a whole match renames.
	if got := apply(t, r, &connect.TransformRecord{Topic: "orders-x"}).Topic; got != "orders-x" {
		t.Errorf("RegexRouter on a partial match: %s", got)
	}
	tr := newT(t, TimestampRouterClass, "timestamp.format", "yyyy.MM.dd'T'HH")
	if got := apply(t, tr, sinkRec(nil, nil)).Topic; got != "orders-2023.11.14T22" {
		t.Errorf("TimestampRouter: %s", got)
	}
	if _, err := tr.Apply(&connect.TransformRecord{Topic: "t"}); err == nil || !strings.HasPrefix(err.Error(), "Timestamp missing on record: ") {
		t.Errorf("TimestampRouter without a timestamp: %v", err)
	}
}

func TestHoistAndExtract(t *testing.T) {
	hoist := newT(t, HoistFieldClass+"$Value", "field", "line")
	out := apply(t, hoist, sinkRec(nil, "hello"))
	if !reflect.DeepEqual(out.Value, map[string]any{"line": "hello"}) || out.ValueSchema != nil {
		t.Errorf("schemaless hoist: %#v %v", out.Value, out.ValueSchema)
	}
	out = apply(t, hoist, sinkRec(connect.StringSchema, "hello"))
	if out.ValueSchema.Type != connect.SchemaTypeStruct || out.ValueSchema.Fields[0].Name != "line" || out.ValueSchema.Fields[0].Schema != connect.StringSchema {
		t.Errorf("hoist with schema: %+v", out.ValueSchema)
	}
	extract := newT(t, ExtractFieldClass+"$Value", "field", "line")
	back := apply(t, extract, out)
	if back.Value != "hello" || back.ValueSchema != connect.StringSchema {
		t.Errorf("extract of the hoisted: %#v %v", back.Value, back.ValueSchema)
	}
	if got := apply(t, extract, sinkRec(nil, nil)); got.Value != nil {
		t.Errorf("extract of a tombstone: %v", got.Value)
	}
	if _, err := extract.Apply(sinkRec(nil, "x")); err == nil || err.Error() != "Only Map objects supported in absence of schema for [field extraction], found: java.lang.String" {
		t.Errorf("extract of a string: %v", err)
	}
	if _, err := newT(t, ExtractFieldClass+"$Value", "field", "nope").Apply(out); err == nil || err.Error() != "Unknown field: nope" {
		t.Errorf("extract of an unknown field: %v", err)
	}
	nested := newT(t, ExtractFieldClass+"$Value", "field", "a.`b.c`", "field.syntax.version", "V2")
	if got := apply(t, nested, sinkRec(nil, map[string]any{"a": map[string]any{"b.c": int32(7)}})).Value; got != int32(7) {
		t.Errorf("V2 path: %v", got)
	}
	key := newT(t, HoistFieldClass+"$Key", "field", "id")
	if got := apply(t, key, sinkRec(nil, "v")); !reflect.DeepEqual(got.Key, map[string]any{"id": "k"}) || got.Value != "v" {
		t.Errorf("hoist of the key: %#v", got)
	}
}

func structRec() *connect.TransformRecord {
	s := &connect.Schema{Type: connect.SchemaTypeStruct, Name: "Order", Fields: []connect.Field{
		{Name: "id", Schema: &connect.Schema{Type: connect.SchemaTypeInt64}},
		{Name: "card", Schema: connect.StringSchema},
		{Name: "qty", Schema: &connect.Schema{Type: connect.SchemaTypeInt32}},
	}}
	return sinkRec(s, map[string]any{"id": int64(1), "card": "4111", "qty": int32(5)})
}

func TestInsertField(t *testing.T) {
	ins := newT(t, InsertFieldClass+"$Value", "topic.field", "t!", "partition.field", "p", "offset.field", "o",
		"timestamp.field", "ts", "static.field", "origin", "static.value", "sluice")
	out := apply(t, ins, structRec())
	var names []string
	for _, f := range out.ValueSchema.Fields {
		names = append(names, f.Name+":"+f.Schema.Type+map[bool]string{true: "?", false: "!"}[f.Schema.Optional])
	}
	if want := "id:int64!,card:string!,qty:int32!,t:string!,p:int32?,o:int64?,ts:int64?,origin:string?"; strings.Join(names, ",") != want {
		t.Errorf("schema fields %s, want %s", strings.Join(names, ","), want)
	}
	if out.ValueSchema.Name != "Order" || out.ValueSchema.Fields[6].Schema.Name != "org.apache.kafka.connect.data.Timestamp" {
		t.Errorf("schema basics or the timestamp's logical type lost: %+v", out.ValueSchema)
	}
	want := map[string]any{"id": int64(1), "card": "4111", "qty": int32(5), "t": "orders", "p": int32(3), "o": int64(42),
		"ts": ts.UnixMilli(), "origin": "sluice"}
	if !reflect.DeepEqual(out.Value, want) {
		t.Errorf("value %#v", out.Value)
	}
	schemaless := apply(t, ins, sinkRec(nil, map[string]any{"a": "b"}))
	if !reflect.DeepEqual(schemaless.Value, map[string]any{"a": "b", "t": "orders", "p": int32(3), "o": int64(42), "ts": ts.UnixMilli(), "origin": "sluice"}) {
		t.Errorf("schemaless %#v", schemaless.Value)
	}
	if got := apply(t, ins, sinkRec(nil, nil)); got.Value != nil {
		t.Errorf("a tombstone passes: %#v", got.Value)
	}
	src := &connect.TransformRecord{Topic: "t", Value: map[string]any{}}
	if _, err := ins.Apply(src); err == nil || !strings.Contains(err.Error(), "Only SinkRecord supported for [field insertion]") {
		t.Errorf("offset.field on a source record: %v", err)
	}
	p := &insertField{side: valueSide}
	if err := p.Configure(props()); err == nil || err.Error() != "No field insertion configured" {
		t.Errorf("nothing to insert: %v", err)
	}
}

func TestReplaceAndMask(t *testing.T) {
	rep := newT(t, ReplaceFieldClass+"$Value", "exclude", "qty", "renames", "card:pan")
	out := apply(t, rep, structRec())
	if len(out.ValueSchema.Fields) != 2 || out.ValueSchema.Fields[1].Name != "pan" || !reflect.DeepEqual(out.Value, map[string]any{"id": int64(1), "pan": "4111"}) {
		t.Errorf("replace: %+v %#v", out.ValueSchema, out.Value)
	}
	inc := newT(t, ReplaceFieldClass+"$Value", "include", "id,card", "exclude", "card")
	if got := apply(t, inc, sinkRec(nil, map[string]any{"id": 1, "card": "x", "qty": 2})).Value; !reflect.DeepEqual(got, map[string]any{"id": 1}) {
		t.Errorf("include and exclude: %#v", got)
	}
	mask := newT(t, MaskFieldClass+"$Value", "fields", "card,qty")
	if got := apply(t, mask, structRec()).Value; !reflect.DeepEqual(got, map[string]any{"id": int64(1), "card": "", "qty": int32(0)}) {
		t.Errorf("mask: %#v", got)
	}
	custom := newT(t, MaskFieldClass+"$Value", "fields", "qty", "replacement", "9")
	if got := apply(t, custom, structRec()).Value.(map[string]any)["qty"]; got != int32(9) {
		t.Errorf("mask with a replacement: %#v", got)
	}
	// Kafka adds a field the map lacks, null.
	if got := apply(t, mask, sinkRec(nil, map[string]any{"card": "1"})).Value; !reflect.DeepEqual(got, map[string]any{"card": "", "qty": nil}) {
		t.Errorf("schemaless mask: %#v", got)
	}
	if _, err := newT(t, MaskFieldClass+"$Value", "fields", "card", "replacement", "x").Apply(sinkRec(nil, map[string]any{"card": int64(4)})); err == nil ||
		err.Error() != "Unable to convert x (class java.lang.String) to number" {
		t.Errorf("mask with a replacement that is no number: %v", err)
	}
}

func TestHeadersFilterAndPredicates(t *testing.T) {
	rec := sinkRec(nil, "v")
	rec.Headers = []connect.Header{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("2")}, {Key: "a", Value: []byte("3")}}
	out := apply(t, newT(t, InsertHeaderClass, "header", "c", "value.literal", "TRUE"), rec)
	if len(out.Headers) != 4 || out.Headers[3].Key != "c" || string(out.Headers[3].Value) != "true" || len(rec.Headers) != 3 {
		t.Errorf("insert header: %+v (input %+v)", out.Headers, rec.Headers)
	}
	out = apply(t, newT(t, DropHeadersClass, "headers", "a"), out)
	if len(out.Headers) != 2 || out.Headers[0].Key != "b" {
		t.Errorf("drop headers: %+v", out.Headers)
	}
	if apply(t, newT(t, FilterClass), rec) != nil {
		t.Error("Filter kept a record")
	}
	reg := lookup{}
	chain, err := Build(reg, map[string]string{
		"transforms": "drop,route", "transforms.drop.type": FilterClass, "transforms.drop.predicate": "tomb",
		"transforms.route.type": RegexRouterClass, "transforms.route.regex": ".*", "transforms.route.replacement": "other",
		"transforms.route.predicate": "hasB", "transforms.route.negate": "true",
		"predicates": "tomb,hasB", "predicates.tomb.type": RecordIsTombstoneClass,
		"predicates.hasB.type": HasHeaderKeyClass, "predicates.hasB.name": "b",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	if got, _ := chain.Apply(sinkRec(nil, nil)); got != nil {
		t.Errorf("a tombstone passed the filter: %+v", got)
	}
	if got, _ := chain.Apply(rec); got == nil || got.Topic != "orders" {
		t.Errorf("a record with header b was routed: %+v", got)
	}
	if got, _ := chain.Apply(sinkRec(nil, "x")); got == nil || got.Topic != "other" {
		t.Errorf("a record without header b was not routed: %+v", got)
	}
	match, err := Build(reg, map[string]string{"transforms": "f", "transforms.f.type": FilterClass, "transforms.f.predicate": "m",
		"predicates": "m", "predicates.m.type": TopicNameMatchesClass, "predicates.m.pattern": "ord.*"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := match.Apply(sinkRec(nil, "x")); got != nil {
		t.Error("TopicNameMatches did not match orders")
	}
	if _, err := Build(reg, map[string]string{"transforms": "x", "transforms.x.type": FilterClass, "transforms.x.predicate": "missing"}); err == nil {
		t.Error("a predicate alias not in predicates was accepted")
	}
}

func TestDateFormat(t *testing.T) {
	f, err := parseDateFormat("yy-M-d H:mm:ss.SSS EEE MMM a 'lit''s' Z")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.format(ts); got != "23-11-14 22:13:20.123 Tue Nov PM lit's +0000" {
		t.Errorf("format: %q", got)
	}
	if _, err := parseDateFormat("yyyyb"); err == nil {
		t.Error("an unknown letter was accepted")
	}
}

func TestCast(t *testing.T) {
	c := newT(t, CastClass+"$Value", "spec", "id:string,qty:float64,card:int8")
	rec := structRec()
	rec.Value.(map[string]any)["card"] = "12"
	out := apply(t, c, rec)
	if got := out.Value.(map[string]any); got["id"] != "1" || got["qty"] != float64(5) || got["card"] != int8(12) {
		t.Errorf("struct cast: %#v", got)
	}
	if f := out.ValueSchema.Fields; f[0].Schema.Type != "string" || f[1].Schema.Type != "int8" || f[2].Schema.Type != "float64" {
		t.Errorf("schema after the cast: %+v", f)
	}
	for _, tc := range []struct {
		spec string
		in   any
		want any
	}{
		{"int8", int64(300), int8(44)},
		{"int8", 3e9, int8(-1)},
		{"int64", 3.9, int64(3)},
		{"boolean", int32(2), true},
		{"boolean", "TRUE", true},
		{"boolean", "yes", false},
		{"string", 1.0, "1.0"},
		{"string", float32(0.1), "0.1"},
		{"string", 1e20, "1.0E20"},
		{"string", []byte{1, 2}, "AQI="},
		{"float32", "2.5", float32(2.5)},
	} {
		got := apply(t, newT(t, CastClass+"$Value", "spec", tc.spec), sinkRec(nil, tc.in)).Value
		if got != tc.want {
			t.Errorf("cast %v (%T) to %s: %#v, want %#v", tc.in, tc.in, tc.spec, got, tc.want)
		}
	}
	for spec, msg := range map[string]string{
		"a:int9":       "Invalid value java.lang.IllegalArgumentException: No enum constant org.apache.kafka.connect.data.Schema.Type.INT9 for configuration Invalid type found in casting spec: int9",
		"a:int8:x":     "Invalid value [a:int8:x] for configuration renames: Invalid rename mapping: a:int8:x",
		"int8,a:int16": "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec",
		"a:bytes":      "Cast transformation does not support casting to BYTES; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]",
		"":             "Must specify at least one field to cast.",
	} {
		if err := (&cast{}).Configure(props("spec", spec)); err == nil || err.Error() != msg {
			t.Errorf("spec %q: %v, want %s", spec, err, msg)
		}
	}
}

func TestValueToKeyAndSchemaMetadata(t *testing.T) {
	vk := newT(t, ValueToKeyClass, "fields", "id,card")
	out := apply(t, vk, structRec())
	if !reflect.DeepEqual(out.Key, map[string]any{"id": int64(1), "card": "4111"}) || len(out.KeySchema.Fields) != 2 {
		t.Errorf("ValueToKey: %#v %+v", out.Key, out.KeySchema)
	}
	if _, err := newT(t, ValueToKeyClass, "fields", "nope").Apply(structRec()); err == nil || err.Error() != "Field does not exist: nope" {
		t.Errorf("ValueToKey of an unknown field: %v", err)
	}
	if got := apply(t, vk, sinkRec(nil, map[string]any{"id": 7})).Key; !reflect.DeepEqual(got, map[string]any{"id": 7, "card": nil}) {
		t.Errorf("schemaless ValueToKey: %#v", got)
	}
	ssm := newT(t, SetSchemaMetadataClass+"$Value", "schema.name", "com.example.Order", "schema.version", "3")
	rec := structRec()
	out = apply(t, ssm, rec)
	if out.ValueSchema.Name != "com.example.Order" || *out.ValueSchema.Version != 3 || rec.ValueSchema.Name != "Order" {
		t.Errorf("SetSchemaMetadata: %+v (input %+v)", out.ValueSchema, rec.ValueSchema)
	}
	if _, err := ssm.Apply(sinkRec(nil, "x")); err == nil || err.Error() != "Schema required for [updating schema metadata]" {
		t.Errorf("SetSchemaMetadata without a schema: %v", err)
	}
	if err := (&setSchemaMetadata{}).Configure(props()); err == nil || err.Error() != "Neither schema name nor version configured" {
		t.Errorf("nothing to set: %v", err)
	}
}

func TestFlattenAndHeaderFrom(t *testing.T) {
	fl := newT(t, FlattenClass+"$Value", "delimiter", "_")
	got := apply(t, fl, sinkRec(nil, map[string]any{"a": map[string]any{"b": int32(1), "c": map[string]any{"d": "x"}}, "e": nil})).Value
	if !reflect.DeepEqual(got, map[string]any{"a_b": int32(1), "a_c_d": "x", "e": nil}) {
		t.Errorf("schemaless flatten: %#v", got)
	}
	inner := &connect.Schema{Type: connect.SchemaTypeStruct, Optional: true, Fields: []connect.Field{{Name: "zip", Schema: connect.StringSchema}}}
	s := &connect.Schema{Type: connect.SchemaTypeStruct, Fields: []connect.Field{{Name: "id", Schema: connect.Int64Schema}, {Name: "addr", Schema: inner}}}
	out := apply(t, fl, sinkRec(s, map[string]any{"id": int64(1), "addr": nil}))
	if f := out.ValueSchema.Fields; len(f) != 2 || f[1].Name != "addr_zip" || !f[1].Schema.Optional || out.Value.(map[string]any)["addr_zip"] != nil {
		t.Errorf("flatten with schema: %+v %#v", f, out.Value)
	}
	hf := newT(t, HeaderFromClass+"$Value", "fields", "qty,card", "headers", "q,c", "operation", "move")
	out = apply(t, hf, structRec())
	if len(out.Headers) != 2 || string(out.Headers[0].Value) != "5" || string(out.Headers[1].Value) != "4111" {
		t.Errorf("HeaderFrom headers: %+v", out.Headers)
	}
	if len(out.ValueSchema.Fields) != 1 || !reflect.DeepEqual(out.Value, map[string]any{"id": int64(1)}) {
		t.Errorf("HeaderFrom move: %+v %#v", out.ValueSchema, out.Value)
	}
	if err := (&headerFrom{}).Configure(props("fields", "a,b", "headers", "x", "operation", "copy")); err == nil ||
		err.Error() != "'fields' config must have the same number of elements as 'headers' config." {
		t.Errorf("unequal lists: %v", err)
	}
}

func TestTimestampConverter(t *testing.T) {
	toString := newT(t, TimestampConverterClass+"$Value", "target.type", "string", "format", "yyyy-MM-dd HH:mm:ss.SSS")
	if got := apply(t, toString, sinkRec(nil, ts.UnixMilli())).Value; got != "2023-11-14 22:13:20.123" {
		t.Errorf("unix to string: %v", got)
	}
	back := newT(t, TimestampConverterClass+"$Value", "target.type", "unix", "format", "yyyy-MM-dd HH:mm:ss.SSS", "unix.precision", "seconds")
	if got := apply(t, back, sinkRec(nil, "2023-11-14 22:13:20.123")).Value; got != int64(1_700_000_000) {
		t.Errorf("string to unix seconds: %v", got)
	}
	if _, err := back.Apply(sinkRec(nil, "14/11/2023")); err == nil ||
		err.Error() != "Could not parse timestamp: value (14/11/2023) does not match pattern (yyyy-MM-dd HH:mm:ss.SSS)" {
		t.Errorf("a string that does not match: %v", err)
	}
	field := newT(t, TimestampConverterClass+"$Value", "field", "at", "target.type", "Date")
	s := &connect.Schema{Type: connect.SchemaTypeStruct, Fields: []connect.Field{{Name: "at", Schema: connect.Int64Schema}}}
	out := apply(t, field, sinkRec(s, map[string]any{"at": ts.UnixMilli()}))
	if got := out.Value.(map[string]any)["at"]; got != int32(19675) || out.ValueSchema.Fields[0].Schema.Name != dateLogical {
		t.Errorf("unix field to Date: %v %+v", got, out.ValueSchema.Fields[0].Schema)
	}
	tm := newT(t, TimestampConverterClass+"$Value", "target.type", "Time")
	if got := apply(t, tm, sinkRec(timestampSchema(false), ts.UnixMilli())).Value; got != int32((22*3600+13*60+20)*1000+123) {
		t.Errorf("Timestamp to Time: %v", got)
	}
	if err := (&timestampConverter{}).Configure(props("target.type", "string")); err == nil ||
		err.Error() != "TimestampConverter requires format option to be specified when using string timestamps" {
		t.Errorf("string without a format: %v", err)
	}
}
