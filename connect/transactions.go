package connect

// Exactly-once source support (KIP-618): what a source connector says of
// itself to the preflight checks of exactly.once.support=required and
// transaction.boundary=connector, and how its tasks define their own
// transaction boundaries.

// Support is a source connector's answer to one of the preflight checks.
type Support string

// The answers Kafka Connect's ExactlyOnceSupport and
// ConnectorTransactionBoundaries enums allow; SupportUnknown is a connector
// that does not answer (Kafka's null).
const (
	SupportUnknown     Support = ""
	SupportSupported   Support = "SUPPORTED"
	SupportUnsupported Support = "UNSUPPORTED"
)

// ExactlyOnceSourceConnector is the optional interface of a source
// connector that can tell whether a config gets exactly-once delivery
// (Kafka's SourceConnector.exactlyOnceSupport). Without it a connector is
// SupportUnknown, and exactly.once.support=required rejects it.
type ExactlyOnceSourceConnector interface {
	ExactlyOnceSupport(props map[string]string) (Support, error)
}

// TransactionBoundaryConnector is the optional interface of a source
// connector whose tasks can define their own transaction boundaries
// (Kafka's SourceConnector.canDefineTransactionBoundaries). Without it a
// connector is SupportUnsupported, as in Kafka.
type TransactionBoundaryConnector interface {
	CanDefineTransactionBoundaries(props map[string]string) (Support, error)
}

// TransactionRequest is what a source record asks of the open transaction
// right after it is sent, with transaction.boundary=connector and
// exactly-once support on (Kafka's TransactionContext.commitTransaction and
// abortTransaction of a record); ignored otherwise.
type TransactionRequest uint8

const (
	// TxnNone asks nothing.
	TxnNone TransactionRequest = iota
	// TxnCommit commits the transaction after the record.
	TxnCommit
	// TxnAbort aborts the transaction after the record: its records are
	// not written, but their source offsets are committed, so the task
	// does not see them again.
	TxnAbort
)

// TransactionContext is given to a source task that defines its own
// transaction boundaries (SourceTaskContext.Transactions); its requests
// apply once the batch of the current poll is sent. It is safe for
// concurrent use.
type TransactionContext interface {
	// CommitTransaction commits the open transaction after this batch.
	CommitTransaction()
	// AbortTransaction aborts it after this batch (and wins over a commit).
	AbortTransaction()
}
