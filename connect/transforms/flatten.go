package transforms

import (
	"sort"

	"github.com/sluice-io/sluice/connect"
)

// FlattenClass is Flatten's class name (with $Key or $Value).
const FlattenClass = "org.apache.kafka.connect.transforms.Flatten"

func flattenDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "delimiter", Type: connect.TypeString, Default: ".", Importance: connect.ImportanceMedium,
			Documentation: "Delimiter to insert between field names from the input record when generating field names for the output record"})
}

// flatten is Kafka's Flatten: nested structs (with a schema) or maps
// (without) become top-level fields named by their path, joined by the
// delimiter. A null key or value passes.
type flatten struct {
	side      side
	delimiter string
}

const flattenPurpose = "flattening"

func (t *flatten) Configure(props map[string]string) error {
	v, err := flattenDef().Parse(props)
	if err != nil {
		return err
	}
	t.delimiter = v.String("delimiter")
	return nil
}

func (t *flatten) name(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + t.delimiter + field
}

func (t *flatten) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	schema, data := t.side.get(r)
	if data == nil {
		return r, nil
	}
	if schema == nil {
		m, err := requireMap(data, flattenPurpose)
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		if err := t.flattenMap(m, "", out); err != nil {
			return nil, err
		}
		return t.side.with(r, nil, out), nil
	}
	m, err := requireStruct(schema, data, flattenPurpose)
	if err != nil {
		return nil, err
	}
	ns := copyBasics(schema, connect.SchemaTypeStruct)
	out := map[string]any{}
	t.flattenStruct(schema, m, "", false, ns, out)
	return t.side.with(r, ns, out), nil
}

func (t *flatten) flattenMap(m map[string]any, prefix string, out map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		name, v := t.name(prefix, k), m[k]
		if v == nil {
			out[name] = nil
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			if err := t.flattenMap(x, name, out); err != nil {
				return err
			}
		default:
			if inferType(v) == "" {
				return dataErrorf("Flatten transformation does not support class %s for record without schemas (for field %s).", javaClassName(v), name)
			}
			out[name] = v
		}
	}
	return nil
}

// flattenStruct adds s's fields (m their values, nil for a null struct)
// to ns and out; a field under an optional struct becomes optional.
func (t *flatten) flattenStruct(s *connect.Schema, m map[string]any, prefix string, optional bool, ns *connect.Schema, out map[string]any) {
	for _, f := range s.Fields {
		name := t.name(prefix, f.Name)
		var v any
		if m != nil {
			v = m[f.Name]
		}
		if f.Schema.Type == connect.SchemaTypeStruct {
			sub, _ := v.(map[string]any)
			t.flattenStruct(f.Schema, sub, name, optional || f.Schema.Optional, ns, out)
			continue
		}
		fs := f.Schema
		if optional && !fs.Optional {
			c := *fs
			c.Optional = true
			fs = &c
		}
		ns.Fields = append(ns.Fields, connect.Field{Name: name, Schema: fs})
		out[name] = v
	}
}

func (*flatten) Close() error { return nil }
