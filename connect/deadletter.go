package connect

import "context"

// DeadLetter is a consumed record a sink could not process, with why: a
// dead letter queue stores the record as it was consumed and, when asked
// to, the failure in Kafka Connect's __connect.errors.* headers.
type DeadLetter struct {
	// Record is the record as consumed (Kafka's bytes), or as the task's
	// converters serialized it again when it had no consumed original.
	Record RawSinkRecord
	// Stage is Kafka Connect's stage name: KEY_CONVERTER, VALUE_CONVERTER,
	// HEADER_CONVERTER, TRANSFORMATION or TASK_PUT.
	Stage string
	// Class is the class (or Go type) that failed: the converter, the
	// transformation, or the task.
	Class string
	// Exception is the error's class name (Java) or type (Go).
	Exception string
	// Message is the error's message; nil when it had none, which Kafka
	// writes as a header with a null value.
	Message *string
	// Trace is the error's stack trace; empty when there is none.
	Trace string
}

// DeadLetterQueue writes a sink connector's dead letters
// (errors.deadletterqueue.topic.name). Write returns once Kafka has
// acknowledged every letter: the runner commits the offsets of the records
// only after that, as Kafka Connect commits only after its DLQ producer's
// writes.
type DeadLetterQueue interface {
	Write(ctx context.Context, letters []DeadLetter) error
}
