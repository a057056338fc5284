// Package values converts PostgreSQL column types and values to the Kafka
// Connect schemas and values Debezium 3.6.1's PostgreSQL connector emits,
// under each of its handling modes (decimal.handling.mode,
// time.precision.mode, binary.handling.mode, interval.handling.mode,
// hstore.handling.mode, money.fraction.digits), so that a native connector's
// records are, through the JsonConverter, the ones Debezium writes.
//
// Values arrive in PostgreSQL's text output format, which is what pgoutput
// sends and what a text-format SELECT returns. The conversion relies on the
// session settings DateStyle=ISO, TimeZone=UTC, IntervalStyle=postgres,
// extra_float_digits=3, lc_monetary=C and bytea_output=hex.
//
// Each conversion follows Debezium's streaming path (pgoutput text through
// its column value resolver and PostgresValueConverter); docs/
// cdc-postgres-types.md lists the types, the schemas per mode, and the few
// places where Debezium's snapshot path differs.
package values

import (
	"fmt"

	"github.com/sluice-io/sluice/connect"
)

// Converter converts one column's values; Compile makes one per column so
// that the type is resolved once, not per row. It does not change after
// Compile, so goroutines may share it.
type Converter struct {
	column Column
	modes  Modes
	schema *connect.Schema
	spec   spec
	def    any
	hasDef bool
}

// Compile resolves a column's type under the given modes. A type Sluice does
// not support is an error naming the column and the type, wrapping
// ErrUnsupported; one Debezium leaves out of its records wraps ErrOmitted.
func Compile(c Column, m Modes) (*Converter, error) {
	if err := m.valid(); err != nil {
		return nil, err
	}
	r, err := resolve(c.Type)
	if err != nil {
		return nil, fmt.Errorf("column %s: %w", c.Name, err)
	}
	s, err := build(r, m)
	if err != nil {
		return nil, fmt.Errorf("column %s of type %s: %w", c.Name, typeLabel(c.Type), err)
	}
	s.schema.Optional = c.Optional
	cv := &Converter{column: c, modes: m, schema: s.schema, spec: s}
	cv.def, cv.hasDef = defaultValue(c, r, s, m)
	if cv.hasDef {
		cv.schema.Default = cv.def
	}
	return cv, nil
}

// typeLabel names a type for messages: a domain with its base.
func typeLabel(t Type) string {
	if t.Kind == KindDomain && t.Base != nil {
		return t.Name + " (a domain over " + typeLabel(*t.Base) + ")"
	}
	return t.Name
}

// Schema is the Connect schema Debezium gives the column: optional unless
// the column is NOT NULL, with the column's default (Default) as the schema
// default. It is the Converter's own; treat it as read-only.
func (cv *Converter) Schema() *connect.Schema { return cv.schema }

// Default is the column's default value as Debezium puts it in the field
// schema's "default" (converted like a value), and whether it has one:
// Debezium evaluates literal defaults only, and for a default it computes
// (now(), nextval(...)) it writes a placeholder such as 0 or epoch; a serial
// column's schema has "default": 0. Schema carries it.
func (cv *Converter) Default() (any, bool) { return cv.def, cv.hasDef }

// Value converts a streamed value, pgoutput's text (nil is SQL NULL), to
// the Go value the JsonConverter writes for the schema: int16/int32/int64,
// float32/float64, bool, string, []byte (bytes, Decimal), []any (arrays),
// map[string]any (structs and maps). Use SnapshotValue for the snapshot's
// rows.
//
// A NULL in a NOT NULL column (a delete's old row under REPLICA IDENTITY
// DEFAULT has only the key) becomes, as in Debezium, the column's default or
// else the type's zero (0, "", false, epoch ...).
//
// An error is a value Debezium's converter also fails on, such as NaN in a
// numeric under decimal.handling.mode=precise. Debezium's default
// event.converting.failure.handling.mode=warn then writes null for that
// column and logs a warning; a caller matching it does the same for an
// optional column (a NOT NULL column cannot hold null, and Debezium fails).
func (cv *Converter) Value(text *string) (any, error) {
	if cv.spec.unstreamed {
		text = nil
	}
	return cv.convert(text, cv.spec.conv)
}

// SnapshotValue converts a value the snapshot's SELECT read, as Value does
// a streamed one. Debezium reads snapshot rows through JDBC, not pgoutput,
// and its records differ in two places: an infinite date (-622191234 for
// infinity and -625821272 for -infinity, where a streamed change has
// -2147472692 and -2147472691), and a column of type name (null when
// streamed, its text in a snapshot).
func (cv *Converter) SnapshotValue(text *string) (any, error) {
	conv := cv.spec.conv
	if cv.spec.snapshot != nil {
		conv = cv.spec.snapshot
	}
	return cv.convert(text, conv)
}

func (cv *Converter) convert(text *string, conv func(string) (any, error)) (any, error) {
	if text == nil {
		if cv.column.Optional {
			return nil, nil
		}
		if cv.hasDef {
			return cv.def, nil
		}
		return cv.spec.zero, nil
	}
	v, err := conv(*text)
	if err != nil {
		return nil, fmt.Errorf("column %s of type %s: %w", cv.column.Name, typeLabel(cv.column.Type), err)
	}
	return v, nil
}

// Schema is the Connect schema Debezium gives the column (optional unless
// NOT NULL), with Debezium's names, versions and parameters. A type Sluice
// does not support is an error naming the column and the type. Compile once
// and use the Converter when converting many values.
func Schema(c Column, m Modes) (*connect.Schema, error) {
	cv, err := Compile(c, m)
	if err != nil {
		return nil, err
	}
	return cv.Schema(), nil
}

// Value converts the column's streamed value in PostgreSQL's text output
// format (nil is SQL NULL) to the Go value the JsonConverter in
// connect/converters writes for the column's schema; see Converter.Value
// and, for snapshot rows, Converter.SnapshotValue.
func Value(c Column, m Modes, text *string) (any, error) {
	cv, err := Compile(c, m)
	if err != nil {
		return nil, err
	}
	return cv.Value(text)
}
