package converters

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/javatext"
)

// JsonConverter's read side: the envelope, the schema and the payload
// decoded into Connect data.

var errEnvelope = errors.New("JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain additional fields." +
	" If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.")

// ToConnectData implements connect.Converter.
func (c *JSON) ToConnectData(topic string, data []byte) (*connect.Schema, any, error) {
	if data == nil {
		return nil, nil, nil
	}
	if !c.schemasDisabled && c.read != nil {
		if schema, payload, ok, err := c.cachedEnvelope(data); ok {
			if err != nil {
				return nil, nil, err
			}
			v, err := toConnect(schema, payload, c.keepNull)
			return schema, v, err
		}
	}
	doc, err := decodeJSON(data)
	if err != nil {
		return nil, nil, fmt.Errorf("Converting byte[] to Kafka Connect data failed due to serialization error: %w", err)
	}
	if c.schemasDisabled {
		v, err := toConnect(nil, doc, c.keepNull)
		return nil, v, err
	}
	env, ok := doc.(map[string]any)
	_, hasSchema := env["schema"]
	_, hasPayload := env["payload"]
	if !ok || len(env) != 2 || !hasSchema || !hasPayload {
		return nil, nil, errEnvelope
	}
	schema, err := asConnectSchema(env["schema"])
	if err != nil {
		return nil, nil, err
	}
	v, err := toConnect(schema, env["payload"], c.keepNull)
	return schema, v, err
}

// decodeJSON decodes the first JSON value of data, numbers as json.Number
// (Jackson reads them exactly); what follows it is ignored, as Jackson's
// readTree ignores it.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return doc, nil
}

func asConnectSchema(node any) (*connect.Schema, error) {
	if node == nil {
		return nil, nil
	}
	m, ok := node.(map[string]any)
	t, _ := m["type"].(string)
	if !ok || t == "" {
		return nil, errors.New("Schema must contain 'type' field")
	}
	s := &connect.Schema{}
	switch t {
	case "float":
		s.Type = connect.SchemaTypeFloat32
	case "double":
		s.Type = connect.SchemaTypeFloat64
	case connect.SchemaTypeBoolean, connect.SchemaTypeInt8, connect.SchemaTypeInt16, connect.SchemaTypeInt32,
		connect.SchemaTypeInt64, connect.SchemaTypeBytes, connect.SchemaTypeString:
		s.Type = t
	case connect.SchemaTypeArray:
		s.Type = t
		items, ok := m["items"]
		if !ok || items == nil {
			return nil, errors.New("Array schema did not specify the element type")
		}
		var err error
		if s.ValueSchema, err = asConnectSchema(items); err != nil {
			return nil, err
		}
	case connect.SchemaTypeMap:
		s.Type = t
		var err error
		if s.KeySchema, err = asConnectSchema(m["keys"]); err != nil {
			return nil, err
		}
		if s.ValueSchema, err = asConnectSchema(m["values"]); err != nil {
			return nil, err
		}
	case connect.SchemaTypeStruct:
		s.Type = t
		fields, ok := m["fields"].([]any)
		if !ok {
			return nil, errors.New("Struct schema's \"fields\" argument is not an array.")
		}
		for _, f := range fields {
			fm, _ := f.(map[string]any)
			name, ok := fm["field"].(string)
			if !ok {
				return nil, errors.New("Struct schema's field name not specified properly")
			}
			fs, err := asConnectSchema(f)
			if err != nil {
				return nil, err
			}
			s.Fields = append(s.Fields, connect.Field{Name: name, Schema: fs})
		}
	default:
		return nil, fmt.Errorf("Unknown schema type: %s", t)
	}
	s.Optional, _ = m["optional"].(bool)
	s.Name, _ = m["name"].(string)
	s.Doc, _ = m["doc"].(string)
	if n, ok := m["version"].(json.Number); ok {
		if v, err := n.Int64(); err == nil {
			v32 := int32(v)
			s.Version = &v32
		}
	}
	if p, ok := m["parameters"].(map[string]any); ok {
		s.Parameters = map[string]string{}
		for k, v := range p {
			s.Parameters[k] = fmt.Sprint(v)
		}
	}
	if d, ok := m["default"]; ok && d != nil {
		v, err := toConnect(s, d, true)
		if err != nil {
			return nil, err
		}
		s.Default = v
	}
	return s, nil
}

// toConnect converts decoded JSON to Connect data: with a schema to that
// schema's Go types (int8…int64, float32/64, bool, string, []byte, []any,
// map[string]any or map[any]any); without one integers become int64 and
// other numbers float64, as JsonConverter infers. A null reads as the
// schema's default unless keepNull.
func toConnect(s *connect.Schema, node any, keepNull bool) (any, error) {
	if node == nil {
		if s != nil && s.Default != nil && !keepNull {
			return s.Default, nil
		}
		if s == nil || s.Optional {
			return nil, nil
		}
		return nil, fmt.Errorf("Invalid null value for required %s field", strings.ToUpper(s.Type))
	}
	if s == nil {
		switch x := node.(type) {
		case json.Number:
			if n, err := x.Int64(); err == nil && !strings.ContainsAny(x.String(), ".eE") {
				return n, nil
			}
			f, _ := x.Float64()
			return noNegativeZero(f), nil
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				v, err := toConnect(nil, e, keepNull)
				if err != nil {
					return nil, err
				}
				out[i] = v
			}
			return out, nil
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				v, err := toConnect(nil, e, keepNull)
				if err != nil {
					return nil, err
				}
				out[k] = v
			}
			return out, nil
		}
		return node, nil
	}
	mismatch := func() error { return fmt.Errorf("Invalid %s value: %v", strings.ToUpper(s.Type), node) }
	switch s.Type {
	case connect.SchemaTypeInt8, connect.SchemaTypeInt16, connect.SchemaTypeInt32, connect.SchemaTypeInt64:
		n, ok := node.(json.Number)
		if !ok {
			return nil, mismatch()
		}
		i, err := n.Int64()
		if err != nil {
			f, ferr := n.Float64()
			if ferr != nil {
				return nil, mismatch()
			}
			i = int64(f)
		}
		switch s.Type {
		case connect.SchemaTypeInt8:
			return int8(i), nil
		case connect.SchemaTypeInt16:
			return int16(i), nil
		case connect.SchemaTypeInt32:
			return int32(i), nil
		}
		return i, nil
	case connect.SchemaTypeFloat32, connect.SchemaTypeFloat64:
		n, ok := node.(json.Number)
		if !ok {
			return nil, mismatch()
		}
		f, err := n.Float64()
		if err != nil {
			return nil, mismatch()
		}
		f = noNegativeZero(f)
		if s.Type == connect.SchemaTypeFloat32 {
			return float32(f), nil
		}
		return f, nil
	case connect.SchemaTypeBoolean:
		b, ok := node.(bool)
		if !ok {
			return nil, mismatch()
		}
		return b, nil
	case connect.SchemaTypeString:
		str, ok := node.(string)
		if !ok {
			return nil, mismatch()
		}
		return str, nil
	case connect.SchemaTypeBytes:
		if n, ok := node.(json.Number); ok && s.Name == javatext.DecimalName {
			// decimal.format=NUMERIC's form, read whatever the setting
			// is, as Kafka's converter reads it.
			return decimalFromNumber(s, n)
		}
		str, ok := node.(string)
		if !ok {
			return nil, errors.New("Invalid bytes field")
		}
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			return nil, errors.New("Invalid bytes field")
		}
		return b, nil
	case connect.SchemaTypeArray:
		arr, ok := node.([]any)
		if !ok {
			return nil, mismatch()
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			v, err := toConnect(s.ValueSchema, e, keepNull)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case connect.SchemaTypeMap:
		return mapToConnect(s, node, keepNull)
	case connect.SchemaTypeStruct:
		obj, ok := node.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("Structs should be encoded as JSON objects, but found %T", node)
		}
		out := make(map[string]any, len(s.Fields))
		for _, f := range s.Fields {
			v, err := toConnect(f.Schema, obj[f.Name], keepNull)
			if err != nil {
				return nil, err
			}
			out[f.Name] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("Unknown schema type: %s", s.Type)
}

// noNegativeZero reads -0.0 as 0.0: Kafka's JsonConverter reads a JSON
// number with a fraction as a BigDecimal, which has no negative zero.
func noNegativeZero(f float64) float64 {
	if f == 0 {
		return 0
	}
	return f
}

func mapToConnect(s *connect.Schema, node any, keepNull bool) (any, error) {
	if s.KeySchema == nil || s.KeySchema.Type == connect.SchemaTypeString {
		obj, ok := node.(map[string]any)
		if !ok {
			return nil, errors.New("Maps with string fields should be encoded as JSON objects, but found " + fmt.Sprintf("%T", node))
		}
		out := make(map[string]any, len(obj))
		for k, e := range obj {
			v, err := toConnect(s.ValueSchema, e, keepNull)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	}
	arr, ok := node.([]any)
	if !ok {
		return nil, errors.New("Maps with non-string fields should be encoded as JSON array of tuples, but found " + fmt.Sprintf("%T", node))
	}
	switch s.KeySchema.Type {
	case connect.SchemaTypeArray, connect.SchemaTypeMap, connect.SchemaTypeStruct, connect.SchemaTypeBytes:
		// Java keys a HashMap by any object; a Go map cannot be keyed by
		// a slice or a map.
		return nil, fmt.Errorf("Sluice does not support maps keyed by %s values", strings.ToUpper(s.KeySchema.Type))
	}
	out := make(map[any]any, len(arr))
	for _, e := range arr {
		pair, ok := e.([]any)
		if !ok || len(pair) != 2 {
			return nil, errors.New("Found invalid map entry instead of array tuple")
		}
		k, err := toConnect(s.KeySchema, pair[0], keepNull)
		if err != nil {
			return nil, err
		}
		v, err := toConnect(s.ValueSchema, pair[1], keepNull)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// decimalFromNumber reads a Decimal written as a JSON number, at its
// schema's scale.
func decimalFromNumber(s *connect.Schema, n json.Number) ([]byte, error) {
	scale, err := strconv.ParseInt(s.Parameters[javatext.DecimalScale], 10, 32)
	if err != nil {
		return nil, fmt.Errorf("Invalid Decimal schema: scale %q", s.Parameters[javatext.DecimalScale])
	}
	b, err := javatext.DecimalBytes(n.String(), int32(scale))
	if err != nil {
		return nil, fmt.Errorf("Invalid decimal field: %w", err)
	}
	return b, nil
}
