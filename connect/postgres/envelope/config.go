package envelope

import (
	"fmt"
	"strings"
	"time"
)

// Op is an event's op field.
type Op string

// The ops of PostgreSQL's change events and logical decoding messages.
const (
	OpRead     Op = "r"
	OpCreate   Op = "c"
	OpUpdate   Op = "u"
	OpDelete   Op = "d"
	OpTruncate Op = "t"
	OpMessage  Op = "m"
)

// BinaryHandling is binary.handling.mode, which types a logical decoding
// message's content (the values package types bytea columns by it).
type BinaryHandling string

// The binary.handling.mode values.
const (
	BinaryBytes         BinaryHandling = "bytes"
	BinaryBase64        BinaryHandling = "base64"
	BinaryBase64URLSafe BinaryHandling = "base64-url-safe"
	BinaryHex           BinaryHandling = "hex"
)

// Defaults of Debezium's topic naming keys.
const (
	DefaultTopicDelimiter       = "."
	DefaultHeartbeatTopicPrefix = "__debezium-heartbeat"
	DefaultTransactionTopic     = "transaction"
)

// Config is what the records depend on, named after Debezium's keys.
// Start from DefaultConfig, which holds Debezium's defaults.
type Config struct {
	// TopicPrefix is topic.prefix: the first part of every topic and
	// source.name.
	TopicPrefix string
	// Database is database.dbname: source.db.
	Database string
	// ConnectorVersion is source.version.
	ConnectorVersion string
	// TopicDelimiter is topic.delimiter, between the parts of a table's,
	// the transaction and the heartbeat topic ("." when empty).
	TopicDelimiter string
	// HeartbeatTopicPrefix is topic.heartbeat.prefix; HeartbeatTopicName,
	// topic.heartbeat.name, replaces the whole heartbeat topic when set.
	HeartbeatTopicPrefix string
	HeartbeatTopicName   string
	// TransactionTopic is topic.transaction, the transaction topic's last
	// part.
	TransactionTopic string
	// TombstonesOnDelete is tombstones.on.delete: a delete is followed by
	// a record with its key and a null value.
	TombstonesOnDelete bool
	// ProvideTransactionMetadata is provide.transaction.metadata: BEGIN and
	// END records, and each event's transaction block.
	ProvideTransactionMetadata bool
	// SkippedOperations is skipped.operations: streamed ops that are not
	// emitted (nor counted in their transaction). Only c, u, d and t apply.
	SkippedOperations []Op
	// SkipMessagesWithoutChange is skip.messages.without.change: an update
	// whose before equals its after (REPLICA IDENTITY FULL) is dropped.
	SkipMessagesWithoutChange bool
	// ExtendedHeaders is extended.headers.enabled: each change event and
	// tombstone carries the __debezium.context.* headers.
	ExtendedHeaders bool
	// TaskID and RunID fill __debezium.context.taskId and .runId. RunID
	// is a random UUID each time the task starts, as Debezium makes one:
	// New makes one when it is empty.
	TaskID string
	RunID  string
	// BinaryHandling is binary.handling.mode.
	BinaryHandling BinaryHandling
	// Now is the clock of the envelope's ts_ms/ts_us/ts_ns and of
	// heartbeats; nil is time.Now.
	Now func() time.Time
}

// DefaultConfig is Debezium's defaults for a connector with topic.prefix
// prefix: tombstones after deletes, extended headers, truncates skipped,
// no transaction metadata, task 0.
func DefaultConfig(prefix string) Config {
	return Config{
		TopicPrefix:          prefix,
		TopicDelimiter:       DefaultTopicDelimiter,
		HeartbeatTopicPrefix: DefaultHeartbeatTopicPrefix,
		TransactionTopic:     DefaultTransactionTopic,
		TombstonesOnDelete:   true,
		SkippedOperations:    []Op{OpTruncate},
		ExtendedHeaders:      true,
		TaskID:               "0",
		BinaryHandling:       BinaryBytes,
	}
}

// validate rejects what would make records Debezium does not make.
func (c Config) validate() error {
	if c.TopicPrefix == "" {
		return fmt.Errorf("envelope: topic.prefix is empty")
	}
	switch c.BinaryHandling {
	case "", BinaryBytes, BinaryBase64, BinaryBase64URLSafe, BinaryHex:
	default:
		return fmt.Errorf("envelope: unknown binary.handling.mode %q", c.BinaryHandling)
	}
	for _, op := range c.SkippedOperations {
		switch op {
		case OpCreate, OpUpdate, OpDelete, OpTruncate:
		default:
			return fmt.Errorf("envelope: skipped.operations cannot skip %q", op)
		}
	}
	return nil
}

func (c Config) delimiter() string {
	if c.TopicDelimiter == "" {
		return DefaultTopicDelimiter
	}
	return c.TopicDelimiter
}

// TableTopic is the topic of table schema.table's events: the prefix, the
// schema and the table joined by the delimiter (empty parts left out), with
// every character Kafka does not allow in a topic name replaced by "_" and
// cut to 249 characters, as Debezium's SchemaTopicNamingStrategy names it.
func (c Config) TableTopic(schema, table string) string {
	parts := make([]string, 0, 3)
	for _, p := range []string{c.TopicPrefix, schema, table} {
		if strings.TrimSpace(p) != "" {
			parts = append(parts, p)
		}
	}
	return sanitizeTopic(strings.Join(parts, c.delimiter()))
}

// HeartbeatTopic is the heartbeat records' topic: topic.heartbeat.name, or
// topic.heartbeat.prefix and topic.prefix joined by the delimiter.
func (c Config) HeartbeatTopic() string {
	if c.HeartbeatTopicName != "" {
		return c.HeartbeatTopicName
	}
	prefix := c.HeartbeatTopicPrefix
	if prefix == "" {
		prefix = DefaultHeartbeatTopicPrefix
	}
	return prefix + c.delimiter() + c.TopicPrefix
}

// TransactionTopicName is the BEGIN and END records' topic: topic.prefix
// and topic.transaction joined by the delimiter.
func (c Config) TransactionTopicName() string {
	t := c.TransactionTopic
	if t == "" {
		t = DefaultTransactionTopic
	}
	return c.TopicPrefix + c.delimiter() + t
}

// MessageTopic is the logical decoding messages' topic, one for every
// prefix: topic.prefix and ".message" — always a dot, whatever the
// delimiter.
func (c Config) MessageTopic() string { return c.TopicPrefix + ".message" }

// maxTopicLength is Kafka's limit on a topic name.
const maxTopicLength = 249

// sanitizeTopic replaces the characters Kafka refuses in a topic name
// (anything but ASCII letters, digits, '.', '_' and '-') by '_', cuts the
// name to Kafka's length limit and renames "." and "..", as Debezium does.
func sanitizeTopic(name string) string {
	var b strings.Builder
	n := 0
	for _, r := range name {
		switch {
		case r == '.' || r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'):
			b.WriteRune(r)
		case r > 0xffff:
			// Java walks UTF-16 code units: two replacements.
			b.WriteString("__")
			n++
		default:
			b.WriteByte('_')
		}
		n++
	}
	out := b.String()
	switch {
	case n > maxTopicLength:
		out = out[:maxTopicLength]
	case out == ".":
		out = "_"
	case out == "..":
		out = "__"
	}
	return out
}
