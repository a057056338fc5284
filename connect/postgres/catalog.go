package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-io/sluice/connect/postgres/values"
)

// Table is a captured table as the catalog describes it.
type Table struct {
	OID          uint32
	Schema, Name string
	// Columns are the captured columns in the table's order (column filters
	// applied); Key are the indexes in Columns of the primary key's columns
	// in the key's order (none: the table has no primary key).
	Columns []values.Column
	Key     []int
	// Identity is the replica identity: d default, f full, n nothing, i index.
	Identity byte
	// Excluded are the key columns the column lists leave out: they stay
	// in the key, as Debezium keeps them, and out of the rows.
	Excluded map[string]bool
	// Partitioned says the table is a partitioned table's root.
	Partitioned bool
}

// ID is the table's name as Debezium's lists match it: schema.table.
func (t *Table) ID() string { return t.Schema + "." + t.Name }

// catalog reads tables and types, caching types by OID.
type catalog struct {
	conn  *pgconn.PgConn
	types map[uint32]*values.Type
}

func newCatalog(conn *pgconn.PgConn) *catalog {
	return &catalog{conn: conn, types: map[uint32]*values.Type{}}
}

// tables lists the tables cfg captures, in schema then name order. Through a
// publication that publishes partitions' changes as their root's
// (publish_via_partition_root), the roots are captured; otherwise the
// partitions are, as PostgreSQL publishes them.
func (cat *catalog) tables(ctx context.Context, cfg Config, viaRoot bool) ([]*Table, error) {
	kinds := "c.relkind = 'r'"
	if viaRoot {
		kinds = "c.relkind IN ('r', 'p') AND NOT c.relispartition"
	}
	rows, err := query(ctx, cat.conn, `SELECT c.oid, n.nspname, c.relname, c.relreplident, c.relkind
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE (`+kinds+`) AND n.nspname NOT IN ('pg_catalog', 'information_schema')
		AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'
		ORDER BY n.nspname, c.relname`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	var out []*Table
	for _, r := range rows {
		if !cfg.Tables.Table(*r[1], *r[2]) {
			continue
		}
		oid, _ := strconv.ParseUint(*r[0], 10, 32)
		t, err := cat.table(ctx, cfg, uint32(oid), *r[1], *r[2])
		if err != nil {
			return nil, err
		}
		t.Identity = (*r[3])[0]
		t.Partitioned = *r[4] == "p"
		out = append(out, t)
	}
	return out, nil
}

// table reads one table's captured columns and primary key.
func (cat *catalog) table(ctx context.Context, cfg Config, oid uint32, schema, name string) (*Table, error) {
	rel := strconv.FormatUint(uint64(oid), 10)
	rows, err := query(ctx, cat.conn, `SELECT a.attname, a.atttypid, a.atttypmod, a.attnotnull, pg_get_expr(d.adbin, d.adrelid)
		FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, rel)
	if err != nil {
		return nil, fmt.Errorf("read the columns of %s.%s: %w", schema, name, err)
	}
	keys, err := query(ctx, cat.conn, `SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = $1::oid AND i.indisprimary ORDER BY array_position(i.indkey::int2[], a.attnum)`, rel)
	if err != nil {
		return nil, fmt.Errorf("read the primary key of %s.%s: %w", schema, name, err)
	}
	isKey := map[string]bool{}
	for _, k := range keys {
		isKey[*k[0]] = true
	}
	t := &Table{OID: oid, Schema: schema, Name: name, Excluded: map[string]bool{}}
	for _, r := range rows {
		if !cfg.Tables.Column(schema, name, *r[0]) {
			if !isKey[*r[0]] {
				continue
			}
			t.Excluded[*r[0]] = true
		}
		typOID, _ := strconv.ParseUint(*r[1], 10, 32)
		mod, _ := strconv.ParseInt(*r[2], 10, 32)
		typ, err := cat.typ(ctx, uint32(typOID))
		if err != nil {
			return nil, fmt.Errorf("column %s of %s.%s: %w", *r[0], schema, name, err)
		}
		ct := *typ
		ct.Modifier = int32(mod)
		t.Columns = append(t.Columns, values.Column{Name: *r[0], Type: ct, Optional: *r[3] != "t", Default: r[4]})
	}
	for _, k := range keys {
		for i, c := range t.Columns {
			if c.Name == *k[0] {
				t.Key = append(t.Key, i)
			}
		}
	}
	return t, nil
}

// typ resolves a type: its kind, an array's element, a domain's base (with
// the domain's own modifier), an enum's labels.
func (cat *catalog) typ(ctx context.Context, oid uint32) (*values.Type, error) {
	if t, ok := cat.types[oid]; ok {
		return t, nil
	}
	id := strconv.FormatUint(uint64(oid), 10)
	rows, err := query(ctx, cat.conn, `SELECT typname, typtype, typelem, typbasetype, typtypmod, typcategory
		FROM pg_type WHERE oid = $1::oid`, id)
	if err != nil {
		return nil, fmt.Errorf("read type %d: %w", oid, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("type %d is not in pg_type", oid)
	}
	r := rows[0]
	t := &values.Type{OID: oid, Name: *r[0], Modifier: -1, Kind: values.KindBase}
	cat.types[oid] = t // before resolving the parts: a type never contains itself, but be safe
	elem, _ := strconv.ParseUint(*r[2], 10, 32)
	base, _ := strconv.ParseUint(*r[3], 10, 32)
	switch {
	case *r[1] == "d":
		b, err := cat.typ(ctx, uint32(base))
		if err != nil {
			return nil, err
		}
		bt := *b
		mod, _ := strconv.ParseInt(*r[4], 10, 32)
		bt.Modifier = int32(mod)
		t.Kind, t.Base = values.KindDomain, &bt
	case *r[1] == "e":
		labels, err := query(ctx, cat.conn, `SELECT enumlabel FROM pg_enum WHERE enumtypid = $1::oid ORDER BY enumsortorder`, id)
		if err != nil {
			return nil, fmt.Errorf("read the labels of enum %s: %w", t.Name, err)
		}
		t.Kind = values.KindEnum
		for _, l := range labels {
			t.EnumLabels = append(t.EnumLabels, *l[0])
		}
	case *r[5] == "A" && elem != 0:
		e, err := cat.typ(ctx, uint32(elem))
		if err != nil {
			return nil, err
		}
		t.Kind, t.Elem = values.KindArray, e
	}
	return t, nil
}
