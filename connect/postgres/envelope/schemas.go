package envelope

import (
	"strings"

	"github.com/sluice-io/sluice/connect"
)

// Schema names of the records that are not a table's, as Debezium 3.6.1
// names them (schema.name.adjustment.mode=none, its default).
const (
	SourceSchemaName           = "io.debezium.connector.postgresql.Source"
	TransactionBlockSchemaName = "event.block"
	DataCollectionSchemaName   = "event.collection"
	TransactionKeySchemaName   = "io.debezium.connector.common.TransactionMetadataKey"
	TransactionValueSchemaName = "io.debezium.connector.common.TransactionMetadataValue"
	HeartbeatKeySchemaName     = "io.debezium.connector.common.ServerNameKey"
	HeartbeatValueSchemaName   = "io.debezium.connector.common.Heartbeat"
	MessageKeySchemaName       = "io.debezium.connector.postgresql.MessageKey"
	MessageValueSchemaName     = "io.debezium.connector.postgresql.MessageValue"
	MessageBlockSchemaName     = "io.debezium.connector.postgresql.Message"
	// EnumSchemaName is Debezium's enumeration semantic type; its
	// parameter "allowed" lists the values, comma-separated.
	EnumSchemaName = "io.debezium.data.Enum"
)

// envelopeVersion is the version of every table's Envelope schema
// (Debezium's Envelope.SCHEMA_VERSION).
const envelopeVersion = 2

func version(v int32) *int32 { return &v }

// Shared primitive schemas; treat them as read-only.
var (
	int64Schema          = &connect.Schema{Type: connect.SchemaTypeInt64}
	optionalInt64Schema  = &connect.Schema{Type: connect.SchemaTypeInt64, Optional: true}
	stringSchema         = &connect.Schema{Type: connect.SchemaTypeString}
	optionalStringSchema = &connect.Schema{Type: connect.SchemaTypeString, Optional: true}
)

// snapshotSchema is source.snapshot: an optional io.debezium.data.Enum of
// every SnapshotRecord, lower case in declaration order, defaulting to
// "false" — what a streamed event carries (its value is left null and the
// converter writes the default).
var snapshotSchema = &connect.Schema{
	Type: connect.SchemaTypeString, Optional: true, Name: EnumSchemaName, Version: version(1),
	Parameters: map[string]string{"allowed": strings.Join([]string{
		string(SnapshotTrue), string(SnapshotFirst), string(SnapshotFirstInDataCollection),
		string(SnapshotLastInDataCollection), string(SnapshotLast), string(SnapshotFalse), string(SnapshotIncremental),
	}, ",")},
	Default: string(SnapshotFalse),
}

// SourceSchema is the source block of every change event and logical
// decoding message: Debezium's common source fields (version … ts_ns),
// then PostgreSQL's (schema … origin_lsn). Treat it as read-only.
var SourceSchema = &connect.Schema{
	Type: connect.SchemaTypeStruct, Name: SourceSchemaName, Version: version(1),
	Fields: []connect.Field{
		{Name: "version", Schema: stringSchema},
		{Name: "connector", Schema: stringSchema},
		{Name: "name", Schema: stringSchema},
		{Name: "ts_ms", Schema: int64Schema},
		{Name: "snapshot", Schema: snapshotSchema},
		{Name: "db", Schema: stringSchema},
		{Name: "sequence", Schema: optionalStringSchema},
		{Name: "ts_us", Schema: optionalInt64Schema},
		{Name: "ts_ns", Schema: optionalInt64Schema},
		{Name: "schema", Schema: stringSchema},
		{Name: "table", Schema: stringSchema},
		{Name: "txId", Schema: optionalInt64Schema},
		{Name: "lsn", Schema: optionalInt64Schema},
		{Name: "xmin", Schema: optionalInt64Schema},
		{Name: "origin", Schema: optionalStringSchema},
		{Name: "origin_lsn", Schema: optionalInt64Schema},
	},
}

// TransactionBlockSchema is an event's transaction field: null unless
// provide.transaction.metadata is on. Treat it as read-only.
var TransactionBlockSchema = &connect.Schema{
	Type: connect.SchemaTypeStruct, Optional: true, Name: TransactionBlockSchemaName, Version: version(1),
	Fields: []connect.Field{
		{Name: "id", Schema: stringSchema},
		{Name: "total_order", Schema: int64Schema},
		{Name: "data_collection_order", Schema: int64Schema},
	},
}

// dataCollectionSchema is one element of an END record's data_collections.
var dataCollectionSchema = &connect.Schema{
	Type: connect.SchemaTypeStruct, Optional: true, Name: DataCollectionSchemaName, Version: version(1),
	Fields: []connect.Field{
		{Name: "data_collection", Schema: stringSchema},
		{Name: "event_count", Schema: int64Schema},
	},
}

// TransactionKeySchema and TransactionValueSchema are the BEGIN and END
// records' on the transaction topic. Treat them as read-only.
var (
	TransactionKeySchema = &connect.Schema{
		Type: connect.SchemaTypeStruct, Name: TransactionKeySchemaName, Version: version(1),
		Fields: []connect.Field{{Name: "id", Schema: stringSchema}},
	}
	TransactionValueSchema = &connect.Schema{
		Type: connect.SchemaTypeStruct, Name: TransactionValueSchemaName, Version: version(1),
		Fields: []connect.Field{
			{Name: "status", Schema: stringSchema},
			{Name: "id", Schema: stringSchema},
			{Name: "event_count", Schema: optionalInt64Schema},
			{Name: "data_collections", Schema: &connect.Schema{Type: connect.SchemaTypeArray, Optional: true, ValueSchema: dataCollectionSchema}},
			{Name: "ts_ms", Schema: int64Schema},
		},
	}
)

// HeartbeatKeySchema and HeartbeatValueSchema are the heartbeat records'.
// Treat them as read-only.
var (
	HeartbeatKeySchema = &connect.Schema{
		Type: connect.SchemaTypeStruct, Name: HeartbeatKeySchemaName, Version: version(1),
		Fields: []connect.Field{{Name: "serverName", Schema: stringSchema}},
	}
	HeartbeatValueSchema = &connect.Schema{
		Type: connect.SchemaTypeStruct, Name: HeartbeatValueSchemaName, Version: version(1),
		Fields: []connect.Field{{Name: "ts_ms", Schema: int64Schema}},
	}
)

// MessageKeySchema is a logical decoding message's key: its prefix.
var MessageKeySchema = &connect.Schema{
	Type: connect.SchemaTypeStruct, Name: MessageKeySchemaName, Version: version(1),
	Fields: []connect.Field{{Name: "prefix", Schema: optionalStringSchema}},
}

// messageValueSchema is a logical decoding message's value schema; its
// message block's content is typed by binary.handling.mode: bytes for
// "bytes", a string for the text encodings.
func messageValueSchema(binary BinaryHandling) *connect.Schema {
	content := &connect.Schema{Type: connect.SchemaTypeString, Optional: true}
	if binary == BinaryBytes {
		content = &connect.Schema{Type: connect.SchemaTypeBytes, Optional: true}
	}
	block := &connect.Schema{
		Type: connect.SchemaTypeStruct, Name: MessageBlockSchemaName, Version: version(1),
		Fields: []connect.Field{
			{Name: "prefix", Schema: optionalStringSchema},
			{Name: "content", Schema: content},
		},
	}
	return &connect.Schema{
		Type: connect.SchemaTypeStruct, Name: MessageValueSchemaName, Version: version(1),
		Fields: []connect.Field{
			{Name: "op", Schema: stringSchema},
			{Name: "ts_ms", Schema: optionalInt64Schema},
			{Name: "source", Schema: SourceSchema},
			{Name: "transaction", Schema: TransactionBlockSchema},
			{Name: "message", Schema: block},
		},
	}
}
