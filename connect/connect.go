// Package connect is Sluice's connector SDK: the interfaces a connector
// plugin implements (Connector, SourceTask, SinkTask, the optional
// OffsetAlterer) and the records that flow through them. It mirrors Kafka
// Connect's API closely enough that a Kafka Connect user recognises every
// part, and it knows nothing about NATS, the coordinator or the agents.
package connect

import (
	"context"
	"time"

	"github.com/sluice-io/sluice/connect/allowedpaths"
)

// Kind is what sort of plugin a Plugin is; its String is the REST spelling.
type Kind string

// Plugin kinds, as GET /connector-plugins spells them.
const (
	KindSource          Kind = "source"
	KindSink            Kind = "sink"
	KindConverter       Kind = "converter"
	KindHeaderConverter Kind = "header_converter"
	KindTransformation  Kind = "transformation"
	KindPredicate       Kind = "predicate"
)

// Connector is the part of a plugin that validates a connector's config and
// splits its work into task configs. Sluice runs it inside the coordinator.
//
// ConfigDef, Validate and OffsetAlterer's AlterOffsets are called on fresh
// instances that are never started. An instance that runs the connector
// goes through Kafka Connect's lifecycle, once:
//
//	new ──► Start(ctx, props) ──► TaskConfigs(max) ──► … TaskConfigs(max) ──► Stop()
//	            │ error                   │ error: the runtime retries later
//	            ▼                         ▼
//	      FAILED, retried later     FAILED, the last good task configs keep running
//
// TaskConfigs is called after Start returned nil, never concurrently with
// Start, Stop or itself, and only when the task configs may have changed:
// after Start, and after the connector called RequestTaskReconfiguration. A
// config change or a restart stops the instance and starts a new one; a
// pause or a stop of the connector stops it, and a resume starts a new one
// (as Kafka Connect stops a paused connector's Connector). Stop
// is called exactly once for every successful Start (a failed Start is not
// followed by Stop), and no method is called after it.
type Connector interface {
	// ConfigDef defines the connector's own config keys.
	ConfigDef() *ConfigDef
	// Validate checks a whole config beyond what ConfigDef checks key by key
	// (for example that two keys agree). It returns one result per key it has
	// an opinion on; ConfigDef's results are merged with these.
	Validate(props map[string]string) []ConfigValue
	// Start starts the connector with its whole config. ctx stays valid
	// until Stop returns; the connector may keep it to talk back to the
	// runtime, from any goroutine.
	Start(ctx ConnectorContext, props map[string]string) error
	// TaskConfigs splits the connector's work into at most maxTasks task
	// configs. It must be deterministic for what the connector knows: the
	// same knowledge gives the same output, so the runtime can tell when the
	// tasks really changed.
	TaskConfigs(maxTasks int) ([]map[string]string, error)
	// Stop releases what Start acquired (connections, monitoring
	// goroutines). The runtime ignores calls to the ConnectorContext made
	// after Stop returned.
	Stop() error
}

// ConnectorContext is how a started Connector talks back to the runtime
// (Kafka Connect's ConnectorContext). Its methods return at once and are
// safe to call from any goroutine.
type ConnectorContext interface {
	// RequestTaskReconfiguration asks the runtime to call TaskConfigs again,
	// for example because the source system gained tables. The call happens
	// later, on the runtime's schedule, and several requests may be served
	// by one call.
	RequestTaskReconfiguration()
	// RaiseError says the connector has failed on its own, outside any call
	// from the runtime. The connector is reported FAILED with err as its
	// trace and stopped; its tasks keep running with their task configs,
	// and a restart (or a config change) starts it again.
	RaiseError(err error)
}

// SourceConnector is a Connector whose tasks read from an external system.
type SourceConnector interface {
	Connector
	// NewTask returns a new, unstarted task.
	NewTask() SourceTask
}

// SinkConnector is a Connector whose tasks write to an external system.
type SinkConnector interface {
	Connector
	// NewTask returns a new, unstarted task.
	NewTask() SinkTask
}

// Offset is one partition's offset in the REST shape. A nil Offset is a
// tombstone: the partition's offset is to be removed. For sink connectors the
// partition has the keys kafka_topic and kafka_partition and the offset the
// key kafka_offset.
type Offset struct {
	Partition map[string]any
	Offset    map[string]any
}

// OffsetAlterer is implemented by connectors that take part in offset
// changes made through the REST API (Kafka Connect's alterOffsets). Returning
// true means the connector itself acknowledges the change; an error rejects
// the request with the error's message, and nothing is written.
type OffsetAlterer interface {
	AlterOffsets(props map[string]string, offsets []Offset) (bool, error)
}

// OffsetReader gives a source task the committed offset of a source
// partition (Kafka Connect's OffsetStorageReader). A partition with no
// committed offset gives nil.
type OffsetReader interface {
	Offset(ctx context.Context, partition map[string]any) (map[string]any, error)
}

// SourceTaskContext is what a source task is given when it starts.
type SourceTaskContext struct {
	// Offsets reads committed source offsets.
	Offsets OffsetReader
	// WorkDir is the directory relative file paths resolve against.
	WorkDir string
	// AllowedPaths are the directories the agent lets tasks' files be in
	// (--file-allowed-paths; nil: anywhere). A task that opens files named
	// by its config resolves them with AllowedPaths.Check.
	AllowedPaths *allowedpaths.Paths
	// Transactions is where the task defines its transaction boundaries;
	// non-nil only with exactly-once support on and
	// transaction.boundary=connector.
	Transactions TransactionContext
}

// SourceTask reads records from an external system.
type SourceTask interface {
	// Start prepares the task; it is called once, before Poll.
	Start(ctx context.Context, tc SourceTaskContext, props map[string]string) error
	// Poll returns the next records, or none if nothing is available yet. It
	// should return within about a second so that pause and stop stay prompt.
	// ErrDone (or a wrapped one) says the task has no more records, ever.
	Poll(ctx context.Context) ([]SourceRecord, error)
	// Stop releases what the task holds. Poll is not called concurrently with
	// or after Stop.
	Stop() error
}

// SinkTaskContext is what a sink task is given when it starts.
type SinkTaskContext struct {
	// WorkDir is the directory relative file paths resolve against.
	WorkDir string
	// AllowedPaths: see SourceTaskContext.AllowedPaths.
	AllowedPaths *allowedpaths.Paths
	// Control is how the task asks its runner to rewind, pause, resume or
	// commit (Kafka Connect's SinkTaskContext actions).
	Control SinkControl
	// DeadLetters is the connector's dead letter queue; nil when it has
	// none (errors.deadletterqueue.topic.name is empty).
	DeadLetters DeadLetterQueue
}

// SinkTask writes records to an external system.
type SinkTask interface {
	// Start prepares the task; it is called once, before Put.
	Start(ctx context.Context, tc SinkTaskContext, props map[string]string) error
	// Put hands over records in order per partition. They need not be
	// durable until Flush returns.
	Put(ctx context.Context, records []SinkRecord) error
	// Flush makes everything Put so far durable; after it returns the
	// runtime commits the consumed offsets.
	Flush(ctx context.Context) error
	// Stop releases what the task holds.
	Stop() error
}

// SourceRecord is a record produced by a source task, with the source
// partition and offset it moves the task to.
type SourceRecord struct {
	SourcePartition map[string]any
	SourceOffset    map[string]any
	Topic           string
	// KafkaPartition picks a partition; nil leaves it to the partitioner.
	KafkaPartition *int32
	KeySchema      *Schema
	Key            any
	ValueSchema    *Schema
	Value          any
	Timestamp      time.Time
	Headers        []Header
	// Serialized says the record is already in Kafka's bytes: RawKey and
	// RawValue are written as they are and the converters are skipped (the
	// schemas, Key and Value are ignored). A task whose records another
	// runtime converted sets it, as the Java plugins' tasks do.
	Serialized bool
	RawKey     []byte
	RawValue   []byte
	// Ref is the task's own number for the record, handed back untouched in
	// RecordMetadata; the runtime does not read it.
	Ref uint64
	// Transaction asks to commit or abort the open transaction right after
	// this record (see TransactionRequest).
	Transaction TransactionRequest
	// Dropped says the record is not written (a transformation dropped
	// it): only its source offset is committed, as Kafka Connect commits
	// the position of a dropped record.
	Dropped bool
}

// SinkRecord is a record consumed by a sink task.
type SinkRecord struct {
	Topic       string
	Partition   int32
	Offset      int64
	KeySchema   *Schema
	Key         any
	ValueSchema *Schema
	Value       any
	Timestamp   time.Time
	Headers     []Header
}

// Header is a record header, passed through as bytes.
type Header struct {
	Key   string
	Value []byte
	// Typed says the header was made by a transformation as Connect data:
	// Schema and Data hold it, and the connector's header converter
	// (header.converter, by default Kafka's SimpleHeaderConverter) writes
	// Value from them before the record is produced or put. Value already
	// holds SimpleHeaderConverter's form.
	Typed  bool
	Schema *Schema
	Data   any
}

// Converter turns Connect data into the bytes of a Kafka record and back.
type Converter interface {
	// Configure applies the converter's settings (prefix already removed).
	Configure(props map[string]string, isKey bool) error
	// FromConnectData serialises a value for topic.
	FromConnectData(topic string, schema *Schema, value any) ([]byte, error)
	// ToConnectData deserialises bytes read from topic.
	ToConnectData(topic string, data []byte) (*Schema, any, error)
}
