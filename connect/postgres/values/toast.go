package values

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"
)

// DefaultUnavailablePlaceholder is Debezium's unavailable.value.placeholder:
// what it writes for an unchanged TOASTed value that pgoutput does not send.
const DefaultUnavailablePlaceholder = "__debezium_unavailable_value"

// Unavailable is the value Debezium writes for this column when pgoutput
// marks it an unchanged TOASTed value (a large value an UPDATE left alone,
// under REPLICA IDENTITY DEFAULT): the placeholder's bytes (the
// unavailable.value.placeholder setting, "hex:"-decoded by the caller) in
// the column's representation. Debezium's representation depends on the
// type: the text for string-valued types, the bytes for bytea (null under
// the base64 modes, whose converter does not know the marker), a
// one-element list for text-like and bytea arrays, the placeholder's bytes
// as numbers for int4[], date[] and int8[], a name-based UUID for uuid[], a
// one-entry map for hstore. A type whose placeholder Debezium cannot express
// in the column's schema is an error.
func (cv *Converter) Unavailable(placeholder []byte) (any, error) {
	r, err := resolve(cv.column.Type)
	if err != nil {
		return nil, err
	}
	text := string(placeholder)
	switch {
	case r.t.Name == "bytea":
		switch cv.modes.Binary {
		case BinaryBytes:
			return append([]byte(nil), placeholder...), nil
		case BinaryHex:
			return text, nil
		}
		return nil, nil
	case r.t.Name == "hstore":
		if cv.modes.HStore == HStoreMap {
			return map[string]any{text: text}, nil
		}
		var b strings.Builder
		b.WriteByte('{')
		jsonQuote(&b, text)
		b.WriteByte(':')
		jsonQuote(&b, text)
		b.WriteByte('}')
		return b.String(), nil
	case r.t.Kind == KindArray && r.t.Elem != nil:
		switch r.t.Elem.Name {
		case "text", "varchar", "bpchar", "json", "jsonb":
			return []any{text}, nil
		case "bytea":
			if cv.modes.Binary == BinaryBytes {
				return []any{append([]byte(nil), placeholder...)}, nil
			}
		case "int4", "date":
			if r.t.Elem.Name == "date" && cv.modes.Time == TimeConnect {
				break // Connect's Date takes no number
			}
			out := make([]any, len(placeholder))
			for i, b := range placeholder {
				out[i] = int32(int8(b)) // Java's bytes are signed
			}
			return out, nil
		case "int8":
			out := make([]any, len(placeholder))
			for i, b := range placeholder {
				out[i] = int64(int8(b))
			}
			return out, nil
		case "uuid":
			return []any{nameUUID(placeholder)}, nil
		}
	case cv.schema.Type == "string" && r.t.Name != "money":
		// (money, fixed-size, is never TOASTed; Debezium would print the
		// marker object itself.)
		return text, nil
	}
	return nil, fmt.Errorf("column %s of type %s: Debezium has no unchanged-TOAST placeholder this column's schema can hold",
		cv.column.Name, typeLabel(cv.column.Type))
}

// nameUUID is Java's UUID.nameUUIDFromBytes: an MD5-based version 3 UUID.
func nameUUID(b []byte) string {
	h := md5.Sum(b)
	h[6] = h[6]&0x0f | 0x30
	h[8] = h[8]&0x3f | 0x80
	s := hex.EncodeToString(h[:])
	return s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
}
