package converters

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sluice-io/sluice/connect"
)

// EncodingConfig is StringConverter's charset key.
const EncodingConfig = "converter.encoding"

// StringConfigDef is StringConverter's config definition.
func StringConfigDef() *connect.ConfigDef {
	return baseConfigDef().Define(connect.ConfigKey{
		Name: EncodingConfig, Type: connect.TypeString, Default: "UTF-8",
		Importance:    connect.ImportanceHigh,
		Documentation: "The name of the Java character set to use for encoding strings as byte arrays.",
		OrderInGroup:  -1, Width: connect.WidthMedium, DisplayName: "Encoding",
	})
}

// String is Kafka's StringConverter: values are written as their string
// form in the configured charset, and read back as optional strings. Null
// stays null both ways.
type String struct {
	latin1 bool
	ascii  bool
}

// Configure implements connect.Converter.
func (c *String) Configure(props map[string]string, isKey bool) error {
	v, err := configure(StringConfigDef(), props, isKey)
	if err != nil {
		return err
	}
	switch enc := strings.ToUpper(v.String(EncodingConfig)); enc {
	case "UTF-8", "UTF8":
	case "ISO-8859-1", "ISO8859_1", "LATIN1":
		c.latin1 = true
	case "US-ASCII", "ASCII":
		c.ascii = true
	default:
		return fmt.Errorf("Unsupported encoding %s", v.String(EncodingConfig))
	}
	return nil
}

// FromConnectData implements connect.Converter.
func (c *String) FromConnectData(topic string, schema *connect.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	s := stringOf(value)
	if !c.latin1 && !c.ascii {
		return []byte(s), nil
	}
	out := make([]byte, 0, len(s))
	for _, r := range s {
		// Java replaces unmappable characters with '?'.
		if (c.ascii && r > 0x7f) || r > 0xff {
			r = '?'
		}
		out = append(out, byte(r))
	}
	return out, nil
}

// stringOf is value.toString() for the values Connect data holds.
func stringOf(value any) string {
	switch v := value.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case json.Number:
		return v.String()
	case float64, float32, int, int8, int16, int32, int64, bool:
		return connect.JavaString(v)
	}
	return fmt.Sprint(value)
}

// ToConnectData implements connect.Converter.
func (c *String) ToConnectData(topic string, data []byte) (*connect.Schema, any, error) {
	if data == nil {
		return connect.OptionalStringSchema, nil, nil
	}
	if c.latin1 || c.ascii {
		var b strings.Builder
		for _, x := range data {
			if c.ascii && x > 0x7f {
				b.WriteRune(utf8.RuneError)
				continue
			}
			b.WriteRune(rune(x))
		}
		return connect.OptionalStringSchema, b.String(), nil
	}
	return connect.OptionalStringSchema, string(data), nil
}

// ByteArrayConfigDef is ByteArrayConverter's config definition.
func ByteArrayConfigDef() *connect.ConfigDef { return baseConfigDef() }

// ByteArray is Kafka's ByteArrayConverter: bytes pass through unchanged.
type ByteArray struct{}

// Configure implements connect.Converter.
func (ByteArray) Configure(map[string]string, bool) error { return nil }

// FromConnectData implements connect.Converter. Unlike Kafka's, it also
// carries string values (as their UTF-8 bytes): a string has one obvious byte
// form, and refusing it only made sources such as the generator unusable
// with this converter.
func (ByteArray) FromConnectData(topic string, schema *connect.Schema, value any) ([]byte, error) {
	if schema != nil && schema.Type != connect.SchemaTypeBytes && schema.Type != connect.SchemaTypeString {
		return nil, fmt.Errorf("Invalid schema type for ByteArrayConverter: %s", strings.ToUpper(schema.Type))
	}
	switch v := value.(type) {
	case nil:
		return nil, nil
	case []byte:
		return v, nil
	case string:
		return []byte(v), nil
	}
	return nil, fmt.Errorf("ByteArrayConverter is not compatible with objects of type %T", value)
}

// ToConnectData implements connect.Converter.
func (ByteArray) ToConnectData(topic string, data []byte) (*connect.Schema, any, error) {
	if data == nil {
		return connect.OptionalBytesSchema, nil, nil
	}
	return connect.OptionalBytesSchema, data, nil
}
