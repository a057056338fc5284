package connect

import "errors"

// Version is the version Sluice reports for its built-in plugins, as Kafka
// Connect reports AppInfoParser.getVersion() for its own.
const Version = "0.1.0"

// ErrDone is returned (possibly wrapped) by SourceTask.Poll when the task will
// never produce another record. The runtime stops polling it but does not mark
// it failed.
var ErrDone = errors.New("connect: source task has no more records")

// Schema type names, spelled as Kafka Connect's Schema.Type in lower case
// (which is also how JsonConverter writes them, except for the two floats).
const (
	SchemaTypeInt8    = "int8"
	SchemaTypeInt16   = "int16"
	SchemaTypeInt32   = "int32"
	SchemaTypeInt64   = "int64"
	SchemaTypeFloat32 = "float32"
	SchemaTypeFloat64 = "float64"
	SchemaTypeBoolean = "boolean"
	SchemaTypeString  = "string"
	SchemaTypeBytes   = "bytes"
	SchemaTypeArray   = "array"
	SchemaTypeMap     = "map"
	SchemaTypeStruct  = "struct"
)

// Schema is a minimal Kafka Connect schema: enough for converters to write
// and read JsonConverter's envelope and for tasks to say what they emit.
// A nil *Schema means "no schema" (schemaless data).
type Schema struct {
	// Type is one of the SchemaType constants.
	Type string
	// Optional says whether null is an allowed value.
	Optional bool
	// Name, Version and Doc are the optional schema metadata.
	Name    string
	Version *int32
	Doc     string
	// Parameters are free-form schema parameters.
	Parameters map[string]string
	// Default is the schema's default value (Kafka Connect's
	// Schema.defaultValue), in the Go type of the schema's values; nil: none.
	// JsonConverter writes it in the schema and, with
	// replace.null.with.default (its default), in place of a null value.
	Default any
	// KeySchema is the key schema of a map.
	KeySchema *Schema
	// ValueSchema is the element schema of an array or the value schema of a
	// map.
	ValueSchema *Schema
	// Fields are a struct's fields, in order.
	Fields []Field
}

// Field is one field of a struct schema.
type Field struct {
	Name   string
	Schema *Schema
}

// Predefined schemas, as Kafka Connect's Schema.STRING_SCHEMA and friends.
// They are shared: treat them as read-only.
var (
	StringSchema         = &Schema{Type: SchemaTypeString}
	OptionalStringSchema = &Schema{Type: SchemaTypeString, Optional: true}
	BytesSchema          = &Schema{Type: SchemaTypeBytes}
	OptionalBytesSchema  = &Schema{Type: SchemaTypeBytes, Optional: true}
	Int64Schema          = &Schema{Type: SchemaTypeInt64}
	BooleanSchema        = &Schema{Type: SchemaTypeBoolean}
)
