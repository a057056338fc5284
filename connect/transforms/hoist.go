package transforms

import (
	"github.com/sluice-io/sluice/connect"
)

// Class names of HoistField and ExtractField (their $Key and $Value
// variants add the suffix).
const (
	HoistFieldClass   = "org.apache.kafka.connect.transforms.HoistField"
	ExtractFieldClass = "org.apache.kafka.connect.transforms.ExtractField"
)

const replaceNullDoc = "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."

// replaceNullKey is the replace.null.with.default key many transformations
// share. Sluice's schemas have no default values, so it changes nothing.
func replaceNullKey() connect.ConfigKey {
	return connect.ConfigKey{Name: "replace.null.with.default", Type: connect.TypeBoolean, Default: true,
		Importance: connect.ImportanceMedium, Documentation: replaceNullDoc}
}

func hoistFieldDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.TypeString, Required: true, Importance: connect.ImportanceMedium,
			Documentation: "Field name for the single field that will be created in the resulting Struct or Map."})
}

// hoistField is Kafka's HoistField: the key or value becomes the only
// field, named field, of a struct (with a schema) or a map (without).
type hoistField struct {
	side  side
	field string
}

func (t *hoistField) Configure(props map[string]string) error {
	v, err := hoistFieldDef().Parse(props)
	if err != nil {
		return err
	}
	t.field = v.String("field")
	return nil
}

func (t *hoistField) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	schema, data := t.side.get(r)
	if schema == nil {
		return t.side.with(r, nil, map[string]any{t.field: data}), nil
	}
	hoisted := &connect.Schema{Type: connect.SchemaTypeStruct, Fields: []connect.Field{{Name: t.field, Schema: schema}}}
	return t.side.with(r, hoisted, map[string]any{t.field: data}), nil
}

func (*hoistField) Close() error { return nil }

const fieldSyntaxDoc = "Defines the version of the syntax to access fields. If set to <code>V1</code>, then the field paths are limited to access the elements at the root level of the struct or map. If set to <code>V2</code>, the syntax will support accessing nested elements. To access nested elements, dotted notation is used. If dots are already included in the field name, then backtick pairs can be used to wrap field names containing dots. E.g. to access the subfield <code>baz</code> from a field named \"foo.bar\" in a struct/map the following format can be used to access its elements: \"<code>foo.bar</code>.baz\"."

// fieldSyntaxKey is field.syntax.version (KIP-821).
func fieldSyntaxKey() connect.ConfigKey {
	return connect.ConfigKey{Name: "field.syntax.version", Type: connect.TypeString, Default: "V1",
		Validator: connect.InCaseInsensitive("V1", "V2"), Importance: connect.ImportanceHigh, Documentation: fieldSyntaxDoc}
}

func extractFieldDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.TypeString, Required: true, Importance: connect.ImportanceMedium,
			Documentation: "Field name to extract."}).
		Define(replaceNullKey()).
		Define(fieldSyntaxKey())
}

// extractField is Kafka's ExtractField: the key or value becomes the value
// of one of its fields (a nested one with field.syntax.version=V2).
type extractField struct {
	side side
	name string
	path fieldPath
}

const extractPurpose = "field extraction"

func (t *extractField) Configure(props map[string]string) error {
	v, err := extractFieldDef().Parse(props)
	if err != nil {
		return err
	}
	t.name = v.String("field")
	t.path = newFieldPath(t.name, v.String("field.syntax.version"))
	return nil
}

func (t *extractField) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	schema, data := t.side.get(r)
	if schema == nil {
		if data == nil {
			return t.side.with(r, nil, nil), nil
		}
		m, err := requireMap(data, extractPurpose)
		if err != nil {
			return nil, err
		}
		return t.side.with(r, nil, t.path.valueFrom(m)), nil
	}
	var m map[string]any
	if data != nil {
		var err error
		if m, err = requireStruct(schema, data, extractPurpose); err != nil {
			return nil, err
		}
	} else if schema.Type != connect.SchemaTypeStruct {
		return nil, dataErrorf("Only Struct objects supported for [%s], found: %s", extractPurpose, javaClassName(data))
	}
	fs, ok := t.path.schemaFrom(schema)
	if !ok {
		return nil, dataErrorf("Unknown field: %s", t.name)
	}
	if m == nil {
		return t.side.with(r, fs, nil), nil
	}
	return t.side.with(r, fs, t.path.valueFrom(m)), nil
}

func (*extractField) Close() error { return nil }
