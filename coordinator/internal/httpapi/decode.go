package httpapi

// Strict JSON decoding, shared by every body decoder (spec §0).
//
// A body is first checked for syntax as a whole, so the "Invalid JSON" detail
// is encoding/json's own, trailing garbage included. It is then parsed into a
// small tree that keeps object members in document order and numbers as
// json.Number, and bound field by field by fieldSet, which is where unknown
// fields and wrong JSON types are reported with the field's name. Jackson
// reports the first offending field in document order; keeping the order
// makes our choice the same and deterministic.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/sluice-io/sluice/api"
)

// jsonObject is a parsed JSON object with its members in document order.
// Other parsed values are []any, json.Number, string, bool and nil.
type jsonObject []jsonMember

type jsonMember struct {
	key   string
	value any
}

// MarshalJSON writes the object back as JSON, its members in their order
// and its text as it came (no HTML escapes: a filter's "id > 10" stays).
func (o jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(m.key); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		if err := enc.Encode(m.value); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// readJSON reads the request body and parses it. An empty body is invalid
// JSON: every route that calls this requires a body.
//
// A body sent without a Content-Type is refused (415), as Jersey finds no
// reader for it; an empty one is not, as Jersey then reads no entity at all.
func readJSON(r *http.Request) (any, error) {
	body := io.Reader(r.Body)
	if r.Header.Get("Content-Type") == "" {
		hasBody := r.ContentLength > 0
		if r.ContentLength < 0 { // chunked: whether a byte comes tells
			br := bufio.NewReader(r.Body)
			_, err := br.Peek(1)
			hasBody, body = err == nil, br
		}
		if hasBody {
			return nil, jerseyError(http.StatusUnsupportedMediaType)
		}
	}
	if r.ContentLength > MaxBodyBytes {
		return nil, errTooLarge()
	}
	data, err := io.ReadAll(body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		var timedOut *bodyTimeoutError
		switch {
		case errors.As(err, &tooLarge):
			return nil, errTooLarge()
		case errors.As(err, &timedOut):
			return nil, timedOut.apiError()
		}
		return nil, errInvalidJSON(err.Error())
	}
	return parseJSON(data)
}

// parseJSON validates data as exactly one JSON value and returns its tree.
func parseJSON(data []byte) (any, error) {
	// Unmarshal validates the whole input before storing anything, so its
	// error is the syntax detail (including "after top-level value").
	if err := json.Unmarshal(data, new(json.RawMessage)); err != nil {
		return nil, errInvalidJSON(err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		// Unreachable after the check above; kept so a parser bug is a 400
		// and not a wrong binding.
		return nil, errInvalidJSON(err.Error())
	}
	return v, nil
}

func parseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := jsonObject{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				obj = append(obj, jsonMember{key: kt.(string), value: v})
			}
			_, err := dec.Token() // '}'
			return obj, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token() // ']'
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil // json.Number, string, bool or nil
	}
}

// fieldSet binds the members of one JSON object, by exact (case-sensitive)
// name. A repeated member is bound again, so the last one wins, as in Jackson.
type fieldSet map[string]func(v any) error

// bind binds v, which must be an object. field names v for a wrong-type
// error; "" means the whole body.
func (fs fieldSet) bind(field string, v any) error {
	obj, ok := v.(jsonObject)
	if !ok {
		return errWrongType(field, "object")
	}
	for _, m := range obj {
		set, ok := fs[m.key]
		if !ok {
			return errUnrecognized(m.key)
		}
		if err := set(m.value); err != nil {
			return err
		}
	}
	return nil
}

// scalarText is the string Jackson binds to a String from a JSON scalar:
// strings as they are, numbers and booleans as their JSON text.
func scalarText(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case json.Number:
		return t.String(), true
	case bool:
		if t {
			return "true", true
		}
		return "false", true
	}
	return "", false
}

// stringField binds a String field: a scalar (coerced as scalarText) or null,
// which leaves "".
func stringField(field string, dst *string) func(any) error {
	return func(v any) error {
		if v == nil {
			*dst = ""
			return nil
		}
		s, ok := scalarText(v)
		if !ok {
			return errWrongType(field, "string")
		}
		*dst = s
		return nil
	}
}

// stringMap binds a Map<String,String>. prefix is put before a key to name a
// bad value ("config." inside a create body, "" for a body that is the map).
// A null value is refused: a Go map cannot hold it, and only PATCH gives
// null a meaning (see patchMap).
func stringMap(field, prefix string, v any) (map[string]string, error) {
	obj, ok := v.(jsonObject)
	if !ok {
		return nil, errWrongType(field, "object")
	}
	m := make(map[string]string, len(obj))
	for _, mem := range obj {
		s, ok := scalarText(mem.value)
		if !ok {
			return nil, errWrongType(prefix+mem.key, "string")
		}
		m[mem.key] = s
	}
	return m, nil
}

// patchMap binds a config patch: scalars coerced as in stringMap, null kept
// as a nil pointer, which removes the key.
func patchMap(v any) (map[string]*string, error) {
	obj, ok := v.(jsonObject)
	if !ok {
		return nil, errWrongType("", "object")
	}
	m := make(map[string]*string, len(obj))
	for _, mem := range obj {
		if mem.value == nil {
			m[mem.key] = nil
			continue
		}
		s, ok := scalarText(mem.value)
		if !ok {
			return nil, errWrongType(mem.key, "string")
		}
		m[mem.key] = &s
	}
	return m, nil
}

// freeMap binds a free-form Map<String,Object> (an offset's partition or
// offset): null stays nil, nested values become plain Go JSON values with
// numbers as json.Number.
func freeMap(field string, dst *map[string]any) func(any) error {
	return func(v any) error {
		if v == nil {
			*dst = nil
			return nil
		}
		obj, ok := v.(jsonObject)
		if !ok {
			return errWrongType(field, "object")
		}
		*dst = plainObject(obj)
		return nil
	}
}

func plainObject(obj jsonObject) map[string]any {
	m := make(map[string]any, len(obj))
	for _, mem := range obj {
		m[mem.key] = plain(mem.value)
	}
	return m
}

func plain(v any) any {
	switch t := v.(type) {
	case jsonObject:
		return plainObject(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

// maxOffsetsPerRequest bounds the entries of one offsets list (PATCH
// …/offsets, initial_offsets). Each entry becomes records of one Kafka
// transaction and part of one request to an agent, so one list's work has
// to be bounded; a larger change takes several PATCHes, as each only adds
// to what is stored.
const maxOffsetsPerRequest = 10000

// offsetList binds a List<ConnectorOffset> (PATCH offsets, initial_offsets).
// null leaves nil; [] gives a non-nil empty slice. A null element cannot be
// told apart from {"partition":null,"offset":null} once bound, so it is
// reported through hasNull for the caller's own check, which Kafka Connect
// runs after binding.
func offsetList(field string, dst *[]api.ConnectorOffset, hasNull *bool) func(any) error {
	return func(v any) error {
		*dst, *hasNull = nil, false // a repeated member replaces the earlier one
		if v == nil {
			return nil
		}
		arr, ok := v.([]any)
		if !ok {
			return errWrongType(field, "array")
		}
		if len(arr) > maxOffsetsPerRequest {
			return errTooManyOffsets(len(arr))
		}
		out := make([]api.ConnectorOffset, len(arr))
		for i, el := range arr {
			if el == nil {
				*hasNull = true
				continue
			}
			if _, ok := el.(jsonObject); !ok {
				return errWrongType(field, "array of objects")
			}
			err := fieldSet{
				"partition": freeMap("partition", &out[i].Partition),
				"offset":    freeMap("offset", &out[i].Offset),
			}.bind(field, el)
			if err != nil {
				return err
			}
		}
		*dst = out
		return nil
	}
}

// The error messages of this package's own checks (spec §0, §5.2).

func errInvalidJSON(detail string) *api.Error {
	return api.Errorf(api.CodeBadRequest, "Invalid JSON in request body: %s", detail)
}

// errWrongType: field "" is the whole body, whose wrong kind is invalid JSON
// for the endpoint rather than a bad field.
func errWrongType(field, kind string) *api.Error {
	if field == "" {
		return errInvalidJSON("expected a JSON " + kind)
	}
	return api.Errorf(api.CodeBadRequest, "Invalid value for field \"%s\": expected %s", field, kind)
}

func errUnrecognized(field string) *api.Error {
	// Names are quoted as Jackson does, without escaping.
	return api.Errorf(api.CodeBadRequest, "Unrecognized field \"%s\"", field)
}

func errTooManyOffsets(n int) *api.Error {
	return api.Errorf(api.CodeTooLarge, "Too many offsets in one request: %d entries (limit %d)", n, maxOffsetsPerRequest)
}

func errTooLarge() *api.Error {
	return api.Errorf(api.CodeTooLarge, "Request body too large (limit %s)", sizeText(MaxBodyBytes))
}
