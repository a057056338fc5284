package connect

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"
)

// The optional task interfaces below are Kafka Connect's task hooks that
// Sluice's Go tasks have not needed; a task implements the ones it wants
// and the runtime calls them. The Java plugins' tasks implement them all.

// RecordMetadata is where Kafka stored a source record.
type RecordMetadata struct {
	// Record is the record as the task returned it from Poll.
	Record    *SourceRecord
	Topic     string
	Partition int32
	Offset    int64
}

// RecordCommitter is a source task told of each record Kafka
// acknowledged (Kafka Connect's SourceTask.commitRecord). The runtime
// batches them and calls CommitRecords between polls, never concurrently
// with Poll; an error is logged, not fatal, as Kafka Connect does.
type RecordCommitter interface {
	CommitRecords(ctx context.Context, records []RecordMetadata) error
}

// OffsetCommitter is a source task told that the offsets of a flush were
// committed (Kafka Connect's SourceTask.commit). An error is logged.
type OffsetCommitter interface {
	Commit(ctx context.Context) error
}

// TopicPartition names a partition of a Kafka topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// RawSinkRecord is a consumed record as Kafka stored it: the runtime's
// converters are skipped for a RawSinkTask.
type RawSinkRecord struct {
	Topic     string
	Partition int32
	Offset    int64
	// Timestamp is zero when the record has none.
	Timestamp time.Time
	// TimestampType is 0 none, 1 create time, 2 log append time (Kafka's
	// TimestampType, as the Java protocol numbers it).
	TimestampType uint8
	Key, Value    []byte
	Headers       []Header
}

// RawSinkTask is a sink task that takes Kafka's bytes and converts them
// itself; the runtime calls PutRaw instead of Put and makes no converters.
type RawSinkTask interface {
	PutRaw(ctx context.Context, records []RawSinkRecord) error
}

// PartitionHandler is a sink task told when partitions are assigned to it
// and taken away (Kafka Connect's SinkTask.open and close). Close follows
// the commit of the partitions' offsets.
type PartitionHandler interface {
	Open(ctx context.Context, partitions []TopicPartition) error
	Close(ctx context.Context, partitions []TopicPartition) error
}

// PreCommitter is a sink task that decides what is committed (Kafka
// Connect's SinkTask.preCommit): given the next offset to consume of each
// partition delivered to it, it returns the offsets that may be committed
// (none for a partition: nothing committed for it). The runtime calls it
// instead of Flush.
type PreCommitter interface {
	PreCommit(ctx context.Context, offsets map[TopicPartition]int64) (map[TopicPartition]int64, error)
}

// SinkControl is what a sink task may ask of its runner (Kafka Connect's
// SinkTaskContext): the calls return at once, from any goroutine, and
// take effect before the next records are fetched.
type SinkControl interface {
	// Rewind makes consumption of each partition resume at its offset.
	Rewind(offsets map[TopicPartition]int64)
	// Pause stops fetching the partitions; Resume starts again.
	Pause(partitions ...TopicPartition)
	Resume(partitions ...TopicPartition)
	// RequestCommit asks for a commit as soon as possible.
	RequestCommit()
}

// Gauge is one measurement a task reports of itself: a replication slot's
// lag, a snapshot's progress. Name is the metric's name without Sluice's
// prefix (letters, digits and '_'), Labels tell apart the gauges of one
// name (a table), and a name's label keys are the same in every report.
type Gauge struct {
	Name, Help string
	Labels     map[string]string
	Value      float64
}

// GaugeReporter is a task that reports gauges of its own. The agent calls
// Gauges at every scrape of its metrics, from another goroutine than the
// task's, while the task runs, and exports each as
// sluice_connector_<Name>{agent, connector, task, <Labels>}.
type GaugeReporter interface {
	Gauges() []Gauge
}

// Signal is a signal for a running source task, as Debezium's signal
// channels carry one: an id (unique; made up when empty), a type
// (execute-snapshot, stop-snapshot, …) and its data, a JSON object.
type Signal struct {
	ID   string
	Type string
	Data []byte
}

// SignalReceiver is a source task that takes signals: the agent hands it
// those of POST /sluice/connectors/{name}/signals. Signal returns once the
// signal is durably on its way (the native PostgreSQL connector's: a row
// committed to its signal table, which its stream reads in order with the
// changes around it). An error that is the signal's own fault, or the
// connector's configuration's, is a *SignalError.
type SignalReceiver interface {
	Signal(ctx context.Context, s Signal) error
}

// SignalError is a signal the task refuses: Message says why. Conflict
// says the connector cannot take signals as configured (no signal table),
// rather than the signal being wrong.
type SignalError struct {
	Message  string
	Conflict bool
}

// Error is the reason the signal was refused.
func (e *SignalError) Error() string { return e.Message }

// NewSignalID is a random UUID (version 4), as Debezium names signals and
// its snapshot chunks.
func NewSignalID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// OffsetsHeldKey is an offset key by which a source task holds its
// connector's offsets to its own class while they carry work in progress
// that only it can continue (the native PostgreSQL connector's incremental
// snapshot): its value is the class. The agent refuses to start a task of
// another class on such offsets — a class change, or a move, to a
// connector that would silently drop the work — until the key is gone.
const OffsetsHeldKey = "sluice_offsets_held_by"
