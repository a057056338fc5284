package transforms

import (
	"strings"

	"github.com/sluice-io/sluice/connect"
)

// fieldPath is a field name as field.syntax.version reads it (Kafka's
// SingleFieldPath): with V1 the name of a top-level field; with V2 a
// dotted path to a nested one, a segment in backticks when it holds dots.
type fieldPath []string

func newFieldPath(name, version string) fieldPath {
	if !strings.EqualFold(version, "V2") {
		return fieldPath{name}
	}
	var out fieldPath
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '`' && !quoted && cur.Len() == 0:
			quoted = true
		case c == '`' && quoted && (i+1 == len(name) || name[i+1] == '.'):
			quoted = false
		case c == '.' && !quoted:
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(out, cur.String())
}

// valueFrom is the value at the path in a struct or map, nil when a step
// is missing.
func (p fieldPath) valueFrom(m map[string]any) any {
	var cur any = m
	for _, step := range p {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[step]
	}
	return cur
}

// schemaFrom is the schema of the field at the path of a struct schema.
func (p fieldPath) schemaFrom(s *connect.Schema) (*connect.Schema, bool) {
	cur := s
	for _, step := range p {
		if cur == nil || cur.Type != connect.SchemaTypeStruct {
			return nil, false
		}
		f, ok := field(cur, step)
		if !ok {
			return nil, false
		}
		cur = f.Schema
	}
	return cur, true
}
