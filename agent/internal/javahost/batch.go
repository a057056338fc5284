package javahost

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sluice-io/sluice/connect"
)

// noTimestamp is Java's Long.MIN_VALUE, the protocol's "no timestamp".
const noTimestamp = math.MinInt64

// errShort says a binary body ended inside a field.
var errShort = errors.New("binary body ends early")

// decoder reads the protocol's binary fields; the first error sticks, so
// a record is decoded field after field and checked once.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b) {
		d.err = errShort
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) u8() uint8 {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if b := d.take(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if b := d.take(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) i64() int64 {
	if b := d.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (d *decoder) str() string { return string(d.take(int(d.u16()))) }

// bytes reads a nullable byte string; the copy frees the frame's buffer.
func (d *decoder) bytes() []byte {
	n := int32(d.u32())
	if d.err != nil || n == -1 {
		return nil
	}
	if n < 0 {
		d.err = fmt.Errorf("byte string of length %d", n)
		return nil
	}
	b := d.take(int(n))
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// encoder writes the protocol's binary fields.
type encoder struct{ b []byte }

func (e *encoder) u8(v uint8)   { e.b = append(e.b, v) }
func (e *encoder) u16(v uint16) { e.b = binary.BigEndian.AppendUint16(e.b, v) }
func (e *encoder) u32(v uint32) { e.b = binary.BigEndian.AppendUint32(e.b, v) }
func (e *encoder) i64(v int64)  { e.b = binary.BigEndian.AppendUint64(e.b, uint64(v)) }

func (e *encoder) str(s string) error {
	if len(s) > math.MaxUint16 {
		return fmt.Errorf("string of %d bytes is too long", len(s))
	}
	e.u16(uint16(len(s)))
	e.b = append(e.b, s...)
	return nil
}

func (e *encoder) bytes(b []byte) {
	if b == nil {
		e.u32(math.MaxUint32) // -1: null
		return
	}
	e.u32(uint32(len(b)))
	e.b = append(e.b, b...)
}

// The flags of a source batch's records and of the batch (docs/plugins.md).
const (
	recordDropped     = 1 // only the record's position: a transformation dropped it
	recordCommitAfter = 2 // the task asked to commit the transaction after it
	recordAbortAfter  = 4 // … to abort it
	batchCommit       = 1 // the task asked to commit the transaction after the batch
	batchAbort        = 2 // … to abort it
)

// sourceBatch is a decoded task.poll reply.
type sourceBatch struct {
	records []connect.SourceRecord
	// commit and abort are the task's requests for the end of the batch.
	commit, abort bool
}

// decodeSourceBatch decodes a task.poll reply into records already in
// Kafka's bytes (Serialized), each with the host's seq as its Ref, and the
// dropped records' positions (Dropped).
func decodeSourceBatch(body []byte) (sourceBatch, error) {
	d := &decoder{b: body}
	n := d.u32()
	if d.err != nil {
		return sourceBatch{}, fmt.Errorf("source batch: %w", d.err)
	}
	// Each record takes at least 9 bytes (a dropped one: its flags and two
	// null positions): no count can be honest beyond that, and a corrupt
	// one must not allocate gigabytes.
	if uint64(n)*9 > uint64(len(d.b)) {
		return sourceBatch{}, fmt.Errorf("source batch: %d records cannot fit in %d bytes", n, len(d.b))
	}
	recs := make([]connect.SourceRecord, n)
	for i := range recs {
		if err := decodeSourceRecord(d, &recs[i]); err != nil {
			return sourceBatch{}, fmt.Errorf("source batch: record %d of %d: %w", i, n, err)
		}
	}
	flags := d.u8()
	if d.err != nil {
		return sourceBatch{}, fmt.Errorf("source batch: flags: %w", d.err)
	}
	if len(d.b) != 0 {
		return sourceBatch{}, fmt.Errorf("source batch: %d bytes after the batch's flags", len(d.b))
	}
	return sourceBatch{records: recs, commit: flags&batchCommit != 0, abort: flags&batchAbort != 0}, nil
}

// decodeSourceRecord decodes one record of a source batch into r.
func decodeSourceRecord(d *decoder, r *connect.SourceRecord) error {
	flags := d.u8()
	switch {
	case flags&recordAbortAfter != 0:
		r.Transaction = connect.TxnAbort
	case flags&recordCommitAfter != 0:
		r.Transaction = connect.TxnCommit
	}
	r.Dropped = flags&recordDropped != 0
	if !r.Dropped {
		r.Serialized = true
		r.Topic = d.str()
		if p := int32(d.u32()); p != -1 {
			r.KafkaPartition = &p
		}
		if ts := d.i64(); ts != noTimestamp {
			r.Timestamp = time.UnixMilli(ts)
		}
		r.RawKey = d.bytes()
		r.RawValue = d.bytes()
		hs := int(d.u16())
		for range hs {
			if d.err != nil {
				break
			}
			r.Headers = append(r.Headers, connect.Header{Key: d.str(), Value: d.bytes()})
		}
	}
	var err error
	if r.SourcePartition, err = jsonMap(d.bytes()); err != nil {
		return fmt.Errorf("source partition: %w", err)
	}
	if r.SourceOffset, err = jsonMap(d.bytes()); err != nil {
		return fmt.Errorf("source offset: %w", err)
	}
	if !r.Dropped {
		r.Ref = uint64(d.u32())
	}
	return d.err
}

// jsonMap decodes a nullable JSON object.
func jsonMap(b []byte) (map[string]any, error) {
	if b == nil {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// encodeSinkBatch encodes the body of task.put.
func encodeSinkBatch(taskID string, recs []connect.RawSinkRecord) ([]byte, error) {
	e := &encoder{}
	if err := e.str(taskID); err != nil {
		return nil, fmt.Errorf("sink batch: task id: %w", err)
	}
	e.u32(uint32(len(recs)))
	for i := range recs {
		r := &recs[i]
		if err := e.str(r.Topic); err != nil {
			return nil, fmt.Errorf("sink batch: topic: %w", err)
		}
		e.u32(uint32(r.Partition))
		e.i64(r.Offset)
		if r.Timestamp.IsZero() {
			e.i64(noTimestamp)
			e.u8(0)
		} else {
			e.i64(r.Timestamp.UnixMilli())
			e.u8(r.TimestampType)
		}
		e.bytes(r.Key)
		e.bytes(r.Value)
		if len(r.Headers) > math.MaxUint16 {
			return nil, fmt.Errorf("sink batch: %s-%d@%d has %d headers", r.Topic, r.Partition, r.Offset, len(r.Headers))
		}
		e.u16(uint16(len(r.Headers)))
		for _, h := range r.Headers {
			if err := e.str(h.Key); err != nil {
				return nil, fmt.Errorf("sink batch: header key: %w", err)
			}
			e.bytes(h.Value)
		}
	}
	return e.b, nil
}
