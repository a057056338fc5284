package converters

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/sluice-io/sluice/connect"
)

// JsonConverter's schema caches (schemas.cache.size, default 1000), as
// Kafka's: with schemas.enable every record carries its schema, and a
// change-data-capture record's schema (a Debezium envelope of a few KB) is
// most of its bytes, the same for every record of a table. One cache holds
// the JSON written for each schema, the other the schema read from each
// JSON form; each holds at most schemas.cache.size entries and drops the
// least recently used. A size below 1 caches nothing.
//
// Kafka keys its write cache on Schema.equals, that is on the schema's
// content, not its identity; so does this one. A *connect.Schema is a
// mutable value, and nothing stops a caller from changing one between two
// records, or from building an equal one per record (a transformation
// that changes a schema builds a new one for every record): a key of the
// schema's content is right in both cases, where a pointer would write a
// changed schema's stale JSON, or miss every time and fill the cache with
// copies. The key costs a walk of the schema, a fraction of writing it
// (BenchmarkJSONFromConnectDataDebezium).
//
// The read cache is keyed by the schema's JSON bytes as read (Kafka keys
// it by the parsed JSON tree, which it must parse first; finding the bytes
// takes only a scan of the envelope, splitEnvelope), and returns the same
// *connect.Schema for every record that carries them, as Kafka returns its
// cached (immutable) Schema: callers must not modify the schema of a
// record they read, which no transformation or sink of Sluice does (they
// build a new schema when they change one).

// schemaKey builds the write cache's key of a schema: a byte string that
// encodes, unambiguously (every string and every list is prefixed with its
// length), everything writeSchema writes — the type, the nested schemas,
// optional, name, version, doc, parameters, the default and the struct
// fields' names. Two schemas with the same key are written alike, and two
// schemas written alike have the same key (but for a default of another
// Go type with the same JSON, which only costs an entry).
type schemaKey struct {
	buf []byte
	// def holds a default value's JSON while it is written.
	def bytes.Buffer
}

// The first byte of a schema's encoding: keyNil for a nil schema, else
// keySchema with the flags of what is present.
const (
	keyNil    byte = 0
	keySchema byte = 1 << 7

	keyOptional   byte = 1 << 1
	keyVersion    byte = 1 << 2
	keyParameters byte = 1 << 3 // non-nil, even empty: "parameters":{} is written
	keyDefault    byte = 1 << 4
)

// of is s's key; it is valid until the schemaKey is used again. The error
// is a default that does not fit its schema, which writeSchema reports.
func (k *schemaKey) of(s *connect.Schema) ([]byte, error) {
	// The key is appended to a local slice, stored back once: storing it
	// in k at each append would cost a write barrier each time.
	buf, err := k.appendSchema(k.buf[:0], s)
	k.buf = buf
	return buf, err
}

func (k *schemaKey) appendSchema(buf []byte, s *connect.Schema) ([]byte, error) {
	if s == nil {
		return append(buf, keyNil), nil
	}
	flags := keySchema
	if s.Optional {
		flags |= keyOptional
	}
	if s.Version != nil {
		flags |= keyVersion
	}
	if s.Parameters != nil {
		flags |= keyParameters
	}
	if s.Default != nil {
		flags |= keyDefault
	}
	buf = append(buf, flags)
	buf = appendKeyType(buf, s.Type)
	buf = appendKeyString(buf, s.Name)
	buf = appendKeyString(buf, s.Doc)
	if s.Version != nil {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(*s.Version))
	}
	if s.Parameters != nil {
		buf = appendKeyParameters(buf, s.Parameters)
	}
	if s.Default != nil {
		var err error
		if buf, err = k.appendDefault(buf, s); err != nil {
			return buf, err
		}
	}
	var err error
	switch s.Type {
	case connect.SchemaTypeArray:
		return k.appendSchema(buf, s.ValueSchema)
	case connect.SchemaTypeMap:
		if buf, err = k.appendSchema(buf, s.KeySchema); err != nil {
			return buf, err
		}
		return k.appendSchema(buf, s.ValueSchema)
	case connect.SchemaTypeStruct:
		buf = binary.AppendUvarint(buf, uint64(len(s.Fields)))
		for _, f := range s.Fields {
			buf = appendKeyString(buf, f.Name)
			if buf, err = k.appendSchema(buf, f.Schema); err != nil {
				return buf, err
			}
		}
	}
	return buf, nil
}

// appendDefault appends s's default: a string, integer or boolean as
// itself, for it is written as a function of its value and the schema, and
// any other as the JSON written for it.
func (k *schemaKey) appendDefault(buf []byte, s *connect.Schema) ([]byte, error) {
	switch d := s.Default.(type) {
	case string:
		return appendKeyString(append(buf, 's'), d), nil
	case bool:
		if d {
			return append(buf, 'T'), nil
		}
		return append(buf, 'F'), nil
	case int8, int16, int32, int64, int:
		n, _ := connect.IntegerValue(d)
		return binary.AppendVarint(append(buf, 'i'), n), nil
	}
	k.def.Reset()
	if err := writeValue(&k.def, s, s.Default, valueOpts{}); err != nil {
		return buf, err
	}
	buf = binary.AppendUvarint(append(buf, 'j'), uint64(k.def.Len()))
	return append(buf, k.def.Bytes()...), nil
}

// appendKeyParameters appends a schema's parameters in key order, as they
// are written; a schema has few, so the sort needs no allocation.
func appendKeyParameters(buf []byte, p map[string]string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(p)))
	if len(p) == 1 {
		for name, value := range p {
			buf = appendKeyString(appendKeyString(buf, name), value)
		}
		return buf
	}
	var small [8]string
	names := small[:0]
	for name := range p {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		buf = appendKeyString(buf, name)
		buf = appendKeyString(buf, p[name])
	}
	return buf
}

// appendKeyType appends a schema type in one byte; 0 is followed by the
// name of a type Connect does not have.
func appendKeyType(buf []byte, t string) []byte {
	var code byte
	switch t {
	case connect.SchemaTypeInt8:
		code = 1
	case connect.SchemaTypeInt16:
		code = 2
	case connect.SchemaTypeInt32:
		code = 3
	case connect.SchemaTypeInt64:
		code = 4
	case connect.SchemaTypeFloat32:
		code = 5
	case connect.SchemaTypeFloat64:
		code = 6
	case connect.SchemaTypeBoolean:
		code = 7
	case connect.SchemaTypeString:
		code = 8
	case connect.SchemaTypeBytes:
		code = 9
	case connect.SchemaTypeArray:
		code = 10
	case connect.SchemaTypeMap:
		code = 11
	case connect.SchemaTypeStruct:
		code = 12
	default:
		return appendKeyString(append(buf, 0), t)
	}
	return append(buf, code)
}

func appendKeyString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// writeSchemaCached writes s as writeSchema does, from the write cache
// when s's content is there, and caches what it writes otherwise.
func (c *JSON) writeSchemaCached(b *bytes.Buffer, s *connect.Schema) error {
	if c.written == nil || s == nil {
		return writeSchema(b, s, c.numeric)
	}
	// The converter's own key buffer keeps its size from record to
	// record; a goroutine that finds it in use builds its key apart.
	k := &c.keyBuf
	if c.keyMu.TryLock() {
		defer c.keyMu.Unlock()
	} else {
		k = new(schemaKey)
	}
	key, err := k.of(s)
	if err != nil {
		// writeSchema fails on the same default, with its own message.
		return writeSchema(b, s, c.numeric)
	}
	if js, ok := c.written.get(key); ok {
		b.Write(js)
		return nil
	}
	start := b.Len()
	if err := writeSchema(b, s, c.numeric); err != nil {
		return err
	}
	c.written.add(key, bytes.Clone(b.Bytes()[start:]))
	return nil
}

// cachedEnvelope reads an envelope the quick way: split (splitEnvelope),
// the payload decoded, the schema from the read cache when the same bytes
// were read before. ok is false when the envelope is not one splitEnvelope
// takes, or a part is not valid JSON: ToConnectData then reads it as it
// does without cache, which reports what is wrong in its own words. With
// ok, err is the schema's own error (asConnectSchema's), which that would
// report too.
func (c *JSON) cachedEnvelope(data []byte) (schema *connect.Schema, payload any, ok bool, err error) {
	rawSchema, rawPayload, ok := splitEnvelope(data)
	if !ok {
		return nil, nil, false, nil
	}
	// The payload first: a syntax error anywhere comes before the
	// schema's errors, as when the whole envelope is decoded at once.
	if payload, ok = decodeExactly(rawPayload); !ok {
		return nil, nil, false, nil
	}
	if bytes.Equal(rawSchema, []byte("null")) {
		return nil, payload, true, nil
	}
	if schema, ok = c.read.get(rawSchema); ok {
		return schema, payload, true, nil
	}
	node, ok := decodeExactly(rawSchema)
	if !ok {
		return nil, nil, false, nil
	}
	if schema, err = asConnectSchema(node); err != nil {
		return nil, nil, true, err
	}
	c.read.add(rawSchema, schema)
	return schema, payload, true, nil
}
