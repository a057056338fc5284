package connect

import "time"

// TransformRecord is the record a transformation or a predicate sees, as
// Kafka's ConnectRecord: a source record after the task's poll and before
// the converters, a sink record after the converters and before the task's
// put. Transformations return a new record or change this one; they must
// not change the schemas they were given (those may be shared), only
// replace them.
type TransformRecord struct {
	Topic string
	// KafkaPartition is the record's partition: a sink record's always, a
	// source record's when its task chose one.
	KafkaPartition *int32
	KeySchema      *Schema
	Key            any
	ValueSchema    *Schema
	Value          any
	// Timestamp is zero when the record has none.
	Timestamp time.Time
	// Headers are the record's headers, their values as Kafka's bytes
	// (Kafka Connect's SimpleHeaderConverter form).
	Headers []Header
	// KafkaOffset is a sink record's offset in its partition; nil for a
	// source record.
	KafkaOffset *int64
}

// Transformation is Kafka Connect's single message transformation: it is
// configured once with its settings (the connector config's
// transforms.<alias>. keys without that prefix), then maps each record to
// another, or to nil to drop it.
type Transformation interface {
	Configure(props map[string]string) error
	Apply(rec *TransformRecord) (*TransformRecord, error)
	Close() error
}

// Predicate is Kafka Connect's predicate: a test of a record that decides
// whether a transformation applies to it (transforms.<alias>.predicate).
type Predicate interface {
	Configure(props map[string]string) error
	Test(rec *TransformRecord) (bool, error)
	Close() error
}
