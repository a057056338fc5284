package envelope

import (
	"fmt"

	"github.com/sluice-io/sluice/connect"
)

// Column is one column of a table: its name and the Connect schema the
// values package gives it (its optionality, default and doc included).
type Column struct {
	Name   string
	Schema *connect.Schema
	// Excluded leaves the column out of the value (column.include.list,
	// column.exclude.list); a key column stays in the key all the same, as
	// Debezium filters only the value's columns.
	Excluded bool
}

// Table is a table's record shapes, built once and again when its columns
// change. It is immutable and safe to share.
type Table struct {
	// Schema and Name are the table's PostgreSQL schema and name, as
	// source.schema and source.table carry them.
	Schema, Name string
	// Topic is the table's topic.
	Topic string
	// KeySchema is <topic>.Key: the key columns, in key order; nil when the
	// table has none (its events have a null key).
	KeySchema *connect.Schema
	// ValueSchema is <topic>.Value, before's and after's schema: every
	// column not excluded, in table order; optional.
	ValueSchema *connect.Schema
	// EnvelopeSchema is <topic>.Envelope, version 2: before, after,
	// source, transaction, op, ts_ms, ts_us, ts_ns.
	EnvelopeSchema *connect.Schema

	columns []Column
	// keyIndex holds the positions of the key columns in a row.
	keyIndex []int
}

// NewTable builds the shapes of table schema.name, whose columns are
// columns (in table order) and whose key is made of the columns named
// keyColumns, in that order: the primary key's, message.key.columns', or
// none. A key column's field is the column's own schema, as Debezium builds
// it — a primary key column is NOT NULL, so it is required; a nullable
// column named by message.key.columns is optional in the key too.
func (e *Emitter) NewTable(schema, name string, columns []Column, keyColumns []string) (*Table, error) {
	topic := e.cfg.TableTopic(schema, name)
	t := &Table{Schema: schema, Name: name, Topic: topic, columns: columns}
	value := &connect.Schema{Type: connect.SchemaTypeStruct, Optional: true, Name: topic + ".Value"}
	pos := make(map[string]int, len(columns))
	for i, c := range columns {
		if c.Schema == nil {
			return nil, fmt.Errorf("envelope: table %s.%s: column %q has no schema", schema, name, c.Name)
		}
		if _, dup := pos[c.Name]; dup {
			return nil, fmt.Errorf("envelope: table %s.%s: column %q appears twice", schema, name, c.Name)
		}
		pos[c.Name] = i
		if !c.Excluded {
			value.Fields = append(value.Fields, connect.Field{Name: c.Name, Schema: c.Schema})
		}
	}
	if len(keyColumns) > 0 {
		key := &connect.Schema{Type: connect.SchemaTypeStruct, Name: topic + ".Key"}
		seen := make(map[string]bool, len(keyColumns))
		for _, k := range keyColumns {
			i, ok := pos[k]
			if !ok {
				return nil, fmt.Errorf("envelope: table %s.%s: key column %q is not a column", schema, name, k)
			}
			if seen[k] {
				return nil, fmt.Errorf("envelope: table %s.%s: key column %q appears twice", schema, name, k)
			}
			seen[k] = true
			t.keyIndex = append(t.keyIndex, i)
			key.Fields = append(key.Fields, connect.Field{Name: k, Schema: columns[i].Schema})
		}
		t.KeySchema = key
	}
	t.ValueSchema = value
	t.EnvelopeSchema = &connect.Schema{
		Type: connect.SchemaTypeStruct, Name: topic + ".Envelope", Version: version(envelopeVersion),
		Fields: []connect.Field{
			{Name: "before", Schema: value},
			{Name: "after", Schema: value},
			{Name: "source", Schema: SourceSchema},
			{Name: "transaction", Schema: TransactionBlockSchema},
			{Name: "op", Schema: stringSchema},
			{Name: "ts_ms", Schema: optionalInt64Schema},
			{Name: "ts_us", Schema: optionalInt64Schema},
			{Name: "ts_ns", Schema: optionalInt64Schema},
		},
	}
	return t, nil
}

// Columns returns the table's columns, in table order: a row holds a value
// for each, excluded or not.
func (t *Table) Columns() []Column { return t.columns }

// collection is the table's name in transaction metadata: Debezium's
// TableId text, schema.table.
func (t *Table) collection() string {
	if t.Schema == "" {
		return t.Name
	}
	return t.Schema + "." + t.Name
}

// rowStruct is a row's struct, without its excluded columns: row holds one
// value per column, in table order; nil row (no tuple) gives nil.
func (t *Table) rowStruct(row []any) (map[string]any, error) {
	if row == nil {
		return nil, nil
	}
	if len(row) != len(t.columns) {
		return nil, fmt.Errorf("envelope: table %s: a row of %d values for %d columns", t.collection(), len(row), len(t.columns))
	}
	m := make(map[string]any, len(row))
	for i, c := range t.columns {
		if !c.Excluded {
			m[c.Name] = row[i]
		}
	}
	return m, nil
}

// keyStruct is a row's key; nil when the table has no key or row is nil.
func (t *Table) keyStruct(row []any) map[string]any {
	if t.KeySchema == nil || row == nil {
		return nil
	}
	m := make(map[string]any, len(t.keyIndex))
	for _, i := range t.keyIndex {
		m[t.columns[i].Name] = row[i]
	}
	return m
}
