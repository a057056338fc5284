package transforms

import (
	"fmt"
	"maps"
	"slices"

	"github.com/sluice-io/sluice/connect"
)

// side is the part of a record a $Key or $Value transformation works on.
type side int

const (
	keySide side = iota
	valueSide
)

// classSuffix is the nested class of a side's variant, as Kafka names them.
func (s side) classSuffix() string {
	if s == keySide {
		return "$Key"
	}
	return "$Value"
}

// get returns the side's schema and data.
func (s side) get(r *connect.TransformRecord) (*connect.Schema, any) {
	if s == keySide {
		return r.KeySchema, r.Key
	}
	return r.ValueSchema, r.Value
}

// with returns a copy of r whose side is schema and data (Kafka's
// newRecord, which keeps every other part).
func (s side) with(r *connect.TransformRecord, schema *connect.Schema, data any) *connect.TransformRecord {
	out := *r
	if s == keySide {
		out.KeySchema, out.Key = schema, data
	} else {
		out.ValueSchema, out.Value = schema, data
	}
	return &out
}

// javaClassName is the Java class Kafka Connect's data would have for v, as
// its error messages name it (Requirements.nullSafeClassName).
func javaClassName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "java.lang.String"
	case bool:
		return "java.lang.Boolean"
	case int8:
		return "java.lang.Byte"
	case int16:
		return "java.lang.Short"
	case int32:
		return "java.lang.Integer"
	case int64, int:
		return "java.lang.Long"
	case float32:
		return "java.lang.Float"
	case float64:
		return "java.lang.Double"
	case []byte:
		return "[B"
	case []any:
		return "java.util.ArrayList"
	case map[string]any:
		return "java.util.HashMap"
	}
	return fmt.Sprintf("%T", v)
}

// dataError is Kafka Connect's DataException.
type dataError struct{ msg string }

func (e *dataError) Error() string { return e.msg }

func dataErrorf(format string, args ...any) error {
	return &dataError{msg: fmt.Sprintf(format, args...)}
}

// requireMap is Kafka's Requirements.requireMap: schemaless data must be a
// map.
func requireMap(v any, purpose string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, dataErrorf("Only Map objects supported in absence of schema for [%s], found: %s", purpose, javaClassName(v))
	}
	return m, nil
}

// requireStruct is Kafka's Requirements.requireStruct: data with a schema
// must be a struct (a map, for the struct schema's fields).
func requireStruct(schema *connect.Schema, v any, purpose string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok || schema.Type != connect.SchemaTypeStruct {
		return nil, dataErrorf("Only Struct objects supported for [%s], found: %s", purpose, structClassName(schema, v))
	}
	return m, nil
}

// structClassName names v as Kafka would when it is not a Struct.
func structClassName(schema *connect.Schema, v any) string {
	if _, ok := v.(map[string]any); ok && schema.Type == connect.SchemaTypeMap {
		return "java.util.HashMap"
	}
	return javaClassName(v)
}

// copyBasics is a new schema of type t with s's name, version, doc and
// parameters (Kafka's SchemaUtil.copySchemaBasics), optional when s is (as
// every transformation that copies them then makes it).
func copyBasics(s *connect.Schema, t string) *connect.Schema {
	out := &connect.Schema{Type: t, Name: s.Name, Doc: s.Doc, Parameters: maps.Clone(s.Parameters), Optional: s.Optional}
	if s.Version != nil {
		v := *s.Version
		out.Version = &v
	}
	return out
}

// field returns the field of a struct schema named name.
func field(s *connect.Schema, name string) (connect.Field, bool) {
	i := slices.IndexFunc(s.Fields, func(f connect.Field) bool { return f.Name == name })
	if i < 0 {
		return connect.Field{}, false
	}
	return s.Fields[i], true
}
