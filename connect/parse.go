package connect

import (
	"math"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/connect/javahash"
)

// ConfigError is Kafka's ConfigException. With a Name its text is
// "Invalid value <value> for configuration <name>: <message>", the value
// printed as Java prints it; without one it is just the message.
type ConfigError struct {
	Name    string
	Value   any
	Message string
}

// Error renders the message exactly as Kafka does.
func (e *ConfigError) Error() string {
	if e.Name == "" {
		return e.Message
	}
	s := "Invalid value " + JavaString(e.Value) + " for configuration " + e.Name
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// InvalidValue returns the ConfigError Kafka's ConfigException(name, value,
// message) would carry.
func InvalidValue(name string, value any, message string) error {
	return &ConfigError{Name: name, Value: value, Message: message}
}

// ParseType parses a configured string as a value of type t, with Kafka's
// rules (ConfigDef.parseType): the string is trimmed first (Java's trim,
// which removes every character up to U+0020), booleans are
// case-insensitive, lists split on commas with surrounding whitespace, an
// empty list string is an empty list, and numbers must fit their type.
// resolve maps CLASS names; nil accepts any name.
func ParseType(name, raw string, t ConfigType, resolve func(string) (string, bool)) (any, error) {
	trimmed := JavaTrim(raw)
	notNumber := func() error { return InvalidValue(name, raw, "Not a number of type "+string(t)) }
	switch t {
	case TypeBoolean:
		switch {
		case strings.EqualFold(trimmed, "true"):
			return true, nil
		case strings.EqualFold(trimmed, "false"):
			return false, nil
		}
		return nil, InvalidValue(name, raw, "Expected value to be either true or false")
	case TypePassword:
		return Password(trimmed), nil
	case TypeString:
		return trimmed, nil
	case TypeInt:
		n, err := strconv.ParseInt(trimmed, 10, 32)
		if err != nil {
			return nil, notNumber()
		}
		return int32(n), nil
	case TypeShort:
		n, err := strconv.ParseInt(trimmed, 10, 16)
		if err != nil {
			return nil, notNumber()
		}
		return int16(n), nil
	case TypeLong:
		n, err := strconv.ParseInt(trimmed, 10, 64)
		if err != nil {
			return nil, notNumber()
		}
		return n, nil
	case TypeDouble:
		f, ok := parseJavaDouble(trimmed)
		if !ok {
			return nil, notNumber()
		}
		return f, nil
	case TypeList:
		if trimmed == "" {
			return []string{}, nil
		}
		parts := strings.Split(trimmed, ",")
		for i, p := range parts {
			parts[i] = strings.Trim(p, " \t\n\v\f\r")
		}
		return parts, nil
	case TypeClass:
		if resolve == nil {
			if trimmed == "" {
				return nil, InvalidValue(name, raw, "Class "+raw+" could not be found.")
			}
			return Class(trimmed), nil
		}
		cls, ok := resolve(trimmed)
		if !ok {
			return nil, InvalidValue(name, raw, "Class "+raw+" could not be found.")
		}
		return Class(cls), nil
	}
	panic("Unknown type.")
}

// ParseInt parses an INT the way Kafka does; name is used in the error.
func ParseInt(name, raw string) (int, error) {
	v, err := ParseType(name, raw, TypeInt, nil)
	if err != nil {
		return 0, err
	}
	return int(v.(int32)), nil
}

// ParseLong parses a LONG the way Kafka does.
func ParseLong(name, raw string) (int64, error) {
	v, err := ParseType(name, raw, TypeLong, nil)
	if err != nil {
		return 0, err
	}
	return v.(int64), nil
}

// ParseBool parses a BOOLEAN the way Kafka does.
func ParseBool(name, raw string) (bool, error) {
	v, err := ParseType(name, raw, TypeBoolean, nil)
	if err != nil {
		return false, err
	}
	return v.(bool), nil
}

// ParseList parses a LIST the way Kafka does ("a, b" is [a b]; "" is []).
func ParseList(raw string) []string {
	v, _ := ParseType("", raw, TypeList, nil)
	return v.([]string)
}

// parseJavaDouble accepts what Double.parseDouble accepts for the inputs
// people type: decimal and exponent forms, an optional f/d suffix, NaN and
// Infinity spelled as Java spells them (Go's "inf" and "nan" are not Java).
func parseJavaDouble(s string) (float64, bool) {
	switch s {
	case "NaN", "+NaN", "-NaN":
		return math.NaN(), true
	case "Infinity", "+Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	if s == "" || strings.ContainsAny(s, "_xXpPiInN") {
		return 0, false
	}
	if c := s[len(s)-1]; c == 'f' || c == 'F' || c == 'd' || c == 'D' {
		s = s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

// JavaTrim removes leading and trailing characters up to U+0020, as
// java.lang.String.trim.
func JavaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// ConvertToString renders a parsed value as Kafka's ConfigDef.convertToString
// does for the REST API; nil stays nil.
func ConvertToString(v any, t ConfigType) *string {
	if v == nil {
		return nil
	}
	var s string
	switch x := v.(type) {
	case []string:
		s = strings.Join(x, ",")
	case Class:
		s = string(x)
	case Password:
		s = x.String()
	default:
		s = JavaString(v)
	}
	return &s
}

// JavaString renders a value as Java's String.valueOf would: null, numbers,
// doubles as Double.toString, lists as "[a, b]", a Class as "class <name>".
func JavaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int16:
		return strconv.Itoa(int(x))
	case int32:
		return strconv.Itoa(int(x))
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return JavaDouble(x)
	case float32:
		return JavaDouble(float64(x))
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	case Class:
		return "class " + string(x)
	case Password:
		return x.String()
	case interface{ String() string }:
		return x.String()
	}
	return "?"
}

// JavaDouble formats f as Java 17's Double.toString: plain decimal with at
// least one fraction digit between 10^-3 and 10^7, computerised scientific
// notation ("1.0E7") outside it, and the digits Java 17 chooses (see
// javafloat.go).
func JavaDouble(f float64) string { return javaFloatString(f, 64) }

// JavaFloat renders f as Java 17's Float.toString does.
func JavaFloat(f float32) string { return javaFloatString(float64(f), 32) }

// JavaHashSetOrder returns items in the order a java.util.HashSet built from
// them iterates, so that messages Kafka builds by joining a HashSet (such as
// CaseInsensitiveValidString's) come out in the same order. It assumes
// String elements and the default capacity and load factor.
func JavaHashSetOrder(items []string) []string {
	var unique []string
	var hashes []int32
	seen := map[string]bool{}
	for _, s := range items {
		if !seen[s] {
			seen[s] = true
			unique = append(unique, s)
			hashes = append(hashes, javahash.String(s))
		}
	}
	out := make([]string, 0, len(unique))
	for _, i := range javahash.Order(hashes) {
		out = append(out, unique[i])
	}
	return out
}
