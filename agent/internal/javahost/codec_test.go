package javahost

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
)

func TestFrameRoundTrip(t *testing.T) {
	for _, f := range []frame{
		{typ: frameRequest, id: 7, op: "task.poll", body: []byte(`{"id":"c-0"}`)},
		{typ: frameReply, id: 7, body: []byte{0, 1, 2}},
		{typ: frameError, id: 9, body: []byte(`{"message":"m","trace":"t"}`)},
		{typ: frameNotice, op: "task.request_commit", body: nil},
	} {
		var buf bytes.Buffer
		if err := writeFrame(&buf, f); err != nil {
			t.Fatalf("write %+v: %v", f, err)
		}
		got, err := readFrame(&buf)
		if err != nil {
			t.Fatalf("read %+v: %v", f, err)
		}
		if got.typ != f.typ || got.id != f.id || got.op != f.op || !bytes.Equal(got.body, f.body) {
			t.Errorf("round trip of %+v gave %+v", f, got)
		}
		if _, err := readFrame(&buf); !errors.Is(err, io.EOF) {
			t.Errorf("after the frame: %v, want io.EOF", err)
		}
	}
}

func TestFrameErrors(t *testing.T) {
	good, _ := appendFrame(nil, frame{typ: frameRequest, id: 1, op: "host.hello", body: []byte("{}")})
	for _, tc := range []struct {
		name  string
		input []byte
		want  error  // matched with errors.Is, when set
		text  string // in the error, when set
	}{
		{"empty", nil, io.EOF, ""},
		{"inside the length", good[:2], io.ErrUnexpectedEOF, ""},
		{"inside the body", good[:len(good)-1], io.ErrUnexpectedEOF, ""},
		{"oversized", []byte{0x04, 0x00, 0x00, 0x01}, ErrFrameTooLarge, ""},
		{"shorter than a header", []byte{0, 0, 0, 3, 0, 0, 0}, nil, "shorter than a frame header"},
		{"op overruns", []byte{0, 0, 0, 7, 0, 0, 0, 0, 1, 0, 9}, nil, "overruns"},
		{"unknown type", []byte{0, 0, 0, 7, 4, 0, 0, 0, 1, 0, 0}, nil, "unknown type"},
	} {
		_, err := readFrame(bytes.NewReader(tc.input))
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) || tc.text != "" && !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: %v, want %v %q", tc.name, err, tc.want, tc.text)
		}
	}
	if err := writeFrame(io.Discard, frame{body: make([]byte, maxFrameBytes)}); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("writing 64 MiB of body: %v, want ErrFrameTooLarge", err)
	}
}

func TestSourceBatchRoundTrip(t *testing.T) {
	p := int32(3)
	ts := time.UnixMilli(1_700_000_000_123)
	want := []connect.SourceRecord{
		{Topic: "t", KafkaPartition: &p, Timestamp: ts, Serialized: true, RawKey: []byte("k"), RawValue: []byte("v"),
			Headers:         []connect.Header{{Key: "h", Value: []byte("x")}, {Key: "null", Value: nil}},
			SourcePartition: map[string]any{"file": "a"}, SourceOffset: map[string]any{"pos": float64(12)}, Ref: 41},
		{Topic: "u", Serialized: true, RawKey: nil, RawValue: []byte{}, Ref: 42, Transaction: connect.TxnCommit},
		// A record a transformation dropped: its position alone.
		{Dropped: true, SourcePartition: map[string]any{"file": "a"}, SourceOffset: map[string]any{"pos": float64(20)}, Transaction: connect.TxnAbort},
	}
	got, err := decodeSourceBatch(encodeSourceBatchFlagsForTest(want, batchCommit|batchAbort))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.records, want) || !got.commit || !got.abort {
		t.Errorf("decoded\n%+v\nwant\n%+v and both batch requests", got, want)
	}
	if b, err := decodeSourceBatch([]byte{0, 0, 0, 0, 0}); err != nil || len(b.records) != 0 || b.commit || b.abort {
		t.Errorf("empty batch: %+v, %v", b, err)
	}
}

func TestSourceBatchErrors(t *testing.T) {
	body := encodeSourceBatchForTest([]connect.SourceRecord{{Topic: "t", RawValue: []byte("v"), SourceOffset: map[string]any{"a": "b"}}})
	for _, tc := range []struct {
		name string
		body []byte
		text string
	}{
		{"no count", []byte{0, 0}, "ends early"},
		{"truncated record", body[:len(body)-4], "ends early"},
		{"no batch flags", body[:len(body)-1], "flags"},
		{"trailing bytes", append(append([]byte{}, body...), 1), "after the batch's flags"},
		{"count beyond the body", []byte{0xff, 0xff, 0xff, 0xff, 0}, "cannot fit"},
		{"bad offset JSON", encodeSourceBatchWithOffsetForTest([]byte("{")), "source offset"},
	} {
		if _, err := decodeSourceBatch(tc.body); err == nil || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.text)
		}
	}
}

func TestSinkBatchRoundTrip(t *testing.T) {
	want := []connect.RawSinkRecord{
		{Topic: "in", Partition: 2, Offset: 99, Timestamp: time.UnixMilli(5), TimestampType: 1, Key: []byte("k"), Value: []byte("v"),
			Headers: []connect.Header{{Key: "h", Value: []byte("1")}}},
		{Topic: "in", Partition: 0, Offset: 0, Key: nil, Value: nil},
	}
	body, err := encodeSinkBatch("c-0", want)
	if err != nil {
		t.Fatal(err)
	}
	id, got, err := decodeSinkBatchForTest(body)
	if err != nil {
		t.Fatal(err)
	}
	if id != "c-0" || !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %q\n%+v\nwant\n%+v", id, got, want)
	}
	if _, err := encodeSinkBatch(strings.Repeat("x", 70000), nil); err == nil {
		t.Errorf("a task id over 64 KiB encoded")
	}
}
