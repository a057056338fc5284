package transforms

import (
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/connect"
)

// MaskFieldClass is MaskField's class name (with $Key or $Value).
const MaskFieldClass = "org.apache.kafka.connect.transforms.MaskField"

func maskFieldDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.TypeList, Required: true, Validator: connect.DistinctList{},
			Importance: connect.ImportanceHigh, Documentation: "Names of fields to mask."}).
		Define(connect.ConfigKey{Name: "replacement", Type: connect.TypeString, Default: nil, Validator: connect.IfSet{V: connect.NonEmptyString{}},
			Importance: connect.ImportanceLow, Documentation: "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only)."}).
		Define(replaceNullKey())
}

// maskField is Kafka's MaskField: the named fields get the empty value of
// their type (false, 0, "", an empty list or map), or the replacement
// converted to it.
type maskField struct {
	side        side
	fields      map[string]bool
	names       []string
	replacement *string
}

const maskPurpose = "mask fields"

func (t *maskField) Configure(props map[string]string) error {
	v, err := maskFieldDef().Parse(props)
	if err != nil {
		return err
	}
	t.names = v.List("fields")
	t.fields = set(t.names)
	if !v.IsNull("replacement") {
		s := v.String("replacement")
		t.replacement = &s
	}
	return nil
}

func (t *maskField) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	schema, data := t.side.get(r)
	if schema == nil {
		m, err := requireMap(data, maskPurpose)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, v := range m {
			out[k] = v
		}
		// As Kafka does: a field the map lacks is added, null.
		for _, name := range t.names {
			masked, err := t.masked(m[name])
			if err != nil {
				return nil, err
			}
			out[name] = masked
		}
		return t.side.with(r, nil, out), nil
	}
	m, err := requireStruct(schema, data, maskPurpose)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(m))
	for _, f := range schema.Fields {
		v := m[f.Name]
		if t.fields[f.Name] {
			if v, err = t.masked(v); err != nil {
				return nil, err
			}
		}
		out[f.Name] = v
	}
	return t.side.with(r, schema, out), nil
}

func (t *maskField) masked(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if t.replacement == nil {
		switch v.(type) {
		case bool:
			return false, nil
		case int8:
			return int8(0), nil
		case int16:
			return int16(0), nil
		case int32:
			return int32(0), nil
		case int64:
			return int64(0), nil
		case int:
			return 0, nil
		case float32:
			return float32(0), nil
		case float64:
			return float64(0), nil
		case string:
			return "", nil
		case []any:
			return []any{}, nil
		case map[string]any:
			return map[string]any{}, nil
		}
		return nil, dataErrorf("Cannot mask value of type: class %s", javaClassName(v))
	}
	rep := *t.replacement
	parse := func(bits int) (int64, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(rep), 10, bits)
		if err != nil {
			return 0, dataErrorf("Unable to convert %s (class java.lang.String) to number", rep)
		}
		return n, nil
	}
	switch v.(type) {
	case string:
		return rep, nil
	case int8:
		n, err := parse(8)
		return int8(n), err
	case int16:
		n, err := parse(16)
		return int16(n), err
	case int32:
		n, err := parse(32)
		return int32(n), err
	case int64, int:
		return parse(64)
	case float32, float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(rep), 64)
		if err != nil {
			return nil, dataErrorf("Unable to convert %s (class java.lang.String) to number", rep)
		}
		if _, ok := v.(float32); ok {
			return float32(f), nil
		}
		return f, nil
	}
	return nil, dataErrorf("Cannot mask value of type class %s with custom replacement.", javaClassName(v))
}

func (*maskField) Close() error { return nil }
