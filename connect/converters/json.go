package converters

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/javatext"
)

// JsonConverter's keys.
const (
	SchemasEnableConfig          = "schemas.enable"
	SchemasCacheSizeConfig       = "schemas.cache.size"
	DecimalFormatConfig          = "decimal.format"
	ReplaceNullWithDefaultConfig = "replace.null.with.default"
)

// JSONConfigDef is JsonConverter's config definition.
func JSONConfigDef() *connect.ConfigDef {
	return baseConfigDef().
		Define(connect.ConfigKey{Name: SchemasEnableConfig, Type: connect.TypeBoolean, Default: true,
			Importance: connect.ImportanceHigh, Documentation: "Include schemas within each of the serialized values and keys.",
			Group: "Schemas", OrderInGroup: 0, Width: connect.WidthMedium, DisplayName: "Enable Schemas"}).
		Define(connect.ConfigKey{Name: SchemasCacheSizeConfig, Type: connect.TypeInt, Default: int32(1000),
			Importance: connect.ImportanceHigh, Documentation: "The maximum number of schemas that can be cached in this converter instance.",
			Group: "Schemas", OrderInGroup: 1, Width: connect.WidthMedium, DisplayName: "Schema Cache Size"}).
		Define(connect.ConfigKey{Name: DecimalFormatConfig, Type: connect.TypeString, Default: "BASE64",
			Validator:  connect.InCaseInsensitive("BASE64", "NUMERIC"),
			Importance: connect.ImportanceLow,
			Documentation: "Controls which format this converter will serialize decimals in." +
				" This value is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'",
			Group: "Serialization", OrderInGroup: 0, Width: connect.WidthMedium, DisplayName: "Decimal Format"}).
		Define(connect.ConfigKey{Name: ReplaceNullWithDefaultConfig, Type: connect.TypeBoolean, Default: true,
			Importance:    connect.ImportanceLow,
			Documentation: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.",
			Group:         "Serialization", OrderInGroup: 1, Width: connect.WidthMedium, DisplayName: "Replace null with default"})
}

// JSON is Kafka's JsonConverter. With schemas.enable (the default) it writes
// the envelope {"schema":{...},"payload":...} and requires it when reading;
// without, it writes and reads plain JSON. Bytes are base64 strings, as
// Jackson writes a binary node. Once configured it is safe for concurrent
// use; its schema caches (schemas.cache.size, jsoncache.go) are shared by
// the goroutines that use it. A JSON that was never configured caches
// nothing.
type JSON struct {
	schemasDisabled bool
	// keepNull is replace.null.with.default=false: a null stays null even
	// where the schema has a default.
	keepNull bool
	// numeric is decimal.format=NUMERIC: a Decimal is written as a JSON
	// number, not as base64 bytes.
	numeric bool
	// written caches the JSON of the schemas written, by their content;
	// read the schemas read, by their JSON. nil: schemas.cache.size < 1.
	written *lru[[]byte]
	read    *lru[*connect.Schema]
	// keyBuf is where write cache keys are built, under keyMu.
	keyMu  sync.Mutex
	keyBuf schemaKey
	// lastSize is the size of the last record written, by which the next
	// one's buffer is allocated (up to maxSizeHint): a table's records are
	// much alike, and a buffer grown by doubling copies its bytes each time.
	lastSize atomic.Int64
}

// maxSizeHint bounds the buffer allocated ahead for a record, so that one
// large record does not make the next, small one hold as much memory.
const maxSizeHint = 64 << 10

// Configure implements connect.Converter.
func (c *JSON) Configure(props map[string]string, isKey bool) error {
	v, err := configure(JSONConfigDef(), props, isKey)
	if err != nil {
		return err
	}
	c.schemasDisabled = !v.Bool(SchemasEnableConfig)
	c.keepNull = !v.Bool(ReplaceNullWithDefaultConfig)
	c.numeric = strings.EqualFold(v.String(DecimalFormatConfig), "NUMERIC")
	size := v.Int(SchemasCacheSizeConfig)
	c.written, c.read = newLRU[[]byte](size), newLRU[*connect.Schema](size)
	return nil
}

// FromConnectData implements connect.Converter.
func (c *JSON) FromConnectData(topic string, schema *connect.Schema, value any) ([]byte, error) {
	if schema == nil && value == nil {
		return nil, nil
	}
	var b bytes.Buffer
	b.Grow(int(min(c.lastSize.Load(), maxSizeHint)))
	if !c.schemasDisabled {
		b.WriteString(`{"schema":`)
		if err := c.writeSchemaCached(&b, schema); err != nil {
			return nil, fmt.Errorf("Converting Kafka Connect data to byte[] failed due to serialization error: %w", err)
		}
		b.WriteString(`,"payload":`)
	}
	if err := writeValue(&b, schema, value, c.opts()); err != nil {
		return nil, fmt.Errorf("Converting Kafka Connect data to byte[] failed due to serialization error: %w", err)
	}
	if !c.schemasDisabled {
		b.WriteByte('}')
	}
	c.lastSize.Store(int64(b.Len()))
	return b.Bytes(), nil
}

// jsonTypeName is JsonSchema's spelling: Connect's float32 and float64 are
// "float" and "double" on the wire.
func jsonTypeName(t string) string {
	switch t {
	case connect.SchemaTypeFloat32:
		return "float"
	case connect.SchemaTypeFloat64:
		return "double"
	}
	return t
}

// opts are the converter's settings that shape a value's JSON.
func (c *JSON) opts() valueOpts { return valueOpts{keepNull: c.keepNull, numeric: c.numeric} }

// valueOpts are the settings that shape a value's JSON: keepNull is
// replace.null.with.default=false, numeric decimal.format=NUMERIC.
type valueOpts struct {
	keepNull, numeric bool
}

// writeSchema writes a schema with Jackson's field order: type, the nested
// schemas, optional, then the optional metadata and the default value
// (written as a value, decimal.format included, never replaced). It fails
// only on a default that does not fit its schema.
func writeSchema(b *bytes.Buffer, s *connect.Schema, numeric bool) error {
	if s == nil {
		b.WriteString("null")
		return nil
	}
	return writeSchemaFields(b, s, "", numeric)
}

func writeSchemaFields(b *bytes.Buffer, s *connect.Schema, fieldName string, numeric bool) error {
	b.WriteString(`{"type":`)
	writeString(b, jsonTypeName(s.Type))
	switch s.Type {
	case connect.SchemaTypeArray:
		b.WriteString(`,"items":`)
		if err := writeSchema(b, s.ValueSchema, numeric); err != nil {
			return err
		}
	case connect.SchemaTypeMap:
		b.WriteString(`,"keys":`)
		if err := writeSchema(b, s.KeySchema, numeric); err != nil {
			return err
		}
		b.WriteString(`,"values":`)
		if err := writeSchema(b, s.ValueSchema, numeric); err != nil {
			return err
		}
	case connect.SchemaTypeStruct:
		b.WriteString(`,"fields":[`)
		for i, f := range s.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeSchemaFields(b, f.Schema, f.Name, numeric); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	}
	if s.Optional {
		b.WriteString(`,"optional":true`)
	} else {
		b.WriteString(`,"optional":false`)
	}
	if s.Name != "" {
		b.WriteString(`,"name":`)
		writeString(b, s.Name)
	}
	if s.Version != nil {
		b.WriteString(`,"version":` + strconv.Itoa(int(*s.Version)))
	}
	if s.Doc != "" {
		b.WriteString(`,"doc":`)
		writeString(b, s.Doc)
	}
	if s.Parameters != nil {
		b.WriteString(`,"parameters":{`)
		keys := make([]string, 0, len(s.Parameters))
		for k := range s.Parameters {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeString(b, s.Parameters[k])
		}
		b.WriteByte('}')
	}
	if s.Default != nil {
		b.WriteString(`,"default":`)
		if err := writeValue(b, s, s.Default, valueOpts{numeric: numeric}); err != nil {
			return err
		}
	}
	if fieldName != "" {
		// Jackson appends the struct field's name after the field's schema.
		b.WriteString(`,"field":`)
		writeString(b, fieldName)
	}
	b.WriteByte('}')
	return nil
}

// writeString escapes as Jackson does: quotes, backslashes and control
// characters only (no HTML escaping); a byte that is not UTF-8 becomes
// U+FFFD, as Java decoding it would. Runs of bytes that need no escape are
// copied whole: a schema is mostly such text.
// QuoteJSON is s as a JSON string, escaped as JsonConverter writes strings
// (Jackson's generator): for values that carry JSON text of their own, such
// as a Debezium hstore column written as json.
func QuoteJSON(s string) string {
	var b bytes.Buffer
	writeString(&b, s)
	return b.String()
}

func writeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteString(s[start:i])
				b.WriteRune(utf8.RuneError)
				start = i + 1
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		b.WriteString(s[start:i])
		writeEscape(b, c)
		i++
		start = i
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// writeEscape writes the escape of an ASCII quote, backslash or control
// character: the short forms JSON has, else \u00XX with Jackson's upper-case
// hex digits.
func writeEscape(b *bytes.Buffer, c byte) {
	switch c {
	case '"':
		b.WriteString(`\"`)
	case '\\':
		b.WriteString(`\\`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	case '\b':
		b.WriteString(`\b`)
	case '\f':
		b.WriteString(`\f`)
	default:
		const hex = "0123456789ABCDEF"
		b.WriteString(`\u00`)
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xF])
	}
}

// writeValue writes v as JsonConverter does; a null takes the schema's
// default unless o.keepNull (replace.null.with.default=false).
func writeValue(b *bytes.Buffer, s *connect.Schema, v any, o valueOpts) error {
	if v == nil && s != nil && s.Default != nil && !o.keepNull {
		v = s.Default
	}
	if v == nil {
		if s != nil && !s.Optional {
			return fmt.Errorf("Conversion error: null value for field that is required and has no default value")
		}
		b.WriteString("null")
		return nil
	}
	if s == nil {
		return writeSchemaless(b, v)
	}
	switch s.Type {
	case connect.SchemaTypeInt8, connect.SchemaTypeInt16, connect.SchemaTypeInt32, connect.SchemaTypeInt64:
		n, ok := asInt(v)
		if !ok {
			return typeError(s, v)
		}
		b.WriteString(strconv.FormatInt(n, 10))
	case connect.SchemaTypeFloat32:
		f, ok := asFloat(v)
		if !ok {
			return typeError(s, v)
		}
		b.WriteString(javaFloat(f, 32))
	case connect.SchemaTypeFloat64:
		f, ok := asFloat(v)
		if !ok {
			return typeError(s, v)
		}
		b.WriteString(javaFloat(f, 64))
	case connect.SchemaTypeBoolean:
		x, ok := v.(bool)
		if !ok {
			return typeError(s, v)
		}
		b.WriteString(strconv.FormatBool(x))
	case connect.SchemaTypeString:
		x, ok := v.(string)
		if !ok {
			return typeError(s, v)
		}
		writeString(b, x)
	case connect.SchemaTypeBytes:
		x, ok := v.([]byte)
		if !ok {
			return typeError(s, v)
		}
		if o.numeric && s.Name == javatext.DecimalName {
			// A JSON number, spelled as BigDecimal.toString spells it
			// (1E+3, 1E-8), as Jackson writes Kafka's DecimalNode.
			if d, ok := javatext.Decimal(s, x); ok {
				b.WriteString(d)
				break
			}
		}
		writeString(b, base64.StdEncoding.EncodeToString(x))
	case connect.SchemaTypeArray:
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Slice {
			return typeError(s, v)
		}
		b.WriteByte('[')
		for i := range rv.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeValue(b, s.ValueSchema, rv.Index(i).Interface(), o); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case connect.SchemaTypeMap:
		return writeMap(b, s.KeySchema, s.ValueSchema, v, o)
	case connect.SchemaTypeStruct:
		m, ok := v.(map[string]any)
		if !ok {
			return typeError(s, v)
		}
		b.WriteByte('{')
		for i, f := range s.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, f.Name)
			b.WriteByte(':')
			if err := writeValue(b, f.Schema, m[f.Name], o); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("Couldn't translate unsupported schema type %s.", s.Type)
	}
	return nil
}

func typeError(s *connect.Schema, v any) error {
	return fmt.Errorf("Invalid Java object for schema with type %s: %T", strings.ToUpper(s.Type), v)
}

// writeMap writes a map as a JSON object when its keys are strings, else as
// an array of [key, value] pairs, as JsonConverter does. Keys are sorted so
// the output is deterministic.
func writeMap(b *bytes.Buffer, ks, vs *connect.Schema, v any, o valueOpts) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map {
		return fmt.Errorf("Invalid Java object for schema with type MAP: %T", v)
	}
	keys := rv.MapKeys()
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i].Interface()) < fmt.Sprint(keys[j].Interface()) })
	objectMode := ks != nil && ks.Type == connect.SchemaTypeString
	if ks == nil {
		objectMode = true
		for _, k := range keys {
			if _, ok := k.Interface().(string); !ok {
				objectMode = false
			}
		}
	}
	if objectMode {
		b.WriteByte('{')
	} else {
		b.WriteByte('[')
	}
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		if objectMode {
			writeString(b, fmt.Sprint(k.Interface()))
			b.WriteByte(':')
		} else {
			b.WriteByte('[')
			if err := writeValue(b, ks, k.Interface(), o); err != nil {
				return err
			}
			b.WriteByte(',')
		}
		if err := writeValue(b, vs, rv.MapIndex(k).Interface(), o); err != nil {
			return err
		}
		if !objectMode {
			b.WriteByte(']')
		}
	}
	if objectMode {
		b.WriteByte('}')
	} else {
		b.WriteByte(']')
	}
	return nil
}

// writeSchemaless infers the JSON form from the Go value, as JsonConverter
// does from the Java class when there is no schema.
func writeSchemaless(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		writeString(b, x)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case []byte:
		writeString(b, base64.StdEncoding.EncodeToString(x))
	case json.Number:
		b.WriteString(x.String())
	case float32:
		b.WriteString(javaFloat(float64(x), 32))
	case float64:
		b.WriteString(javaFloat(x, 64))
	default:
		if n, ok := asInt(v); ok {
			b.WriteString(strconv.FormatInt(n, 10))
			return nil
		}
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Slice, reflect.Array:
			b.WriteByte('[')
			for i := range rv.Len() {
				if i > 0 {
					b.WriteByte(',')
				}
				if err := writeSchemaless(b, rv.Index(i).Interface()); err != nil {
					return err
				}
			}
			b.WriteByte(']')
		case reflect.Map:
			return writeMap(b, nil, nil, v, valueOpts{})
		default:
			return fmt.Errorf("Couldn't convert %v to JSON.", v)
		}
	}
	return nil
}

// asInt is a value's integer: a Go integer or a JSON integer.
func asInt(v any) (int64, bool) {
	if n, ok := v.(json.Number); ok {
		i, err := n.Int64()
		return i, err == nil
	}
	return connect.IntegerValue(v)
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	if n, ok := asInt(v); ok {
		return float64(n), true
	}
	return 0, false
}

// javaFloat writes a float as Jackson does (Float/Double.toString); NaN and
// infinities, which JSON cannot hold, become strings as Jackson quotes them.
func javaFloat(f float64, bits int) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return `"` + connect.JavaDouble(f) + `"`
	}
	if bits == 32 {
		return connect.JavaFloat(float32(f))
	}
	return connect.JavaDouble(f)
}
