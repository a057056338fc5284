package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/postgres/values"
	"github.com/sluice-io/sluice/shared/logthrottle"
)

// Unchanged TOASTed values read back (sluice.toast.reread.tables).
//
// pgoutput does not send a large (TOASTed) value that an UPDATE left alone:
// the new tuple marks the column 'u', and Debezium writes its placeholder.
// Under REPLICA IDENTITY FULL the old tuple carries every value inline
// (PostgreSQL flattens TOASTed values into the old row it logs), so the
// streamer takes the value from there and nothing is read back; under
// DEFAULT or USING INDEX the old tuple is absent or holds the key only,
// so only `after` ever holds a placeholder.
//
// For the tables the option names, Poll reads those columns back from the
// table by the row's key, one query per table per batch, and puts the values
// in the events' after. What is read is the row's value when Poll runs,
// which may be newer than the change (a later event of the row carries the
// same or a newer one). A row gone by then (or whose key changed since), a
// table without a primary key, a row whose key is itself an unchanged
// TOASTed value, and a column retyped since keep the placeholder.

// toastFix is a change event whose after holds placeholders for unchanged
// TOASTed values that are to be read back from its table by the row's key.
// It is made on the streamer's goroutine and filled on Poll's.
type toastFix struct {
	table *Table
	// key are the key columns' values as pgoutput sent them (text), in the
	// order of table.Key.
	key []string
	// cols are the columns to read back (indexes in table.Columns) and
	// conv their converters, taken on the streamer's goroutine: the
	// records' shapes are its own.
	cols []int
	conv []*values.Converter
	// after are the events' after structs to fill (an update that changed
	// the key has one, its create's).
	after []map[string]any
	// done says the fix was applied, or found nothing to apply: a batch
	// cut short hands it to the next poll, which does not read it again;
	// size is the bytes it read back, which that poll counts.
	done bool
	size int
}

// toastFix returns the fix of a change event of rel whose new row still
// holds placeholders (nil when none is due: the table is not one to read
// back, has no key, or every value is there).
func (s *streamer) toastFix(rel *relation, tuple *pglogrepl.TupleData, after *row, recs []connect.SourceRecord) *toastFix {
	t := rel.table
	if len(s.cfg.ToastReread) == 0 || after == nil || len(recs) == 0 || len(t.Key) == 0 || !s.cfg.rereads(t) {
		return nil
	}
	var cols []int
	for j, toast := range after.toast {
		if toast {
			cols = append(cols, j)
		}
	}
	if len(cols) == 0 {
		return nil
	}
	// The key's values as text, straight from the tuple: the converted
	// values are Connect's forms, which SQL does not take back.
	text := make(map[int]string, len(t.Key))
	for i, col := range tuple.Columns {
		if i < len(rel.cols) && rel.cols[i] >= 0 && col.DataType == pglogrepl.TupleDataTypeText {
			text[rel.cols[i]] = string(col.Data)
		}
	}
	f := &toastFix{table: t}
	for _, k := range t.Key {
		v, ok := text[k]
		if !ok {
			return nil // a key column itself unchanged-TOASTed, or NULL: no row to find by it
		}
		f.key = append(f.key, v)
	}
	shape, err := s.rec.shape(t)
	if err != nil {
		return nil
	}
	for _, j := range cols {
		f.cols, f.conv = append(f.cols, j), append(f.conv, shape.conv[j])
	}
	for _, r := range recs {
		if v, ok := r.Value.(map[string]any); ok {
			if a, ok := v["after"].(map[string]any); ok {
				f.after = append(f.after, a)
			}
		}
	}
	if len(f.after) == 0 {
		return nil
	}
	return f
}

// rereads reports whether t's unchanged TOASTed values are read back.
func (c Config) rereads(t *Table) bool {
	return slices.ContainsFunc(c.ToastReread, func(r *regexp.Regexp) bool { return r.MatchString(t.ID()) })
}

// rereader reads unchanged TOASTed values back for Poll, on a session of its
// own (the stream's regular session belongs to the streamer's goroutine),
// opened at its first use.
type rereader struct {
	cfg    Config
	log    *slog.Logger
	conn   *pgconn.PgConn
	warned *logthrottle.Limiter
}

func newRereader(cfg Config, log *slog.Logger) *rereader {
	return &rereader{cfg: cfg, log: log, warned: logthrottle.New(time.Minute)}
}

// maxParams is how many parameters PostgreSQL takes in one statement; a
// batch whose keys need more is read in several queries.
const maxParams = 65535

// fill reads back the values of the fixes of items and puts them in the
// events, and returns how many of the items the batch keeps: the values
// read count against budget with the items' own bytes, and the batch stops
// after the item whose values crossed it — the rest, filled or not, go to
// the next poll, which counts what was filled again. The first item is
// always kept.
//
// A query PostgreSQL refuses (the table or a column dropped or renamed
// since, the key's type changed) leaves that table's placeholders, with a
// warning; an error of the session itself is returned.
func (r *rereader) fill(ctx context.Context, items []item, budget int) (int, error) {
	type pending struct {
		idx int
		fix *toastFix
	}
	var order []uint32
	byTable := map[uint32][]pending{}
	for i, it := range items {
		if f := it.fix; f != nil && !f.done {
			if _, ok := byTable[f.table.OID]; !ok {
				order = append(order, f.table.OID)
			}
			byTable[f.table.OID] = append(byTable[f.table.OID], pending{i, f})
		}
	}
	if len(order) == 0 {
		return fitting(items, budget), nil
	}
	if r.conn == nil {
		c, err := dial(ctx, r.cfg, false, r.cfg.InitialStatements)
		if err != nil {
			return 0, fmt.Errorf("read back unchanged TOASTed values: %w", err)
		}
		r.conn = c
	}
	cut := len(items)
	for _, oid := range order {
		var todo []pending
		for _, p := range byTable[oid] {
			if p.idx < cut {
				todo = append(todo, p)
			}
		}
		if len(todo) == 0 {
			continue
		}
		t := todo[0].fix.table
		per := max(maxParams/len(t.Key), 1)
		for len(todo) > 0 && todo[0].idx < cut {
			part := todo[:min(per, len(todo))]
			todo = todo[len(part):]
			fixes := make([]*toastFix, len(part))
			for i, p := range part {
				fixes[i] = p.fix
			}
			// The batch's bytes up to each row as the rows come (in the
			// items' order): past the budget, the rest is not read now.
			pos, used := 0, 0
			err := r.query(ctx, t, fixes, func(i int) bool {
				idx := part[i].idx
				for ; pos <= idx; pos++ {
					used += itemBytes(items[pos])
				}
				if used > budget && idx+1 < cut {
					cut = idx + 1
					return false
				}
				return true
			})
			if err != nil {
				var pe *pgconn.PgError
				if !errors.As(err, &pe) {
					closeConn(r.conn)
					r.conn = nil
					return 0, fmt.Errorf("read back unchanged TOASTed values of %s: %w", t.ID(), err)
				}
				if r.warned.Due(t.ID(), time.Now()) {
					r.log.Warn("unchanged TOASTed values could not be read back; their placeholders stay", "table", t.ID(), "err", err)
				}
			}
			for _, p := range part {
				if p.idx < cut {
					p.fix.done = true // filled, or no row: the placeholder stays
				}
			}
		}
	}
	// A table read first did not know what the ones after it would add
	// before its rows: the cut, once every value is in, is the one that
	// holds.
	return min(cut, fitting(items, budget)), nil
}

// itemBytes is an item's size: its values as the stream sent them, and
// those read back into it.
func itemBytes(it item) int {
	if it.fix != nil {
		return it.bytes + it.fix.size
	}
	return it.bytes
}

// fitting is how many of items fit in budget: up to the one that crosses it,
// and at least one.
func fitting(items []item, budget int) int {
	used := 0
	for i, it := range items {
		if used += itemBytes(it); used > budget {
			return i + 1
		}
	}
	return len(items)
}

// query reads back the columns of fixes (all of table t) in one statement,
// rows in the fixes' order, and fills each fix it finds a row for (with
// the bytes read as its size); found is told each filled fix (its index in
// fixes), and stops the reading when it returns false.
func (r *rereader) query(ctx context.Context, t *Table, fixes []*toastFix, found func(i int) bool) error {
	// Every column any fix needs, once.
	var cols []int
	for _, f := range fixes {
		for _, j := range f.cols {
			if !slices.Contains(cols, j) {
				cols = append(cols, j)
			}
		}
	}
	var sql strings.Builder
	sql.WriteString("SELECT k.ord")
	for _, j := range cols {
		sql.WriteString(", t." + quoteIdent(t.Columns[j].Name))
	}
	// The keys as a VALUES list of typed parameters, so that the join
	// compares with the key's own type (and uses its index).
	sql.WriteString(" FROM (VALUES ")
	params := make([][]byte, 0, len(fixes)*len(t.Key))
	oids := make([]uint32, 0, cap(params))
	for i, f := range fixes {
		if i > 0 {
			sql.WriteString(", ")
		}
		sql.WriteString("(" + strconv.Itoa(i))
		for n, k := range t.Key {
			params, oids = append(params, []byte(f.key[n])), append(oids, t.Columns[k].Type.OID)
			sql.WriteString(", $" + strconv.Itoa(len(params)))
		}
		sql.WriteString(")")
	}
	sql.WriteString(") AS k(ord")
	for n := range t.Key {
		sql.WriteString(", k" + strconv.Itoa(n))
	}
	sql.WriteString(") JOIN " + quoteIdent(t.Schema) + "." + quoteIdent(t.Name) + " t ON ")
	for n, k := range t.Key {
		if n > 0 {
			sql.WriteString(" AND ")
		}
		sql.WriteString("t." + quoteIdent(t.Columns[k].Name) + " = k.k" + strconv.Itoa(n))
	}
	// The same relation the change came from, not another table given its
	// name since (a partitioned table's rows, published as its own, are
	// its partitions').
	oid := strconv.FormatUint(uint64(t.OID), 10)
	sql.WriteString(" WHERE (t.tableoid = " + oid + " OR pg_partition_root(t.tableoid) = " + oid + ")")
	sql.WriteString(" ORDER BY k.ord")

	rr := r.conn.ExecParams(ctx, sql.String(), params, oids, nil, nil)
	// A column whose type is not the one the change was written with (it
	// was altered since) cannot be converted as the event's schema says:
	// its placeholder stays.
	same := make([]bool, len(cols))
	for i, fd := range rr.FieldDescriptions()[1:] {
		same[i] = fd.DataTypeOID == baseOID(t.Columns[cols[i]].Type)
	}
	for rr.NextRow() {
		vals := rr.Values()
		i, err := strconv.Atoi(string(vals[0]))
		if err != nil || i < 0 || i >= len(fixes) {
			_, _ = rr.Close()
			return fmt.Errorf("read back: row of key %q, not one asked for", vals[0])
		}
		size := 0
		f := fixes[i]
		for n, j := range f.cols {
			c := slices.Index(cols, j)
			if !same[c] {
				continue
			}
			var text *string
			if v := vals[1+c]; v != nil {
				s := string(v)
				text, size = &s, size+len(v)
			}
			v, err := f.conv[n].Value(text)
			if err != nil {
				if r.warned.Due(t.ID()+"/convert", time.Now()) {
					r.log.Warn("a value read back could not be converted; its placeholder stays", "table", t.ID(), "err", err)
				}
				continue
			}
			for _, a := range f.after {
				a[t.Columns[j].Name] = v
			}
		}
		f.size = size
		if !found(i) {
			break
		}
	}
	_, err := rr.Close()
	return err
}

// baseOID is the type PostgreSQL reports a column of type t as in a
// result: a domain's base type, as its row descriptions give it.
func baseOID(t values.Type) uint32 {
	for t.Kind == values.KindDomain && t.Base != nil {
		t = *t.Base
	}
	return t.OID
}

// close ends the rereader's session, if it opened one.
func (r *rereader) close() {
	if r != nil && r.conn != nil {
		closeConn(r.conn)
		r.conn = nil
	}
}
