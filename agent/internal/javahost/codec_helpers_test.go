package javahost

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/sluice-io/sluice/connect"
)

// The host's side of the batch codecs, for the fake host and the codec
// tests: it encodes what the agent decodes and decodes what it encodes.

func encodeSourceBatchForTest(recs []connect.SourceRecord) []byte {
	return encodeSourceBatchFlagsForTest(recs, 0)
}

// encodeSourceBatchFlagsForTest encodes recs, each with the flags of its
// Dropped and Transaction, then the batch's flags.
func encodeSourceBatchFlagsForTest(recs []connect.SourceRecord, batchFlags uint8) []byte {
	e := &encoder{}
	e.u32(uint32(len(recs)))
	for _, r := range recs {
		var flags uint8
		if r.Dropped {
			flags |= recordDropped
		}
		switch r.Transaction {
		case connect.TxnCommit:
			flags |= recordCommitAfter
		case connect.TxnAbort:
			flags |= recordAbortAfter
		}
		e.u8(flags)
		if !r.Dropped {
			_ = e.str(r.Topic)
			p := int32(-1)
			if r.KafkaPartition != nil {
				p = *r.KafkaPartition
			}
			e.u32(uint32(p))
			if r.Timestamp.IsZero() {
				e.i64(noTimestamp)
			} else {
				e.i64(r.Timestamp.UnixMilli())
			}
			e.bytes(r.RawKey)
			e.bytes(r.RawValue)
			e.u16(uint16(len(r.Headers)))
			for _, h := range r.Headers {
				_ = e.str(h.Key)
				e.bytes(h.Value)
			}
		}
		e.bytes(jsonOrNil(r.SourcePartition))
		e.bytes(jsonOrNil(r.SourceOffset))
		if !r.Dropped {
			e.u32(uint32(r.Ref))
		}
	}
	e.u8(batchFlags)
	return e.b
}

// encodeSourceBatchWithOffsetForTest is one record whose source offset is
// the given bytes.
func encodeSourceBatchWithOffsetForTest(offset []byte) []byte {
	e := &encoder{}
	e.u32(1)
	e.u8(0)
	_ = e.str("t")
	e.u32(0)
	e.i64(noTimestamp)
	e.bytes(nil)
	e.bytes(nil)
	e.u16(0)
	e.bytes(nil)
	e.bytes(offset)
	e.u32(0)
	e.u8(0)
	return e.b
}

func jsonOrNil(m map[string]any) []byte {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	return b
}

func decodeSinkBatchForTest(body []byte) (string, []connect.RawSinkRecord, error) {
	d := &decoder{b: body}
	id := d.str()
	n := d.u32()
	var out []connect.RawSinkRecord
	for range n {
		r := connect.RawSinkRecord{Topic: d.str(), Partition: int32(d.u32()), Offset: d.i64()}
		if ts := d.i64(); ts != noTimestamp {
			r.Timestamp = time.UnixMilli(ts)
		}
		r.TimestampType = d.take(1)[0]
		r.Key, r.Value = d.bytes(), d.bytes()
		for range d.u16() {
			r.Headers = append(r.Headers, connect.Header{Key: d.str(), Value: d.bytes()})
		}
		if d.err != nil {
			return "", nil, d.err
		}
		out = append(out, r)
	}
	if len(d.b) != 0 {
		return "", nil, fmt.Errorf("%d bytes left", len(d.b))
	}
	return id, out, d.err
}

// writeFrame writes f in one Write call.
func writeFrame(w io.Writer, f frame) error {
	buf, err := appendFrame(nil, f)
	if err != nil {
		return err
	}
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("write frame %q: %w", f.op, err)
	}
	return nil
}
