package envelope

import (
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
)

// The headers Debezium puts on change events.
const (
	// HeaderNewKey is on the delete of a primary key change: the new key.
	HeaderNewKey = "__debezium.newkey"
	// HeaderOldKey is on the create of a primary key change: the old key.
	HeaderOldKey = "__debezium.oldkey"
	// The context headers (extended.headers.enabled): topic.prefix, the
	// task's number, "postgresql", and the id of the task's run.
	HeaderConnectorLogicalName = "__debezium.context.connectorLogicalName"
	HeaderTaskID               = "__debezium.context.taskId"
	HeaderConnectorName        = "__debezium.context.connectorName"
	HeaderRunID                = "__debezium.context.runId"
)

// typedHeader is a header as Connect data, to be written by the
// connector's header.converter; Value holds SimpleHeaderConverter's form,
// the default's.
func typedHeader(key string, schema *connect.Schema, data any) connect.Header {
	h := connect.Header{Key: key, Typed: true, Schema: schema, Data: data}
	h.Value, _ = converters.SimpleHeader{}.FromConnectData("", schema, data)
	return h
}

// keyHeader is a primary key change's __debezium.newkey or oldkey header:
// the key struct, with the table's key schema.
func keyHeader(name string, schema *connect.Schema, key map[string]any) connect.Header {
	return typedHeader(name, schema, key)
}

// contextHeaders are the extended headers, built once per Emitter.
func contextHeaders(cfg Config) []connect.Header {
	return []connect.Header{
		typedHeader(HeaderConnectorLogicalName, stringSchema, cfg.TopicPrefix),
		typedHeader(HeaderTaskID, stringSchema, cfg.TaskID),
		typedHeader(HeaderConnectorName, stringSchema, "postgresql"),
		typedHeader(HeaderRunID, stringSchema, cfg.RunID),
	}
}

// withContext appends the context headers to a change event's own, when
// extended.headers.enabled. Each record gets a slice of its own, as a
// transformation may edit it.
func (e *Emitter) withContext(own []connect.Header) []connect.Header {
	if !e.cfg.ExtendedHeaders {
		return own
	}
	out := make([]connect.Header, 0, len(own)+len(e.context))
	out = append(out, own...)
	return append(out, e.context...)
}
