package transforms

import (
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/connect"
)

// CastClass is Cast's class name (with $Key or $Value).
const CastClass = "org.apache.kafka.connect.transforms.Cast"

// castOutputs are the types Cast casts to, in Kafka's order.
var castOutputs = []string{"INT8", "INT16", "INT32", "INT64", "FLOAT32", "FLOAT64", "BOOLEAN", "STRING"}

// schemaTypes are Kafka's Schema.Type constants.
var schemaTypes = []string{"INT8", "INT16", "INT32", "INT64", "FLOAT32", "FLOAT64", "BOOLEAN", "STRING", "BYTES", "ARRAY", "MAP", "STRUCT"}

// wholeValue is the spec key of a cast of the whole key or value.
const wholeValue = ""

func castDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "spec", Type: connect.TypeList, Required: true, Validator: castSpecValidator{},
			Importance: connect.ImportanceHigh, Documentation: "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string."}).
		Define(replaceNullKey())
}

// castSpecValidator checks the spec as Cast's configure does.
type castSpecValidator struct{}

func (castSpecValidator) EnsureValid(_ string, value any) error {
	l, _ := value.([]string)
	_, err := parseCasts(l)
	return err
}

// parseCasts reads a spec into field → Kafka type name (wholeValue for a
// cast of the whole value), with Kafka's messages.
func parseCasts(spec []string) (map[string]string, error) {
	out := map[string]string{}
	whole := false
	for _, m := range spec {
		parts := strings.Split(m, ":")
		for len(parts) > 1 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		if len(parts) > 2 {
			return nil, connect.InvalidValue("renames", spec, "Invalid rename mapping: "+m)
		}
		name, typ := wholeValue, strings.TrimSpace(parts[0])
		if len(parts) == 2 {
			name, typ = strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])
		} else {
			whole = true
		}
		upper := strings.ToUpper(typ)
		if !slices.Contains(schemaTypes, upper) {
			return nil, &connect.ConfigError{Name: "Invalid type found in casting spec: " + typ,
				Value: "java.lang.IllegalArgumentException: No enum constant org.apache.kafka.connect.data.Schema.Type." + upper}
		}
		if !slices.Contains(castOutputs, upper) {
			return nil, &connect.ConfigError{Message: "Cast transformation does not support casting to " + upper +
				"; supported types are [" + strings.Join(castOutputs, ", ") + "]"}
		}
		out[name] = upper
	}
	if whole && len(spec) > 1 {
		return nil, &connect.ConfigError{Message: "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec"}
	}
	if len(out) == 0 {
		return nil, &connect.ConfigError{Message: "Must specify at least one field to cast."}
	}
	return out, nil
}

// cast is Kafka's Cast: fields of a struct or map, or the whole key or
// value, become another primitive type, with Java's conversions (numbers
// narrow as Java narrows them, strings parse, booleans are 1 or 0).
type cast struct {
	side  side
	casts map[string]string
}

const castPurpose = "cast types"

func (t *cast) Configure(props map[string]string) error {
	v, err := castDef().Parse(props)
	if err != nil {
		return err
	}
	t.casts, err = parseCasts(v.List("spec"))
	return err
}

func (t *cast) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	schema, data := t.side.get(r)
	if data == nil {
		return r, nil
	}
	whole, isWhole := t.casts[wholeValue]
	if schema == nil {
		if isWhole {
			v, err := castValue(nil, data, whole)
			if err != nil {
				return nil, err
			}
			return t.side.with(r, nil, v), nil
		}
		m, err := requireMap(data, castPurpose)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, v := range m {
			out[k] = v
		}
		for f, typ := range t.casts {
			v, err := castValue(nil, m[f], typ)
			if err != nil {
				return nil, err
			}
			out[f] = v
		}
		return t.side.with(r, nil, out), nil
	}
	if isWhole {
		v, err := castValue(schema, data, whole)
		if err != nil {
			return nil, err
		}
		ns := copyBasics(schema, strings.ToLower(whole))
		return t.side.with(r, ns, v), nil
	}
	m, err := requireStruct(schema, data, castPurpose)
	if err != nil {
		return nil, err
	}
	ns := copyBasics(schema, connect.SchemaTypeStruct)
	out := make(map[string]any, len(m))
	for _, f := range schema.Fields {
		typ, ok := t.casts[f.Name]
		if !ok {
			ns.Fields = append(ns.Fields, f)
			out[f.Name] = m[f.Name]
			continue
		}
		ns.Fields = append(ns.Fields, connect.Field{Name: f.Name, Schema: &connect.Schema{Type: strings.ToLower(typ), Optional: f.Schema.Optional}})
		v, err := castValue(f.Schema, m[f.Name], typ)
		if err != nil {
			return nil, err
		}
		out[f.Name] = v
	}
	return t.side.with(r, ns, out), nil
}

func (*cast) Close() error { return nil }

// castInputs are the types Cast casts from.
var castInputs = []string{"INT8", "INT16", "INT32", "INT64", "FLOAT32", "FLOAT64", "BOOLEAN", "STRING", "BYTES"}

// castValue casts v (of schema s, or inferred from v) to typ.
func castValue(s *connect.Schema, v any, typ string) (any, error) {
	if v == nil {
		return nil, nil
	}
	in := ""
	if s != nil {
		in = strings.ToUpper(s.Type)
	} else if in = inferType(v); in == "" {
		return nil, dataErrorf("Cast transformation was passed a value of type class %s which is not supported by Connect's data API", javaClassName(v))
	}
	if !slices.Contains(castInputs, in) {
		return nil, dataErrorf("Cast transformation does not support casting from %s; supported types are [%s]", in, strings.Join(castInputs, ", "))
	}
	switch typ {
	case "STRING":
		return castString(v), nil
	case "BOOLEAN":
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			return strings.EqualFold(x, "true"), nil
		}
		if n, ok := asInt64(v); ok {
			return n != 0, nil
		}
	case "FLOAT32", "FLOAT64":
		f, err := castFloat(v)
		if err != nil {
			return nil, err
		}
		if typ == "FLOAT32" {
			return float32(f), nil
		}
		return f, nil
	default:
		n, err := castInt(v)
		if err != nil {
			return nil, err
		}
		if _, isFloat := v.(float64); isFloat || isFloat32(v) {
			if typ != "INT64" {
				// Java's byteValue, shortValue and intValue of a double go
				// through (int), which saturates at the int range.
				n = max(min(n, math.MaxInt32), math.MinInt32)
			}
		}
		switch typ {
		case "INT8":
			return int8(n), nil
		case "INT16":
			return int16(n), nil
		case "INT32":
			return int32(n), nil
		}
		return n, nil
	}
	return nil, dataErrorf("Unexpected type in Cast transformation: class %s", javaClassName(v))
}

func isFloat32(v any) bool {
	_, ok := v.(float32)
	return ok
}

// inferType is Kafka's ConnectSchema.schemaType of a schemaless value.
func inferType(v any) string {
	switch v.(type) {
	case int8:
		return "INT8"
	case int16:
		return "INT16"
	case int32:
		return "INT32"
	case int64, int:
		return "INT64"
	case float32:
		return "FLOAT32"
	case float64:
		return "FLOAT64"
	case bool:
		return "BOOLEAN"
	case string:
		return "STRING"
	case []byte:
		return "BYTES"
	case []any:
		return "ARRAY"
	case map[string]any:
		return "MAP"
	}
	return ""
}

// asInt64 is Java's (long) of a number: an integer as it is, a float
// truncated as Java casts it.
func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case float32:
		return javaLong(float64(x)), true
	case float64:
		return javaLong(x), true
	}
	return connect.IntegerValue(v)
}

// javaLong is Java's (long) of a double: truncated, saturated, NaN is 0.
func javaLong(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// castInt is the long a value narrows from (a double truncated and
// saturated as Java's (long) does).
func castInt(v any) (int64, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, dataErrorf("Value %s is not a valid integer", x)
		}
		return n, nil
	case float32, float64:
		f, _ := castFloat(x)
		if math.IsNaN(f) {
			return 0, nil
		}
		// (int) saturates at the int range before byte/short narrowing.
		return javaLong(f), nil
	}
	n, ok := asInt64(v)
	if !ok {
		return 0, dataErrorf("Unexpected type in Cast transformation: class %s", javaClassName(v))
	}
	return n, nil
}

func castFloat(v any) (float64, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, dataErrorf("Value %s is not a valid float", x)
		}
		return f, nil
	}
	n, ok := asInt64(v)
	if !ok {
		return 0, dataErrorf("Unexpected type in Cast transformation: class %s", javaClassName(v))
	}
	return float64(n), nil
}

// castString is Java's toString of v; bytes in base64, as Kafka's Cast.
func castString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case float32:
		return connect.JavaFloat(x)
	case float64:
		return connect.JavaDouble(x)
	case bool:
		return strconv.FormatBool(x)
	}
	if n, ok := asInt64(v); ok {
		return strconv.FormatInt(n, 10)
	}
	return connect.JavaString(v)
}
