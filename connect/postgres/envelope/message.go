package envelope

import (
	"encoding/base64"
	"encoding/hex"

	"github.com/sluice-io/sluice/connect"
)

// Message is a logical decoding message (pg_logical_emit_message).
type Message struct {
	Prefix  string
	Content []byte
	// Transactional says it was emitted inside a transaction (decoded at
	// its commit) rather than at once; a non-transactional one has no
	// transaction id and no commit time.
	Transactional bool
}

// Message is a logical decoding message's record (op m), on the one
// message topic of all prefixes, keyed by its prefix. src has no table,
// so source.schema and source.table are empty. Its value has op, ts_ms
// (the processing time), source, transaction and the message block
// {prefix, content}, content typed by binary.handling.mode; no before,
// after, ts_us or ts_ns, and no headers. The caller filters prefixes
// (message.prefix.include.list / exclude.list).
func (e *Emitter) Message(src Source, m Message) []connect.SourceRecord {
	var content any
	switch e.cfg.BinaryHandling {
	case BinaryBase64:
		content = base64.StdEncoding.EncodeToString(m.Content)
	case BinaryBase64URLSafe:
		content = base64.URLEncoding.EncodeToString(m.Content)
	case BinaryHex:
		content = hex.EncodeToString(m.Content)
	default:
		content = m.Content
	}
	value := map[string]any{
		"op":          string(OpMessage),
		"ts_ms":       e.now().UnixMilli(),
		"source":      e.sourceBlock(src, "", ""),
		"transaction": nil,
		"message":     map[string]any{"prefix": m.Prefix, "content": content},
	}
	var out []connect.SourceRecord
	if e.cfg.ProvideTransactionMetadata {
		out = e.transactionEvent(out, src, messageCollection(), value)
	}
	out = append(out, connect.SourceRecord{
		Topic:     e.cfg.MessageTopic(),
		KeySchema: MessageKeySchema, Key: map[string]any{"prefix": m.Prefix},
		ValueSchema: e.messageVal, Value: value,
	})
	if !m.Transactional {
		// It is the only event at its LSN: no transaction goes on after it.
		e.tx.reset()
	}
	return out
}

// Heartbeat is a heartbeat record: on the heartbeat topic's partition 0,
// keyed by topic.prefix, its value the current time in milliseconds. It
// has no headers.
func (e *Emitter) Heartbeat() connect.SourceRecord {
	partition := int32(0)
	return connect.SourceRecord{
		Topic: e.cfg.HeartbeatTopic(), KafkaPartition: &partition,
		KeySchema: HeartbeatKeySchema, Key: map[string]any{"serverName": e.cfg.TopicPrefix},
		ValueSchema: HeartbeatValueSchema, Value: map[string]any{"ts_ms": e.now().UnixMilli()},
	}
}
