package envelope

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"

	"github.com/sluice-io/sluice/connect"
)

// Emitter builds every record the connector emits. It holds the
// transaction metadata state, so one task uses one Emitter, from one
// goroutine. The records it returns have no source partition or offset:
// the caller gives each the offset of the event that made it (the same
// for every record of one call, as Debezium does).
type Emitter struct {
	cfg        Config
	skipped    map[Op]bool
	messageVal *connect.Schema
	context    []connect.Header
	tx         txState
}

// New returns an Emitter for cfg.
func New(cfg Config) (*Emitter, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.BinaryHandling == "" {
		cfg.BinaryHandling = BinaryBytes
	}
	if cfg.RunID == "" {
		cfg.RunID = randomUUID()
	}
	e := &Emitter{cfg: cfg, skipped: map[Op]bool{}}
	for _, op := range cfg.SkippedOperations {
		e.skipped[op] = true
	}
	e.messageVal = messageValueSchema(cfg.BinaryHandling)
	e.context = contextHeaders(cfg)
	return e, nil
}

// randomUUID is a random (version 4) UUID, as Java's UUID.randomUUID.
func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Config returns the Emitter's config.
func (e *Emitter) Config() Config { return e.cfg }

func (e *Emitter) now() time.Time {
	if e.cfg.Now != nil {
		return e.cfg.Now()
	}
	return time.Now()
}

// envelope is an event's value with the processing time stamped in.
func (e *Emitter) envelope(op Op, before, after, source map[string]any) map[string]any {
	now := e.now()
	return map[string]any{
		"before":      structOrNil(before),
		"after":       structOrNil(after),
		"source":      source,
		"transaction": nil,
		"op":          string(op),
		"ts_ms":       now.UnixMilli(),
		"ts_us":       now.UnixMicro(),
		"ts_ns":       epochNanos(now),
	}
}

// structOrNil keeps a nil map an untyped nil, which the converters read as
// null.
func structOrNil(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// record is a change event of t.
func (e *Emitter) record(t *Table, key map[string]any, value map[string]any, headers []connect.Header) connect.SourceRecord {
	r := connect.SourceRecord{Topic: t.Topic, ValueSchema: t.EnvelopeSchema, Value: value, Headers: e.withContext(headers)}
	if key != nil {
		r.KeySchema, r.Key = t.KeySchema, key
	}
	return r
}

// Read is a snapshot's event for row (op r). src.Snapshot says where in
// the snapshot it is; reads are never skipped and carry no transaction.
func (e *Emitter) Read(t *Table, src Source, row []any) (connect.SourceRecord, error) {
	after, err := t.rowStruct(row)
	if err != nil {
		return connect.SourceRecord{}, err
	}
	if after == nil {
		return connect.SourceRecord{}, fmt.Errorf("envelope: table %s: a read without a row", t.collection())
	}
	return e.record(t, t.keyStruct(row), e.envelope(OpRead, nil, after, e.sourceBlock(src, t.Schema, t.Name)), nil), nil
}

// streamed is a streamed change event: it is dropped when its op is
// skipped, and otherwise counted in its transaction (whose BEGIN or END
// records may come first).
func (e *Emitter) streamed(out []connect.SourceRecord, t *Table, op Op, src Source, key, value map[string]any, headers []connect.Header) []connect.SourceRecord {
	if e.skipped[op] {
		return out
	}
	out = e.transactionEvent(out, src, t.collection(), value)
	out = append(out, e.record(t, key, value, headers))
	if op == OpDelete && e.cfg.TombstonesOnDelete {
		// The tombstone repeats the delete's key and headers (a slice of
		// its own, as a transformation may edit one record's).
		tomb := out[len(out)-1]
		tomb.ValueSchema, tomb.Value = nil, nil
		tomb.Headers = slices.Clone(tomb.Headers)
		out = append(out, tomb)
	}
	return out
}

// Insert is an inserted row's event (op c). A nil row (no tuple) emits
// nothing, as Debezium skips empty messages.
func (e *Emitter) Insert(t *Table, src Source, row []any) ([]connect.SourceRecord, error) {
	after, err := t.rowStruct(row)
	if err != nil || after == nil {
		return nil, err
	}
	value := e.envelope(OpCreate, nil, after, e.sourceBlock(src, t.Schema, t.Name))
	return e.streamed(nil, t, OpCreate, src, t.keyStruct(row), value, nil), nil
}

// Update is an updated row's event (op u). old is the old tuple pgoutput
// sent — the whole row under REPLICA IDENTITY FULL, the key columns (the
// other values null, converted as the values package converts a null) when
// the key changed under DEFAULT or USING INDEX — or nil when it sent none,
// which makes before null. When the old key differs from the new one,
// Debezium emits a delete of the old key (with its tombstone) and a create
// of the new one instead, headed __debezium.newkey and __debezium.oldkey.
func (e *Emitter) Update(t *Table, src Source, old, row []any) ([]connect.SourceRecord, error) {
	after, err := t.rowStruct(row)
	if err != nil || after == nil {
		return nil, err
	}
	before, err := t.rowStruct(old)
	if err != nil {
		return nil, err
	}
	if e.cfg.SkipMessagesWithoutChange && before != nil && javaEqual(before, after) {
		return nil, nil
	}
	source := e.sourceBlock(src, t.Schema, t.Name)
	oldKey, newKey := t.keyStruct(old), t.keyStruct(row)
	if oldKey == nil || javaEqual(oldKey, newKey) {
		return e.streamed(nil, t, OpUpdate, src, newKey, e.envelope(OpUpdate, before, after, source), nil), nil
	}
	newKeyHeader := keyHeader(HeaderNewKey, t.KeySchema, newKey)
	out := e.streamed(nil, t, OpDelete, src, oldKey, e.envelope(OpDelete, before, nil, source), []connect.Header{newKeyHeader})
	oldKeyHeader := keyHeader(HeaderOldKey, t.KeySchema, oldKey)
	return e.streamed(out, t, OpCreate, src, newKey, e.envelope(OpCreate, nil, after, cloneStruct(source)), []connect.Header{oldKeyHeader}), nil
}

// javaEqual is Struct.equals on converted values: Java compares a float or
// a double by its bits, so NaN equals NaN and -0.0 differs from 0.0, where
// Go's == says the opposite.
func javaEqual(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y && math.Signbit(x) == math.Signbit(y) || math.IsNaN(x) && math.IsNaN(y))
	case float32:
		y, ok := b.(float32)
		return ok && javaEqual(float64(x), float64(y))
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !javaEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !javaEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// cloneStruct copies a struct's top level, so that the two events of a
// primary key change do not share the source block a caller may edit.
func cloneStruct(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Delete is a deleted row's event (op d), followed by its tombstone when
// tombstones.on.delete. old is the old tuple (see Update); nil emits
// nothing, as Debezium skips a delete without one.
func (e *Emitter) Delete(t *Table, src Source, old []any) ([]connect.SourceRecord, error) {
	before, err := t.rowStruct(old)
	if err != nil || before == nil {
		return nil, err
	}
	value := e.envelope(OpDelete, before, nil, e.sourceBlock(src, t.Schema, t.Name))
	return e.streamed(nil, t, OpDelete, src, t.keyStruct(old), value, nil), nil
}

// Truncate is a truncated table's event (op t): no key, no before or
// after. It is emitted only when skipped.operations does not hold t (its
// default does).
func (e *Emitter) Truncate(t *Table, src Source) []connect.SourceRecord {
	value := e.envelope(OpTruncate, nil, nil, e.sourceBlock(src, t.Schema, t.Name))
	return e.streamed(nil, t, OpTruncate, src, nil, value, nil)
}

// SetSnapshot sets the source.snapshot of a change event record, as
// Debezium marks the snapshot's last record once it knows it is the last.
func SetSnapshot(r *connect.SourceRecord, s Snapshot) error {
	value, ok := r.Value.(map[string]any)
	if !ok {
		return fmt.Errorf("envelope: record on %s is not an event", r.Topic)
	}
	source, ok := value["source"].(map[string]any)
	if !ok {
		return fmt.Errorf("envelope: record on %s has no source block", r.Topic)
	}
	if s == "" || s == SnapshotFalse {
		source["snapshot"] = nil
	} else {
		source["snapshot"] = string(s)
	}
	return nil
}
