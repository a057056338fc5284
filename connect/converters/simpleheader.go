package converters

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/javatext"
)

// SimpleHeaderClass is Kafka's SimpleHeaderConverter, the default
// header.converter.
const SimpleHeaderClass = "org.apache.kafka.connect.storage.SimpleHeaderConverter"

// SimpleHeaderPlugin describes SimpleHeaderConverter for the registry.
func SimpleHeaderPlugin() *connect.Plugin {
	return &connect.Plugin{Class: SimpleHeaderClass, Kind: connect.KindHeaderConverter, Version: connect.Version,
		NewConverter: func() connect.Converter { return SimpleHeader{} }, Config: connect.NewConfigDef}
}

// SimpleHeader is Kafka's SimpleHeaderConverter: a header value is written
// as its text in Kafka's Values form (a string as it is) and read back by
// Values.parseString, which infers booleans, numbers, lists and maps.
type SimpleHeader struct{}

// Configure implements connect.Converter; there is nothing to set.
func (SimpleHeader) Configure(map[string]string, bool) error { return nil }

// FromConnectData implements connect.Converter.
func (SimpleHeader) FromConnectData(_ string, schema *connect.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	var b strings.Builder
	writeSchemaValues(&b, schema, value, false)
	return []byte(b.String()), nil
}

// writeSchemaValues is writeValues where the schema says more than the Go
// value does: a struct's fields come in the schema's order (Values walks
// Struct.schema().fields(), a field's null taking its default as Struct.get
// does) and a Decimal is written as its BigDecimal text.
func writeSchemaValues(b *strings.Builder, s *connect.Schema, v any, embedded bool) {
	if s != nil && v != nil {
		if m, ok := v.(map[string]any); ok && s.Type == connect.SchemaTypeStruct {
			b.WriteByte('{')
			for i, f := range s.Fields {
				if i > 0 {
					b.WriteByte(',')
				}
				writeValues(b, f.Name, true)
				b.WriteByte(':')
				fv := m[f.Name]
				if fv == nil && f.Schema != nil {
					fv = f.Schema.Default
				}
				writeSchemaValues(b, f.Schema, fv, true)
			}
			b.WriteByte('}')
			return
		}
		if s.Name == javatext.DecimalName {
			if d, ok := javatext.Decimal(s, v); ok {
				b.WriteString(d)
				return
			}
		}
	}
	writeValues(b, v, embedded)
}

// ToConnectData implements connect.Converter.
func (SimpleHeader) ToConnectData(_ string, data []byte) (*connect.Schema, any, error) {
	if data == nil {
		return nil, nil, nil
	}
	s, v := ParseString(string(data))
	return s, v, nil
}

// NewHeader builds a connector's header converter: its header.converter,
// else the worker's, else SimpleHeaderConverter, configured with the
// header.converter. settings.
func NewHeader(reg Lookup, connectorProps map[string]string, workerDefaultClass string) (connect.Converter, error) {
	cls := ClassOf(connectorProps, "header.converter", workerDefaultClass)
	if cls == "" {
		return SimpleHeader{}, nil
	}
	p, ok := reg.Lookup(cls)
	if !ok || p.NewConverter == nil || (p.Kind != connect.KindHeaderConverter && !p.HeaderConverter) {
		return nil, fmt.Errorf("Failed to find any class that implements HeaderConverter and which name matches %s", cls)
	}
	// Kafka's converters read as header converters as they read values.
	return configured(p, connectorProps, "header.converter", false)
}

// ValuesString is v as Kafka's Values.convertToString writes it: a string
// as it is, numbers and booleans as Java prints them, lists and maps with
// their strings quoted.
func ValuesString(v any) string {
	var b strings.Builder
	writeValues(&b, v, false)
	return b.String()
}

// valuesEscaper is Values.escape: it escapes backslashes and quotes only.
var valuesEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

func writeValues(b *strings.Builder, v any, embedded bool) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		if embedded {
			b.WriteByte('"')
			b.WriteString(valuesEscaper.Replace(x))
			b.WriteByte('"')
		} else {
			b.WriteString(x)
		}
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case float32:
		b.WriteString(connect.JavaFloat(x))
	case float64:
		b.WriteString(connect.JavaDouble(x))
	case int8:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int16:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int:
		b.WriteString(strconv.Itoa(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValues(b, e, true)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValues(b, k, true)
			b.WriteByte(':')
			writeValues(b, x[k], true)
		}
		b.WriteByte('}')
	default:
		b.WriteString(connect.JavaString(v))
	}
}

// ParseString is Kafka's Values.parseString for the values people write:
// true and false (any case), whole numbers as the smallest of int8 … int64
// that holds them, decimals as float32 when finite there (else float64),
// and anything else (lists and maps too, for now) as a string.
func ParseString(s string) (*connect.Schema, any) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "true":
		return &connect.Schema{Type: connect.SchemaTypeBoolean}, true
	case "false":
		return &connect.Schema{Type: connect.SchemaTypeBoolean}, false
	}
	if t == "" || t != s {
		return &connect.Schema{Type: connect.SchemaTypeString}, s
	}
	d, ok := new(big.Float).SetPrec(200).SetString(t)
	if !ok || strings.ContainsAny(t, "xXpP_") || strings.EqualFold(t, "inf") || strings.EqualFold(t, "infinity") || strings.EqualFold(t, "nan") {
		return &connect.Schema{Type: connect.SchemaTypeString}, s
	}
	// Kafka takes an integral decimal (1.0, 1e3) as a whole number.
	if d.IsInt() {
		if n, acc := d.Int64(); acc == big.Exact {
			switch {
			case n >= math.MinInt8 && n <= math.MaxInt8:
				return &connect.Schema{Type: connect.SchemaTypeInt8}, int8(n)
			case n >= math.MinInt16 && n <= math.MaxInt16:
				return &connect.Schema{Type: connect.SchemaTypeInt16}, int16(n)
			case n >= math.MinInt32 && n <= math.MaxInt32:
				return &connect.Schema{Type: connect.SchemaTypeInt32}, int32(n)
			}
			return &connect.Schema{Type: connect.SchemaTypeInt64}, n
		}
	}
	if f, _ := d.Float32(); !math.IsInf(float64(f), 0) {
		return &connect.Schema{Type: connect.SchemaTypeFloat32}, f
	}
	f, _ := d.Float64()
	return &connect.Schema{Type: connect.SchemaTypeFloat64}, f
}
