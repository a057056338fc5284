// Package envelope builds the records of the native PostgreSQL source
// connector exactly as Debezium 3.6.1's PostgreSQL connector builds them,
// so that JsonConverter writes the same keys, values, schemas and headers.
// It knows nothing of PostgreSQL's protocol: the connector hands it column
// schemas and converted values (package values) and what it knows of each
// event's position (Source), and gets connect.SourceRecords back, to which
// it adds the source partition and offset.
//
// # Table events
//
// A table's events go to <topic.prefix>.<schema>.<table> (topic.delimiter
// between the parts; characters Kafka refuses become "_"). Built once per
// table by Emitter.NewTable:
//
//   - key: struct <topic>.Key of the key columns in key order (primary key,
//     or message.key.columns), each field the column's own schema (so a
//     nullable message.key.columns column is optional in the key), even a
//     column the column filters leave out of the value; no key columns give
//     a null key and key schema;
//   - value: struct <topic>.Envelope, version 2, required, with fields
//     before and after (struct <topic>.Value of every column the column
//     filters keep, in table order, optional), source (below),
//     transaction (optional struct event.block, version 1: id,
//     total_order, data_collection_order), op (required string), ts_ms,
//     ts_us, ts_ns (optional int64: the processing time, from Config.Now).
//
// Ops: r (snapshot read; after only; no transaction block, never skipped;
// source.snapshot from SnapshotMarker, the last one set by SetSnapshot),
// c (after), u (before and after), d (before), t (truncate: no key, before
// and after null). Update's before is the old tuple pgoutput sends: the
// whole row under REPLICA IDENTITY FULL; under DEFAULT (or USING INDEX)
// only when the key changed, then holding the key columns with every other
// column null — a NOT NULL column shows Debezium's fallback there (its
// schema default, which JsonConverter writes for a null, as a serial's 0;
// else 0 or ""); with no old tuple (DEFAULT, key unchanged; NOTHING)
// before is null. A delete's before is
// likewise the old tuple: key columns only under DEFAULT; PostgreSQL sends
// no delete at all under NOTHING. An update whose old key differs from its
// new key becomes a delete of the old key (header __debezium.newkey: the
// new key), its tombstone, and a create of the new key (header
// __debezium.oldkey: the old key); the key headers are the key struct,
// written by the header converter (SimpleHeaderConverter: {"id":2}).
// With tombstones.on.delete (default true) every delete is followed by a
// tombstone: the same key and headers, a null value. skipped.operations
// (default "t") drops streamed c/u/d/t events before they are counted in
// a transaction; skip.messages.without.change drops an update whose before
// equals its after.
//
// Every change event and tombstone carries, with extended.headers.enabled
// (default true), the headers __debezium.context.connectorLogicalName
// (topic.prefix), __debezium.context.taskId ("0"), .connectorName
// ("postgresql") and .runId (a UUID made at each task start; New makes one
// unless given), after a key header if any. Transaction, heartbeat and
// message records have no headers.
//
// # The source block
//
// Struct io.debezium.connector.postgresql.Source, version 1, required:
// version (string), connector ("postgresql"), name (topic.prefix), ts_ms
// (int64), snapshot (optional io.debezium.data.Enum, version 1, allowed
// "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental",
// default "false": null for streamed events, written as "false"), db
// (database.dbname), sequence (optional string), ts_us, ts_ns (optional
// int64), schema, table (strings; empty for a message), txId, lsn, xmin
// (optional int64, left out of incremental snapshot events), origin
// (optional string) and origin_lsn (optional int64), the replication origin
// of a transaction a subscriber applied. ts_ms/ts_us/ts_ns are the commit
// time (epoch ms, µs and ns as Java's Instant gives them; the current time
// when unknown). sequence is the JSON text ["<last commit LSN>","<event
// LSN>"], each a decimal string or null: [null,"23456"].
//
// # Transaction metadata
//
// With provide.transaction.metadata, BEGIN and END records go to
// <topic.prefix>.<topic.transaction> (default "transaction"), keyed by
// struct io.debezium.connector.common.TransactionMetadataKey {id}, valued
// by io.debezium.connector.common.TransactionMetadataValue {status BEGIN or
// END, id, event_count (END only), data_collections (END only: array of
// event.collection {data_collection "schema.table", event_count}), ts_ms
// (the commit time)}. Every id is "<xid>:<LSN last seen>": BEGIN's the
// BEGIN message's LSN, an event's its own, END's the COMMIT's — so one
// transaction's ids differ. data_collections come in the order of
// Debezium's HashMap, reproduced here (package javahash), including the
// table size it keeps across transactions. A logical decoding message in
// a transaction is counted as a data collection of its own, named
// io.debezium.connector.postgresql.LogicalDecodingMessageMonitor$LogicalDecodingMessageId@<hex>
// after a Java identity hash that cannot be reproduced: the name is random
// here, to be masked when compared. The transaction in progress is kept in
// offsets (transaction_id, transaction_data_collection_order_<collection>)
// by TransactionOffset and RestoreTransaction.
//
// # Other records
//
// Heartbeats go to <topic.heartbeat.prefix>.<topic.prefix> (default prefix
// __debezium-heartbeat; topic.heartbeat.name replaces the whole name),
// partition 0, key io.debezium.connector.common.ServerNameKey {serverName:
// topic.prefix}, value io.debezium.connector.common.Heartbeat {ts_ms: the
// current time}, both version 1.
//
// Logical decoding messages go to <topic.prefix>.message (one topic for
// every prefix, always a dot), key io.debezium.connector.postgresql.MessageKey
// {prefix}, value io.debezium.connector.postgresql.MessageValue {op "m",
// ts_ms (processing time), source, transaction, message
// (io.debezium.connector.postgresql.Message {prefix, content: optional
// bytes, or a string under binary.handling.mode base64, base64-url-safe or
// hex})}, all version 1.
//
// # Comparing with Debezium
//
// TestDebeziumGolden rebuilds every record of Debezium's captured output
// (connect/postgres/testdata/debezium, three configs) from the column
// schemas and values Debezium wrote, and compares them key by key. Fields
// that cannot match Debezium's output from another run, to be
// masked (keeping their presence and JSON type) when comparing: the
// envelope's and the message's ts_ms/ts_us/ts_ns and the heartbeat's ts_ms
// (processing time); source.version (the connector's own); source.ts_ms,
// ts_us, ts_ns, txId, lsn, xmin, sequence and the transaction ids and
// ts_ms (they depend on the database run); the runId header (random per
// run); and the message data collection names in data_collections.
package envelope
