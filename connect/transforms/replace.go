package transforms

import (
	"strings"

	"github.com/sluice-io/sluice/connect"
)

// ReplaceFieldClass is ReplaceField's class name (with $Key or $Value).
const ReplaceFieldClass = "org.apache.kafka.connect.transforms.ReplaceField"

func replaceFieldDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "exclude", Type: connect.TypeList, Default: []string{}, Validator: connect.DistinctList{EmptyAllowed: true},
			Importance: connect.ImportanceMedium, Documentation: "Fields to exclude. This takes precedence over the fields to include."}).
		Define(connect.ConfigKey{Name: "include", Type: connect.TypeList, Default: []string{}, Validator: connect.DistinctList{EmptyAllowed: true},
			Importance: connect.ImportanceMedium, Documentation: "Fields to include. If specified, only these fields will be used."}).
		Define(connect.ConfigKey{Name: "renames", Type: connect.TypeList, Default: []string{}, Validator: renamesValidator{},
			Importance: connect.ImportanceMedium, Documentation: "Field rename mappings."}).
		Define(replaceNullKey())
}

// renamesValidator checks "from:to" pairs (Kafka's list of colon-delimited
// pairs).
type renamesValidator struct{}

func (renamesValidator) EnsureValid(name string, value any) error {
	l, _ := value.([]string)
	if _, err := parseRenames(l); err != nil {
		return connect.InvalidValue(name, value, err.Error())
	}
	return nil
}

func parseRenames(l []string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range l {
		// Java's split drops trailing empty strings: "a:b:" is a pair,
		// "a:" is not.
		parts := strings.Split(pair, ":")
		for len(parts) > 0 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		if len(parts) != 2 {
			return nil, &connect.ConfigError{Message: "Invalid rename mapping: " + pair}
		}
		out[parts[0]] = parts[1]
	}
	return out, nil
}

// replaceField is Kafka's ReplaceField: it keeps the fields include names
// (all when empty) but those exclude names, and renames them. A null key
// or value passes.
type replaceField struct {
	side             side
	exclude, include map[string]bool
	renames          map[string]string
}

const replacePurpose = "field replacement"

func (t *replaceField) Configure(props map[string]string) error {
	v, err := replaceFieldDef().Parse(props)
	if err != nil {
		return err
	}
	t.exclude, t.include = set(v.List("exclude")), set(v.List("include"))
	t.renames, err = parseRenames(v.List("renames"))
	return err
}

func set(l []string) map[string]bool {
	out := make(map[string]bool, len(l))
	for _, s := range l {
		out[s] = true
	}
	return out
}

func (t *replaceField) keep(name string) bool {
	return !t.exclude[name] && (len(t.include) == 0 || t.include[name])
}

func (t *replaceField) renamed(name string) string {
	if to, ok := t.renames[name]; ok {
		return to
	}
	return name
}

func (t *replaceField) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	schema, data := t.side.get(r)
	if data == nil {
		return r, nil
	}
	if schema == nil {
		m, err := requireMap(data, replacePurpose)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, v := range m {
			if t.keep(k) {
				out[t.renamed(k)] = v
			}
		}
		return t.side.with(r, nil, out), nil
	}
	m, err := requireStruct(schema, data, replacePurpose)
	if err != nil {
		return nil, err
	}
	ns := copyBasics(schema, connect.SchemaTypeStruct)
	out := make(map[string]any, len(m))
	for _, f := range schema.Fields {
		if t.keep(f.Name) {
			ns.Fields = append(ns.Fields, connect.Field{Name: t.renamed(f.Name), Schema: f.Schema})
			out[t.renamed(f.Name)] = m[f.Name]
		}
	}
	return t.side.with(r, ns, out), nil
}

func (*replaceField) Close() error { return nil }
