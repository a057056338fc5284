// Package generator holds Sluice's generator source connector, which makes
// synthetic records at a steady rate: for load tests, demos and end-to-end
// tests that need a source without an external system. Each of its streams
// is an independent, resumable sequence with its own source partition.
package generator

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluice-io/sluice/connect"
)

// Class is the generator's class name.
const Class = "io.sluice.connect.generator.GeneratorSourceConnector"

// Config keys, and the source partition and offset fields.
const (
	TopicConfig       = "topic"
	StreamsConfig     = "streams"
	CountConfig       = "count"
	RateConfig        = "rate"
	RecordBytesConfig = "record.bytes"
	// TxnRecordsConfig and TxnAbortEveryConfig define the tasks'
	// transactions with transaction.boundary=connector.
	TxnRecordsConfig    = "transaction.records"
	TxnAbortEveryConfig = "transaction.abort.every"
	// TaskStreamsConfig is set by TaskConfigs: the streams one task owns.
	TaskStreamsConfig = "task.streams"

	StreamField = "stream"
	SeqField    = "seq"
)

// Plugin describes the generator for the plugin registry.
func Plugin() *connect.Plugin {
	return &connect.Plugin{
		Class: Class, Kind: connect.KindSource, Version: connect.Version,
		Aliases:      []string{"GeneratorSourceConnector", "GeneratorSource"},
		NewConnector: func() connect.Connector { return &Connector{} },
	}
}

// Bounds of the generator's settings: generous for load tests, and small
// enough that no value makes the coordinator (the task split lists every
// stream) or an agent (a poll holds its records) allocate without bound.
// The rate allocates nothing (a poll is cut at maxBatch records and
// maxBatchBytes); its bound only keeps it a sane number.
const (
	MaxStreams     = 10_000
	MaxRate        = 1_000_000_000
	MaxRecordBytes = 1 << 20
)

// ConfigDef is the generator's config definition.
func ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: TopicConfig, Type: connect.TypeString, Required: true,
			Validator: connect.NonEmptyString{}, Importance: connect.ImportanceHigh,
			Documentation: "The topic to publish data to"}).
		Define(connect.ConfigKey{Name: StreamsConfig, Type: connect.TypeInt, Default: int32(1),
			Validator: connect.Between(1, MaxStreams), Importance: connect.ImportanceMedium,
			Documentation: "The number of independent sequences, each its own source partition {\"stream\": <n>}, at most 10000. " +
				"Streams are spread round-robin over the tasks; there are never more tasks than streams."}).
		Define(connect.ConfigKey{Name: CountConfig, Type: connect.TypeLong, Default: int64(-1),
			Validator: connect.AtLeast(-1), Importance: connect.ImportanceMedium,
			Documentation: "The number of records each stream produces; -1 means no limit. " +
				"Once every stream is done the tasks stay idle."}).
		Define(connect.ConfigKey{Name: RateConfig, Type: connect.TypeInt, Default: int32(1000),
			Validator: connect.Between(1, MaxRate), Importance: connect.ImportanceMedium,
			Documentation: "The number of records per second each task produces, at most 1000000000 (in effect unlimited)."}).
		Define(connect.ConfigKey{Name: RecordBytesConfig, Type: connect.TypeInt, Default: int32(100),
			Validator: connect.Between(0, MaxRecordBytes), Importance: connect.ImportanceLow,
			Documentation: "The length of each record value, at most 1048576 (1 MiB); values are never shorter than their fixed fields."}).
		Define(connect.ConfigKey{Name: TxnRecordsConfig, Type: connect.TypeInt, Default: int32(0),
			Validator: connect.AtLeast(0), Importance: connect.ImportanceLow,
			Documentation: "With exactly-once support and transaction.boundary=connector, each task ends a transaction after every " +
				"this many of its records; 0 (the default) defines no boundaries, and transaction.boundary=connector is refused."}).
		Define(connect.ConfigKey{Name: TxnAbortEveryConfig, Type: connect.TypeInt, Default: int32(0),
			Validator: connect.AtLeast(0), Importance: connect.ImportanceLow,
			Documentation: "With transaction.records, every n-th transaction of a task is aborted instead of committed: its records " +
				"are never visible to read_committed consumers, and their positions are committed all the same. 0 (the default) aborts none."})
}

// Connector splits the streams over tasks.
type Connector struct {
	props   map[string]string
	streams int
}

var (
	_ connect.SourceConnector              = (*Connector)(nil)
	_ connect.ExactlyOnceSourceConnector   = (*Connector)(nil)
	_ connect.TransactionBoundaryConnector = (*Connector)(nil)
)

// ExactlyOnceSupport implements connect.ExactlyOnceSourceConnector: a
// stream resumes after its committed seq, so each record is written once.
func (*Connector) ExactlyOnceSupport(map[string]string) (connect.Support, error) {
	return connect.SupportSupported, nil
}

// CanDefineTransactionBoundaries implements
// connect.TransactionBoundaryConnector: only with transaction.records set.
func (*Connector) CanDefineTransactionBoundaries(props map[string]string) (connect.Support, error) {
	v, err := ConfigDef().Parse(props)
	if err != nil || v.Int(TxnRecordsConfig) <= 0 {
		return connect.SupportUnsupported, nil
	}
	return connect.SupportSupported, nil
}

// ConfigDef implements connect.Connector.
func (*Connector) ConfigDef() *connect.ConfigDef { return ConfigDef() }

// Validate implements connect.Connector; the ConfigDef says everything.
func (*Connector) Validate(map[string]string) []connect.ConfigValue { return nil }

// Start implements connect.Connector: a config the definition rejects
// fails the connector here rather than in every task.
func (c *Connector) Start(_ connect.ConnectorContext, props map[string]string) error {
	v, err := ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	c.props, c.streams = maps.Clone(props), v.Int(StreamsConfig)
	return nil
}

// TaskConfigs implements connect.Connector: min(maxTasks, streams) tasks,
// task i owning streams i, i+n, i+2n, ….
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	streams := c.streams
	n := min(max(maxTasks, 1), streams)
	owned := make([][]string, n)
	for s := range streams {
		owned[s%n] = append(owned[s%n], strconv.Itoa(s))
	}
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = maps.Clone(c.props)
		out[i][TaskStreamsConfig] = strings.Join(owned[i], ",")
	}
	return out, nil
}

// Stop implements connect.Connector.
func (*Connector) Stop() error { return nil }

// NewTask implements connect.SourceConnector.
func (*Connector) NewTask() connect.SourceTask { return &Task{} }

// maxBatch and maxBatchBytes cap one Poll so that a high rate after a
// pause does not build one huge batch: at most 5000 records, and at most
// 4 MiB of values (but always one record).
const (
	maxBatch      = 5000
	maxBatchBytes = 4 << 20
)

// idleWait bounds how long Poll waits for tokens or idles when done.
const idleWait = 200 * time.Millisecond

// Task produces the records of its streams, paced by a token bucket that
// fills at rate tokens per second up to one second's worth.
//
//	Start: next seq per stream = committed seq + 1
//	Poll:  refill tokens ──► none? wait ≤200ms ──► emit round-robin ──► …
type Task struct {
	topic       string
	count       int64
	rate        float64
	recordBytes int
	streams     []int64
	next        []int64 // next seq per stream, parallel to streams
	cursor      int     // round-robin position
	// generated is next as Gauges reads it, from another goroutine than
	// Poll's.
	generated []atomic.Int64
	// parts and keys are each stream's source partition and record key,
	// parallel to streams: made once, not for every record (the runtime
	// only reads a record's partition).
	parts []map[string]any
	keys  []string
	// filler is the alphabet repeated past recordBytes, whose substrings
	// pad every value (Value), so that a record costs one allocation.
	filler string

	tokens float64
	last   time.Time
	now    func() time.Time

	// With connector-defined transactions: end one every txnRecords
	// records, aborting every abortEvery-th; emitted and txns count them.
	txnRecords, abortEvery int
	emitted, txns          int64
}

var (
	_ connect.SourceTask    = (*Task)(nil)
	_ connect.GaugeReporter = (*Task)(nil)
)

// Start implements connect.SourceTask.
func (t *Task) Start(ctx context.Context, tc connect.SourceTaskContext, props map[string]string) error {
	v, err := ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.topic = v.String(TopicConfig)
	t.count = v.Long(CountConfig)
	t.rate = float64(v.Int(RateConfig))
	t.recordBytes = v.Int(RecordBytesConfig)
	if tc.Transactions != nil {
		t.txnRecords, t.abortEvery = v.Int(TxnRecordsConfig), v.Int(TxnAbortEveryConfig)
	}
	owned := props[TaskStreamsConfig]
	if _, set := props[TaskStreamsConfig]; !set {
		for s := range v.Int(StreamsConfig) {
			owned += "," + strconv.Itoa(s)
		}
	}
	for _, s := range strings.Split(owned, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return errors.New("invalid " + TaskStreamsConfig + ": " + owned)
		}
		t.streams = append(t.streams, n)
	}
	t.next = make([]int64, len(t.streams))
	for _, s := range t.streams {
		t.parts = append(t.parts, map[string]any{StreamField: s})
		t.keys = append(t.keys, strconv.FormatInt(s, 10))
	}
	t.filler = strings.Repeat(alphabet, t.recordBytes/len(alphabet)+2)
	if tc.Offsets != nil {
		for i, s := range t.streams {
			off, err := tc.Offsets.Offset(ctx, map[string]any{StreamField: s})
			if err != nil {
				return err
			}
			if seq, ok := asInt(off[SeqField]); ok {
				t.next[i] = seq + 1
			}
		}
	}
	t.generated = make([]atomic.Int64, len(t.streams))
	for i, n := range t.next {
		t.generated[i].Store(n)
	}
	if t.now == nil {
		t.now = time.Now
	}
	t.last = t.now()
	return nil
}

// Gauges implements connect.GaugeReporter: how far each stream is, and,
// for a bounded run, where it ends.
func (t *Task) Gauges() []connect.Gauge {
	out := make([]connect.Gauge, 0, len(t.streams)+1)
	for i, s := range t.streams {
		out = append(out, connect.Gauge{Name: "generator_stream_records",
			Help:   "Records the stream generated, those of earlier runs included: the sequence number of its next record.",
			Labels: map[string]string{"stream": strconv.FormatInt(s, 10)}, Value: float64(t.generated[i].Load())})
	}
	if t.count >= 0 {
		out = append(out, connect.Gauge{Name: "generator_stream_count", Help: "Records each stream generates in all (the count setting).", Value: float64(t.count)})
	}
	return out
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case float64:
		if x == math.Trunc(x) {
			return int64(x), true
		}
	}
	return 0, false
}

func (t *Task) refill() {
	now := t.now()
	t.tokens = min(t.tokens+now.Sub(t.last).Seconds()*t.rate, t.rate)
	t.last = now
}

func (t *Task) done() bool {
	if t.count < 0 {
		return false
	}
	for _, n := range t.next {
		if n < t.count {
			return false
		}
	}
	return true
}

// Poll implements connect.SourceTask. It returns no records, not an error,
// once every stream has produced count records.
func (t *Task) Poll(ctx context.Context) ([]connect.SourceRecord, error) {
	if len(t.streams) == 0 || t.done() {
		_ = sleep(ctx, idleWait)
		return nil, nil
	}
	t.refill()
	if t.tokens < 1 {
		need := time.Duration((1 - t.tokens) / t.rate * float64(time.Second))
		if err := sleep(ctx, min(need, idleWait)); err != nil || ctx.Err() != nil {
			return nil, nil
		}
		t.refill()
	}
	n := min(int(t.tokens), maxBatch, max(maxBatchBytes/max(t.recordBytes, 1), 1))
	records := make([]connect.SourceRecord, 0, n)
	for len(records) < n && !t.done() {
		i := t.cursor
		t.cursor = (t.cursor + 1) % len(t.streams)
		if t.count >= 0 && t.next[i] >= t.count {
			continue
		}
		records = append(records, t.record(i, t.next[i]))
		t.next[i]++
		t.generated[i].Store(t.next[i])
		t.boundary(&records[len(records)-1])
	}
	t.tokens -= float64(len(records))
	return records, nil
}

// record is record seq of the stream at index i of t.streams.
func (t *Task) record(i int, seq int64) connect.SourceRecord {
	return connect.SourceRecord{
		SourcePartition: t.parts[i],
		SourceOffset:    map[string]any{SeqField: seq},
		Topic:           t.topic,
		KeySchema:       connect.StringSchema,
		Key:             t.keys[i],
		ValueSchema:     connect.StringSchema,
		Value:           value(t.streams[i], seq, t.recordBytes, t.filler),
		Timestamp:       t.now(),
	}
}

// boundary marks rec as the end of a transaction when it is one.
func (t *Task) boundary(rec *connect.SourceRecord) {
	if t.txnRecords <= 0 {
		return
	}
	if t.emitted++; t.emitted%int64(t.txnRecords) != 0 {
		return
	}
	rec.Transaction = connect.TxnCommit
	if t.txns++; t.abortEvery > 0 && t.txns%int64(t.abortEvery) == 0 {
		rec.Transaction = connect.TxnAbort
	}
}

// Value is the record value for seq of stream: the JSON text
// {"stream":<s>,"seq":<n>,"payload":"<filler>"} padded with filler letters
// to size bytes, or with no filler when size is smaller than that.
// The filler letter at position i of seq's payload is alphabet[(seq+i)%26].
func Value(stream, seq int64, size int) string {
	return value(stream, seq, size, strings.Repeat(alphabet, size/len(alphabet)+2))
}

// alphabet is the filler's cycle.
const alphabet = "abcdefghijklmnopqrstuvwxyz"

// value is Value with the filler given: at least size+26 letters of
// alphabet repeated from its start.
func value(stream, seq int64, size int, filler string) string {
	// The numbers are formatted on the stack, and the Builder's String
	// does not copy: one allocation a value.
	var sbuf, qbuf [20]byte
	sd := strconv.AppendInt(sbuf[:0], stream, 10)
	qd := strconv.AppendInt(qbuf[:0], seq, 10)
	const open, mid, payload, end = `{"stream":`, `,"seq":`, `,"payload":"`, `"}`
	head := len(open) + len(sd) + len(mid) + len(qd) + len(payload)
	pad := max(size-head-len(end), 0)
	var b strings.Builder
	b.Grow(head + pad + len(end))
	b.WriteString(open)
	b.Write(sd)
	b.WriteString(mid)
	b.Write(qd)
	b.WriteString(payload)
	from := int(seq % int64(len(alphabet)))
	b.WriteString(filler[from : from+pad])
	b.WriteString(end)
	return b.String()
}

// sleep waits for d or until ctx ends, and returns ctx's error then.
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// Stop implements connect.SourceTask.
func (t *Task) Stop() error { return nil }
