package transforms

import (
	"strings"

	"github.com/sluice-io/sluice/connect"
)

// InsertFieldClass is InsertField's class name (with $Key or $Value).
const InsertFieldClass = "org.apache.kafka.connect.transforms.InsertField"

const fieldSpecDoc = "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."

func insertFieldDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	for _, k := range []struct{ name, doc string }{
		{"topic.field", "Field name for Kafka topic. " + fieldSpecDoc},
		{"partition.field", "Field name for Kafka partition. " + fieldSpecDoc},
		{"offset.field", "Field name for Kafka offset - only applicable to sink connectors.<br/>" + fieldSpecDoc},
		{"timestamp.field", "Field name for record timestamp. " + fieldSpecDoc},
		{"static.field", "Field name for static data field. " + fieldSpecDoc},
		{"static.value", "Static field value, if field name configured."},
	} {
		d.Define(connect.ConfigKey{Name: k.name, Type: connect.TypeString, Default: nil,
			Importance: connect.ImportanceMedium, Documentation: k.doc})
	}
	return d.Define(replaceNullKey())
}

// insertionSpec is one field InsertField adds: its name, and whether its
// schema is optional ("name?", or no suffix) or required ("name!").
type insertionSpec struct {
	name     string
	optional bool
}

func parseSpec(v connect.Values, key string) *insertionSpec {
	if v.IsNull(key) {
		return nil
	}
	s := v.String(key)
	switch {
	case strings.HasSuffix(s, "?"):
		return &insertionSpec{name: s[:len(s)-1], optional: true}
	case strings.HasSuffix(s, "!"):
		return &insertionSpec{name: s[:len(s)-1]}
	}
	return &insertionSpec{name: s, optional: true}
}

// insertField is Kafka's InsertField: it adds fields holding the record's
// topic, partition, offset (sinks) and timestamp, and a static value, to a
// struct or map key or value. A null key or value (a tombstone) passes.
type insertField struct {
	side                                      side
	topic, partition, offset, timestamp, stat *insertionSpec
	staticValue                               *string
}

const insertPurpose = "field insertion"

// timestampSchema is Kafka's Timestamp logical type: epoch milliseconds.
func timestampSchema(optional bool) *connect.Schema {
	v := int32(1)
	return &connect.Schema{Type: connect.SchemaTypeInt64, Name: "org.apache.kafka.connect.data.Timestamp", Version: &v, Optional: optional}
}

func (t *insertField) Configure(props map[string]string) error {
	v, err := insertFieldDef().Parse(props)
	if err != nil {
		return err
	}
	t.topic, t.partition, t.offset = parseSpec(v, "topic.field"), parseSpec(v, "partition.field"), parseSpec(v, "offset.field")
	t.timestamp, t.stat = parseSpec(v, "timestamp.field"), parseSpec(v, "static.field")
	if !v.IsNull("static.value") {
		s := v.String("static.value")
		t.staticValue = &s
	}
	if t.topic == nil && t.partition == nil && t.offset == nil && t.timestamp == nil && t.stat == nil {
		return &connect.ConfigError{Message: "No field insertion configured"}
	}
	if t.stat != nil && t.staticValue == nil {
		return &connect.ConfigError{Name: "static.value", Value: nil, Message: "No value specified for static field: " + t.stat.name}
	}
	return nil
}

func (t *insertField) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	schema, data := t.side.get(r)
	if data == nil {
		return r, nil
	}
	if t.offset != nil && r.KafkaOffset == nil {
		return nil, dataErrorf("Only SinkRecord supported for [%s], found: org.apache.kafka.connect.source.SourceRecord", insertPurpose)
	}
	if schema == nil {
		m, err := requireMap(data, insertPurpose)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m)+5)
		for k, v := range m {
			out[k] = v
		}
		if t.topic != nil {
			out[t.topic.name] = r.Topic
		}
		if t.partition != nil && r.KafkaPartition != nil {
			out[t.partition.name] = *r.KafkaPartition
		}
		if t.offset != nil {
			out[t.offset.name] = *r.KafkaOffset
		}
		if t.timestamp != nil && !r.Timestamp.IsZero() {
			out[t.timestamp.name] = r.Timestamp.UnixMilli()
		}
		if t.stat != nil && t.staticValue != nil {
			out[t.stat.name] = *t.staticValue
		}
		return t.side.with(r, nil, out), nil
	}
	m, err := requireStruct(schema, data, insertPurpose)
	if err != nil {
		return nil, err
	}
	ns := copyBasics(schema, connect.SchemaTypeStruct)
	ns.Fields = append(ns.Fields, schema.Fields...)
	out := make(map[string]any, len(m)+5)
	for _, f := range schema.Fields {
		out[f.Name] = m[f.Name]
	}
	add := func(spec *insertionSpec, typ string, value any) {
		if spec == nil {
			return
		}
		ns.Fields = append(ns.Fields, connect.Field{Name: spec.name, Schema: &connect.Schema{Type: typ, Optional: spec.optional}})
		out[spec.name] = value
	}
	add(t.topic, connect.SchemaTypeString, r.Topic)
	var partition any
	if r.KafkaPartition != nil {
		partition = *r.KafkaPartition
	}
	add(t.partition, connect.SchemaTypeInt32, partition)
	if t.offset != nil {
		add(t.offset, connect.SchemaTypeInt64, *r.KafkaOffset)
	}
	if t.timestamp != nil {
		ns.Fields = append(ns.Fields, connect.Field{Name: t.timestamp.name, Schema: timestampSchema(t.timestamp.optional)})
		var ts any
		if !r.Timestamp.IsZero() {
			ts = r.Timestamp.UnixMilli()
		}
		out[t.timestamp.name] = ts
	}
	if t.stat != nil {
		add(t.stat, connect.SchemaTypeString, *t.staticValue)
	}
	return t.side.with(r, ns, out), nil
}

func (*insertField) Close() error { return nil }
