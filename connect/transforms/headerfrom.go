package transforms

import (
	"slices"

	"github.com/sluice-io/sluice/connect"
)

// HeaderFromClass is HeaderFrom's class name (with $Key or $Value).
const HeaderFromClass = "org.apache.kafka.connect.transforms.HeaderFrom"

func headerFromDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.TypeList, Required: true, Validator: nonEmptyList{},
			Importance: connect.ImportanceHigh, Documentation: "Field names in the record whose values are to be copied or moved to headers."}).
		Define(connect.ConfigKey{Name: "headers", Type: connect.TypeList, Required: true, Validator: nonEmptyList{},
			Importance: connect.ImportanceHigh, Documentation: "Header names, in the same order as the field names listed in the fields configuration property."}).
		Define(connect.ConfigKey{Name: "operation", Type: connect.TypeString, Required: true, Validator: connect.In("move", "copy"),
			Importance: connect.ImportanceHigh, Documentation: "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value)."}).
		Define(replaceNullKey())
}

// nonEmptyList is Kafka's NonEmptyListValidator ("non-empty list").
type nonEmptyList struct{}

func (nonEmptyList) EnsureValid(name string, value any) error {
	if l, _ := value.([]string); len(l) == 0 {
		return connect.InvalidValue(name, value, "Empty list")
	}
	return nil
}

// headerFrom is Kafka's HeaderFrom: fields of the key or value become
// headers (written by the connector's header converter), copied or moved
// out of the data.
type headerFrom struct {
	side            side
	fields, headers []string
	move            bool
}

func (t *headerFrom) Configure(props map[string]string) error {
	v, err := headerFromDef().Parse(props)
	if err != nil {
		return err
	}
	t.fields, t.headers, t.move = v.List("fields"), v.List("headers"), v.String("operation") == "move"
	if len(t.fields) != len(t.headers) {
		return &connect.ConfigError{Message: "'fields' config must have the same number of elements as 'headers' config."}
	}
	return nil
}

func (t *headerFrom) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	schema, data := t.side.get(r)
	purpose := "header copy"
	if t.move {
		purpose = "header move"
	}
	var m map[string]any
	var err error
	if schema == nil {
		m, err = requireMap(data, purpose)
	} else {
		m, err = requireStruct(schema, data, purpose)
	}
	if err != nil {
		return nil, err
	}
	headers := slices.Clone(r.Headers)
	for i, f := range t.fields {
		var fs *connect.Schema
		if schema != nil {
			if sf, ok := field(schema, f); ok {
				fs = sf.Schema
			}
		}
		headers = append(headers, typedHeader(t.headers[i], fs, m[f]))
	}
	out := t.side.with(r, schema, data)
	out.Headers = headers
	if !t.move {
		return out, nil
	}
	moved := set(t.fields)
	rest := make(map[string]any, len(m))
	for k, v := range m {
		if !moved[k] {
			rest[k] = v
		}
	}
	if schema == nil {
		return t.side.with(out, nil, rest), nil
	}
	ns := copyBasics(schema, connect.SchemaTypeStruct)
	for _, f := range schema.Fields {
		if !moved[f.Name] {
			ns.Fields = append(ns.Fields, f)
		}
	}
	return t.side.with(out, ns, rest), nil
}

func (*headerFrom) Close() error { return nil }
