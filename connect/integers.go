package connect

// IntegerValue is the int64 of a Go integer that a record value holds
// (Kafka Connect's INT8 to INT64, and the unsigned widths that fit in a
// long); ok is false for every other type, floats included, whose
// conversion each caller decides itself (Java's cast, a JSON number).
func IntegerValue(v any) (n int64, ok bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	}
	return 0, false
}
