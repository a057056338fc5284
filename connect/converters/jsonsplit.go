package converters

import (
	"bytes"
	"encoding/json"
)

// splitEnvelope finds the two values of an envelope
// {"schema":...,"payload":...} (in either order) without decoding them, so
// that a schema read before need not be decoded again. It looks at the
// envelope's own syntax only; the values are checked when they are decoded
// (decodeExactly), or, for a schema found in the cache, were checked when
// the same bytes were decoded. ok is false for any other shape — another
// or a repeated key, a key with an escape, a syntax error in what it looks
// at — which the caller then decodes in full, as encoding/json defines the
// answer. Whatever follows the envelope is ignored, as ToConnectData's
// decoder ignores it.
func splitEnvelope(data []byte) (schema, payload []byte, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, nil, false
	}
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != '"' {
			return nil, nil, false
		}
		end := i + 1
		for end < len(data) && data[end] != '"' && data[end] != '\\' {
			end++
		}
		if end >= len(data) || data[end] != '"' {
			return nil, nil, false
		}
		key := data[i+1 : end]
		i = skipSpace(data, end+1)
		if i >= len(data) || data[i] != ':' {
			return nil, nil, false
		}
		i = skipSpace(data, i+1)
		vend, ok := skipValue(data, i)
		if !ok {
			return nil, nil, false
		}
		switch {
		case string(key) == "schema" && schema == nil:
			schema = data[i:vend]
		case string(key) == "payload" && payload == nil:
			payload = data[i:vend]
		default:
			return nil, nil, false
		}
		i = skipSpace(data, vend)
		if i >= len(data) {
			return nil, nil, false
		}
		switch data[i] {
		case ',':
			i++
		case '}':
			if schema == nil || payload == nil {
				return nil, nil, false
			}
			return schema, payload, true
		default:
			return nil, nil, false
		}
	}
}

// skipSpace skips JSON's white space from i.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue is the end of the value that starts at i: a string, an object
// or array (its brackets counted, strings skipped), or a literal or number
// (up to the next delimiter). ok is false when the data ends first. It
// does not check the value; decodeExactly does.
func skipValue(data []byte, i int) (end int, ok bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				var ok bool
				if i, ok = skipString(data, i); !ok {
					return 0, false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	}
	start := i
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i, i > start
		}
		i++
	}
	return 0, false
}

// skipString is the end of the string that starts at i (a quote).
func skipString(data []byte, i int) (end int, ok bool) {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// decodeExactly decodes raw, which must be one JSON value and nothing more,
// numbers as json.Number; ok is false otherwise.
func decodeExactly(raw []byte) (v any, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.InputOffset() != int64(len(raw)) {
		return nil, false
	}
	return v, true
}
