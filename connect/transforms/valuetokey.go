package transforms

import (
	"github.com/sluice-io/sluice/connect"
)

// Class names of ValueToKey and SetSchemaMetadata.
const (
	ValueToKeyClass        = "org.apache.kafka.connect.transforms.ValueToKey"
	SetSchemaMetadataClass = "org.apache.kafka.connect.transforms.SetSchemaMetadata"
)

func valueToKeyDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.TypeList, Required: true, Validator: connect.DistinctList{},
			Importance: connect.ImportanceHigh, Documentation: "Field names on the record value to extract as the record key."}).
		Define(replaceNullKey()).
		Define(fieldSyntaxKey())
}

// valueToKey is Kafka's ValueToKey: the key becomes a struct or map of
// fields copied from the value.
type valueToKey struct {
	fields []string
	paths  []fieldPath
}

const valueToKeyPurpose = "copying fields from value to key"

func (t *valueToKey) Configure(props map[string]string) error {
	v, err := valueToKeyDef().Parse(props)
	if err != nil {
		return err
	}
	// Kafka keeps the first of repeated names (with a warning).
	seen := map[string]bool{}
	for _, f := range v.List("fields") {
		if !seen[f] {
			seen[f] = true
			t.fields = append(t.fields, f)
			t.paths = append(t.paths, newFieldPath(f, v.String("field.syntax.version")))
		}
	}
	return nil
}

func (t *valueToKey) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	if r.ValueSchema == nil {
		m, err := requireMap(r.Value, valueToKeyPurpose)
		if err != nil {
			return nil, err
		}
		key := make(map[string]any, len(t.fields))
		for i, f := range t.fields {
			key[f] = t.paths[i].valueFrom(m)
		}
		out := *r
		out.KeySchema, out.Key = nil, key
		return &out, nil
	}
	m, err := requireStruct(r.ValueSchema, r.Value, valueToKeyPurpose)
	if err != nil {
		return nil, err
	}
	ks := &connect.Schema{Type: connect.SchemaTypeStruct}
	key := make(map[string]any, len(t.fields))
	for i, f := range t.fields {
		fs, ok := t.paths[i].schemaFrom(r.ValueSchema)
		if !ok {
			return nil, dataErrorf("Field does not exist: %s", f)
		}
		ks.Fields = append(ks.Fields, connect.Field{Name: f, Schema: fs})
		key[f] = t.paths[i].valueFrom(m)
	}
	out := *r
	out.KeySchema, out.Key = ks, key
	return &out, nil
}

func (*valueToKey) Close() error { return nil }

func setSchemaMetadataDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "schema.name", Type: connect.TypeString, Default: nil, Importance: connect.ImportanceHigh,
			Documentation: "Schema name to set."}).
		Define(connect.ConfigKey{Name: "schema.version", Type: connect.TypeInt, Default: nil, Importance: connect.ImportanceHigh,
			Documentation: "Schema version to set."}).
		Define(replaceNullKey())
}

// setSchemaMetadata is Kafka's SetSchemaMetadata: the key's or value's
// schema gets a new name and/or version; the data is unchanged.
type setSchemaMetadata struct {
	side    side
	name    *string
	version *int32
}

func (t *setSchemaMetadata) Configure(props map[string]string) error {
	v, err := setSchemaMetadataDef().Parse(props)
	if err != nil {
		return err
	}
	if !v.IsNull("schema.name") {
		s := v.String("schema.name")
		t.name = &s
	}
	if !v.IsNull("schema.version") {
		n := int32(v.Int("schema.version"))
		t.version = &n
	}
	if t.name == nil && t.version == nil {
		return &connect.ConfigError{Message: "Neither schema name nor version configured"}
	}
	return nil
}

func (t *setSchemaMetadata) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	schema, data := t.side.get(r)
	if schema == nil && data == nil {
		return r, nil // a tombstone passes
	}
	if schema == nil {
		return nil, dataErrorf("Schema required for [updating schema metadata]")
	}
	ns := *schema
	if t.name != nil {
		ns.Name = *t.name
	}
	if t.version != nil {
		v := *t.version
		ns.Version = &v
	}
	return t.side.with(r, &ns, data), nil
}

func (*setSchemaMetadata) Close() error { return nil }
