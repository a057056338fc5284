package postgres

// Incremental snapshots, as Debezium and DBLog take them: a table is read
// in chunks of its primary key while the stream goes on, each chunk between
// a low and a high watermark — rows the connector writes to the signal
// table, which the stream reads back in their place:
//
//	execute-snapshot ─► readChunk: INSERT <chunk>-open ─► SELECT the chunk ─► INSERT <chunk>-close
//	stream: … <chunk>-open … changes of the table (their keys leave the chunk) … <chunk>-close
//	        ─► the chunk's rows left are emitted (op r, source.snapshot incremental) ─► readChunk …
//
// A row changed while its chunk's window is open is emitted by the stream,
// and dropped from the chunk: the chunk's value may be older. A row changed
// before the window opened is streamed before the chunk is emitted, and one
// changed after it closed after: a consumer's last value of every key is the
// table's, whatever the order of reads and writes.
//
// Where the snapshot stands — the tables left, the last key emitted, the
// key the current table ends at — rides in every offset the stream
// writes while it runs (keyIncremental), so a restarted task reads on from
// the chunk after the last key committed.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/postgres/envelope"
	"github.com/sluice-io/sluice/connect/postgres/signals"
)

// keyIncremental is the offset key of an incremental snapshot in progress:
// incState as JSON. Debezium's own keys (incrementalKeys) hold Java
// serializations; this is Sluice's, and Debezium does not read it — so
// the offsets are held to the native class meanwhile
// (connect.OffsetsHeldKey).
const keyIncremental = "sluice_incremental_snapshot"

// snapshotIncremental is the offset's snapshot kind of an incremental
// snapshot's reads, as Debezium writes it.
const snapshotIncremental = "INCREMENTAL"

// incState is what an incremental snapshot keeps in the offsets.
type incState struct {
	// ID is the execute-snapshot signal's id.
	ID string `json:"id,omitempty"`
	// Tables are the tables left, the first being read.
	Tables []incTable `json:"tables"`
	// LastKey is the key (its columns' text) of the last row of Tables[0]
	// emitted; none: the table's first chunk is next.
	LastKey []string `json:"last_key,omitempty"`
	// MaxKey is the largest key of Tables[0] when its reading began: the
	// snapshot reads up to it (later rows are streamed).
	MaxKey []string `json:"max_key,omitempty"`
	// Rows counts the rows of Tables[0] emitted.
	Rows int64 `json:"rows,omitempty"`
}

// incTable is one table of an incremental snapshot and the condition that
// selects its rows (additional-conditions; "" for all).
type incTable struct {
	Schema string `json:"schema"`
	Name   string `json:"table"`
	Filter string `json:"filter,omitempty"`
}

// ID is schema.table.
func (t incTable) ID() string { return t.Schema + "." + t.Name }

// parseIncState reads the state from a stored offset; nil when none runs.
func parseIncState(o map[string]any) (*incState, error) {
	v, ok := o[keyIncremental]
	if !ok || v == nil {
		return nil, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("offset key %s: %v is not a string", keyIncremental, v)
	}
	var st incState
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		return nil, fmt.Errorf("offset key %s: %w", keyIncremental, err)
	}
	if len(st.Tables) == 0 {
		return nil, nil
	}
	return &st, nil
}

// windowRow is a row of the chunk in the window.
type windowRow struct {
	key     []string
	values  []any
	bytes   int
	dropped bool // the stream changed it while the window was open
}

// incremental runs the incremental snapshots of one stream. Only the
// stream's goroutine calls it, but for Gauges.
type incremental struct {
	cfg     Config
	log     *slog.Logger
	conn    *pgconn.PgConn // the task's regular session: chunks and watermarks
	cat     *catalog
	rec     *records
	viaRoot bool
	// known is the table the stream registered for a relation (nil:
	// none yet), whose record shapes the snapshot's rows must share.
	known func(oid uint32) *Table

	state incState
	// stored is state as JSON, as the offsets carry it; "" until store
	// needs it after a change (touch).
	stored string
	// chunkEnd is the key after which the next chunk starts.
	chunkEnd []string
	// table is Tables[0] from the catalog (nil: to look up).
	table   *Table
	chunkID string
	opened  time.Time
	// open says the current chunk's low watermark was read: the stream's
	// changes of the table take their keys out of the window.
	open   bool
	window []windowRow
	// snap is the snapshot the window's rows were read in (visibility.go).
	snap  xidSnapshot
	index map[string]int
	// stops are stop-snapshot requests not applied yet, each the
	// data-collections it named (none: every table).
	stops [][]string
	// emitted is the size of the rows emitted since takeBytes, which a
	// poll's batch counts as it counts the stream's (batchBytes).
	emitted int

	mu       sync.Mutex
	progress map[string]*incProgress
	order    []string
	refused  int64 // signals refused
}

// incProgress is one table's part of the incremental snapshots, for the
// gauges.
type incProgress struct {
	rows, estimate int64
	done           bool
}

// newIncremental makes the stream's incremental snapshots, resuming the
// stored one (nil: none).
func newIncremental(cfg Config, log *slog.Logger, cat *catalog, rec *records, viaRoot bool, stored *incState) *incremental {
	inc := &incremental{cfg: cfg, log: log, conn: cat.conn, cat: cat, rec: rec, viaRoot: viaRoot, progress: map[string]*incProgress{}}
	if stored != nil {
		inc.state = *stored
		inc.chunkEnd = stored.LastKey
		inc.setProgress(stored.Tables[0].ID(), func(p *incProgress) { p.rows = stored.Rows })
	}
	return inc
}

func (inc *incremental) running() bool { return len(inc.state.Tables) > 0 }

// touch says the state changed: the offsets carry it anew.
func (inc *incremental) touch() { inc.stored = "" }

// store adds the state to an offset while a snapshot runs.
func (inc *incremental) store(o map[string]any) {
	if !inc.running() {
		return
	}
	if inc.stored == "" {
		// Made once a change: every streamed event's offset carries it.
		b, _ := json.Marshal(inc.state)
		inc.stored = string(b)
	}
	o[keyIncremental] = inc.stored
	// Debezium would read on without the snapshot: the agent refuses to
	// start another class's task on these offsets.
	o[connect.OffsetsHeldKey] = Class
}

// signal acts on a row of the signal table the stream read at p. It
// returns the records it emits: a closed window's rows. A signal it
// cannot act on is logged, as Debezium logs it, and the stream goes on.
func (inc *incremental) signal(ctx context.Context, sg signal, p position) ([]connect.SourceRecord, error) {
	switch sg.Type {
	case signals.ExecuteSnapshot:
		return nil, inc.execute(ctx, sg)
	case signals.StopSnapshot:
		req, err := signals.ParseRequest(sg.Data, false)
		if err != nil {
			inc.refuse(sg, err)
			return nil, nil
		}
		if inc.running() {
			inc.log.Info("incremental snapshot: stop requested", "signal", sg.ID, "tables", req.DataCollections)
			inc.stops = append(inc.stops, req.DataCollections)
		} else {
			inc.log.Warn("incremental snapshot: stop-snapshot signal, but no incremental snapshot runs", "signal", sg.ID)
		}
		return nil, nil
	case signals.WindowOpen:
		if inc.chunkID != "" && sg.ID == inc.chunkID+"-open" {
			inc.open = true
		}
		return nil, nil
	case signals.WindowClose:
		if inc.chunkID == "" || sg.ID != inc.chunkID+"-close" {
			return nil, nil // a watermark of a chunk before a restart
		}
		inc.open = false
		recs, err := inc.emitWindow(p)
		if err != nil {
			return nil, err
		}
		return recs, inc.readChunk(ctx)
	}
	inc.log.Warn("a signal of a type the native connector does not know; ignored", "signal", sg.ID, "type", sg.Type)
	return nil, nil
}

// refuse logs a signal the connector cannot act on and counts it.
func (inc *incremental) refuse(sg signal, err error) {
	inc.log.Error("signal refused", "signal", sg.ID, "type", sg.Type, "err", err)
	inc.mu.Lock()
	inc.refused++
	inc.mu.Unlock()
}

// execute starts an incremental snapshot of the signal's tables, or adds
// them to the one running.
func (inc *incremental) execute(ctx context.Context, sg signal) error {
	req, err := signals.ParseRequest(sg.Data, true)
	if err != nil {
		inc.refuse(sg, err)
		return nil
	}
	tables, err := inc.cat.tables(ctx, inc.cfg, inc.viaRoot)
	if err != nil {
		return err
	}
	ids := make([]string, len(tables))
	for i, t := range tables {
		ids[i] = t.ID()
	}
	matched, unmatched, err := signals.Match(req.DataCollections, ids)
	if err != nil {
		inc.refuse(sg, err)
		return nil
	}
	if len(unmatched) > 0 {
		inc.refuse(sg, fmt.Errorf("data-collections %s match no captured table", strings.Join(unmatched, ", ")))
	}
	var add []incTable
	for _, id := range matched {
		t := tables[slices.Index(ids, id)]
		if len(t.Key) == 0 {
			inc.refuse(sg, fmt.Errorf("table %s has no primary key, which an incremental snapshot reads it by; it is skipped", id))
			continue
		}
		add = append(add, incTable{Schema: t.Schema, Name: t.Name, Filter: req.Filter(id)})
	}
	if len(add) == 0 {
		return nil
	}
	wasRunning := inc.running()
	inc.state.Tables = append(inc.state.Tables, add...)
	inc.touch()
	for _, t := range add {
		inc.setProgress(t.ID(), func(p *incProgress) { *p = incProgress{} })
	}
	inc.log.Info("incremental snapshot requested", "signal", sg.ID, "tables", len(add), "chunk.size", inc.cfg.ChunkSize)
	if wasRunning {
		return nil // read after the tables before them
	}
	inc.state.ID = sg.ID
	inc.touch()
	return inc.readChunk(ctx)
}

// readChunk reads the next chunk between a pair of watermarks, moving on
// to the next table while one has no rows left; with no table left, the
// snapshot is done.
func (inc *incremental) readChunk(ctx context.Context) error {
	inc.applyStops()
	if !inc.running() {
		inc.chunkID = ""
		return nil
	}
	inc.chunkID, inc.opened, inc.window, inc.index = connect.NewSignalID(), time.Now().UTC(), nil, map[string]int{}
	if err := inc.watermark(ctx, false); err != nil {
		return err
	}
	for inc.running() {
		read, err := inc.readTable(ctx)
		if err != nil && (ctx.Err() != nil || inc.conn.IsClosed()) {
			return err // the session is gone: a restart reads on from the offsets
		}
		if err != nil {
			// The table, its additional condition or a column's type is
			// wrong (the server refused the query, or a value cannot be
			// written): skipped, as Debezium skips it.
			inc.log.Error("incremental snapshot: a table cannot be read; it is skipped", "table", inc.state.Tables[0].ID(), "err", err)
			inc.nextTable(false)
			continue
		}
		if read {
			break
		}
		inc.nextTable(true)
	}
	return inc.watermark(ctx, true)
}

// errTableGone is a table of the snapshot that no longer exists.
var errTableGone = errors.New("the table does not exist")

// readTable reads the current table's next chunk into the window and
// reports whether it had rows.
func (inc *incremental) readTable(ctx context.Context) (bool, error) {
	t, err := inc.current(ctx)
	if err != nil {
		return false, err
	}
	it := inc.state.Tables[0]
	if inc.state.MaxKey == nil {
		max, _, err := readInSnapshot(ctx, inc.conn, func() ([]windowRow, error) {
			return inc.query(ctx, t, it.Filter, nil, nil, true)
		})
		if err != nil || len(max) == 0 {
			return false, err // none: the table is empty
		}
		inc.state.MaxKey = max[0].key
		inc.touch()
	}
	rows, snap, err := readInSnapshot(ctx, inc.conn, func() ([]windowRow, error) {
		return inc.query(ctx, t, it.Filter, inc.chunkEnd, inc.state.MaxKey, false)
	})
	if err != nil || len(rows) == 0 {
		return false, err
	}
	inc.window, inc.snap = rows, snap
	for i, r := range rows {
		inc.index[keyString(r.key)] = i
	}
	inc.chunkEnd = rows[len(rows)-1].key
	return true, nil
}

// current is the current table as its records are shaped: the stream's,
// once it described the table, else the catalog's.
func (inc *incremental) current(ctx context.Context) (*Table, error) {
	if inc.table != nil {
		return inc.table, nil
	}
	it := inc.state.Tables[0]
	rows, err := query(ctx, inc.conn, `SELECT c.oid, c.relreplident, c.relkind, greatest(c.reltuples, 0)::bigint FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`, it.Schema, it.Name)
	if err != nil {
		return nil, fmt.Errorf("look up table %s: %w", it.ID(), err)
	}
	if len(rows) == 0 {
		return nil, errTableGone
	}
	oid, _ := strconv.ParseUint(str(rows[0][0]), 10, 32)
	t := inc.known(uint32(oid))
	if t == nil {
		if t, err = inc.cat.table(ctx, inc.cfg, uint32(oid), it.Schema, it.Name); err != nil {
			return nil, err
		}
		t.Identity, t.Partitioned = str(rows[0][1])[0], str(rows[0][2]) == "p"
		if err := inc.rec.register(t); err != nil {
			return nil, err
		}
	}
	if len(t.Key) == 0 {
		return nil, fmt.Errorf("table %s has no primary key: %w", it.ID(), errTableGone)
	}
	estimate, _ := strconv.ParseInt(str(rows[0][3]), 10, 64)
	inc.setProgress(it.ID(), func(p *incProgress) { p.estimate = estimate })
	inc.table = t
	return t, nil
}

// query reads rows of t by key: the chunk after from up to to, or (max)
// the row of the largest key. filter is the table's additional condition.
func (inc *incremental) query(ctx context.Context, t *Table, filter string, from, to []string, max bool) ([]windowRow, error) {
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = quoteIdent(c.Name)
	}
	key := make([]string, len(t.Key))
	for i, k := range t.Key {
		key[i] = cols[k]
	}
	var where []string
	var args []string
	params := func(vals []string) string {
		ps := make([]string, len(vals))
		for i, v := range vals {
			args = append(args, v)
			ps[i] = "$" + strconv.Itoa(len(args))
		}
		return "(" + strings.Join(ps, ", ") + ")"
	}
	rowKey := "(" + strings.Join(key, ", ") + ")"
	if from != nil {
		where = append(where, rowKey+" > "+params(from))
	}
	if to != nil {
		where = append(where, rowKey+" <= "+params(to))
	}
	if filter != "" {
		// The newline ends a trailing "--" comment in the filter, which
		// would otherwise swallow the ORDER BY and LIMIT below. The filter
		// is SQL as Debezium runs it, with the connector's database user's
		// rights (docs/cdc-postgres.md); the reads run READ ONLY.
		where = append(where, "("+filter+"\n)")
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM " + quoteIdent(t.Schema) + "." + quoteIdent(t.Name)
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	order, limit := strings.Join(key, ", "), inc.cfg.ChunkSize
	if max {
		order, limit = strings.Join(key, " DESC, ")+" DESC", 1
	}
	q += " ORDER BY " + order + " LIMIT " + strconv.Itoa(limit)
	res, err := query(ctx, inc.conn, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read a chunk of %s: %w", t.ID(), err)
	}
	out := make([]windowRow, len(res))
	for i, r := range res {
		row := windowRow{key: make([]string, len(t.Key))}
		for j, k := range t.Key {
			row.key[j] = str(r[k])
		}
		for _, v := range r {
			row.bytes += len(str(v))
		}
		if !max {
			if row.values, err = inc.rec.rowValues(t, r); err != nil {
				return nil, err
			}
		}
		out[i] = row
	}
	return out, nil
}

// watermark writes the current chunk's low or high (closing) watermark,
// as Debezium writes them.
func (inc *incremental) watermark(ctx context.Context, closing bool) error {
	kind, closed := signals.WindowOpen, time.Time{}
	if closing {
		kind, closed = signals.WindowClose, time.Now()
	}
	id, data := signals.Watermark(inc.chunkID, inc.opened, closed)
	return insertSignal(ctx, inc.conn, *inc.cfg.Signals, signal{ID: id, Type: kind, Data: data})
}

// emitWindow emits the rows of the window the stream did not change, as
// read events at p, each offset holding its key as the last emitted.
func (inc *incremental) emitWindow(p position) ([]connect.SourceRecord, error) {
	if len(inc.window) == 0 {
		return nil, nil
	}
	var out []connect.SourceRecord
	p.Snapshot, p.LastSnapshot, p.SnapshotDone, p.Time = snapshotIncremental, false, true, time.Now().UTC()
	id := inc.state.Tables[0].ID()
	for _, r := range inc.window {
		if r.dropped {
			continue
		}
		inc.state.LastKey = r.key
		inc.state.Rows++
		inc.touch()
		inc.emitted += r.bytes
		recs, err := inc.rec.read(inc.table, r.values, string(envelope.SnapshotIncremental), p)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	rows := inc.state.Rows
	inc.setProgress(id, func(pr *incProgress) { pr.rows = rows })
	inc.window, inc.index = nil, map[string]int{}
	return out, nil
}

// takeBytes is the size of the rows emitted since it was last called.
func (inc *incremental) takeBytes() int {
	n := inc.emitted
	inc.emitted = 0
	return n
}

// changed takes the keys a streamed change of t in transaction xid
// carries out of the window: inside the window, as Debezium does, and
// before it too when the chunk's snapshot does not include the change
// (visibility.go) — either way the stream's event is the newer.
func (inc *incremental) changed(t *Table, xid uint32, keys ...[]string) {
	if len(inc.window) == 0 || inc.table == nil || t.Schema != inc.table.Schema || t.Name != inc.table.Name {
		return
	}
	if !inc.open && inc.snap.includes(xid) {
		return // the chunk read the row with this change in it
	}
	for _, k := range keys {
		if k == nil {
			continue
		}
		if i, ok := inc.index[keyString(k)]; ok {
			inc.window[i].dropped = true
		}
	}
}

// nextTable moves on from the current table: it was read to its end
// (done), or skipped.
func (inc *incremental) nextTable(done bool) {
	id := inc.state.Tables[0].ID()
	if done {
		inc.log.Info("incremental snapshot: table done", "table", id, "rows", inc.state.Rows)
	}
	inc.setProgress(id, func(p *incProgress) { p.done = true })
	inc.state.Tables = inc.state.Tables[1:]
	inc.state.LastKey, inc.state.MaxKey, inc.state.Rows, inc.chunkEnd, inc.table = nil, nil, 0, nil, nil
	if !inc.running() {
		inc.log.Info("incremental snapshot done", "signal", inc.state.ID)
		inc.state.ID = ""
	}
	inc.touch()
}

// applyStops applies the stop-snapshot requests: the tables they name
// leave the snapshot (all of them for a request naming none).
func (inc *incremental) applyStops() {
	for _, names := range inc.stops {
		ids := make([]string, len(inc.state.Tables))
		for i, t := range inc.state.Tables {
			ids[i] = t.ID()
		}
		stop := ids
		if len(names) > 0 {
			stop, _, _ = signals.Match(names, ids)
		}
		for len(stop) > 0 && inc.running() && slices.Contains(stop, inc.state.Tables[0].ID()) {
			inc.log.Info("incremental snapshot: table stopped", "table", inc.state.Tables[0].ID())
			inc.nextTable(false)
		}
		inc.state.Tables = slices.DeleteFunc(inc.state.Tables, func(t incTable) bool { return slices.Contains(stop, t.ID()) })
		if len(stop) > 0 && !inc.running() {
			inc.state.ID = ""
		}
		inc.touch()
	}
	inc.stops = nil
}

// keyString is a key as one comparable string.
func keyString(k []string) string {
	b, _ := json.Marshal(k)
	return string(b)
}

// tupleKey is the key of t a tuple carries (its columns' text), nil when
// it carries none.
func tupleKey(rel *relation, tuple *pglogrepl.TupleData) []string {
	if tuple == nil || len(rel.table.Key) == 0 {
		return nil
	}
	key := make([]string, len(rel.table.Key))
	for n, k := range rel.table.Key {
		i := slices.Index(rel.cols, k)
		if i < 0 || i >= len(tuple.Columns) || tuple.Columns[i].DataType != pglogrepl.TupleDataTypeText {
			return nil
		}
		key[n] = string(tuple.Columns[i].Data)
	}
	return key
}

func (inc *incremental) setProgress(table string, f func(*incProgress)) {
	inc.mu.Lock()
	defer inc.mu.Unlock()
	p := inc.progress[table]
	if p == nil {
		p = &incProgress{}
		inc.progress[table] = p
		inc.order = append(inc.order, table)
	}
	f(p)
}

// gauges are the incremental snapshots' progress, table by table.
func (inc *incremental) gauges() []connect.Gauge {
	inc.mu.Lock()
	defer inc.mu.Unlock()
	out := []connect.Gauge{{Name: "postgres_signals_refused", Help: "Signals the connector could not act on (the task's log says why).", Value: float64(inc.refused)}}
	for _, table := range inc.order {
		p, labels := inc.progress[table], map[string]string{"table": table}
		out = append(out,
			connect.Gauge{Name: "postgres_incremental_snapshot_rows", Help: "Rows an incremental snapshot emitted, by table.", Labels: labels, Value: float64(p.rows)},
			connect.Gauge{Name: "postgres_incremental_snapshot_rows_estimate", Help: "The table's row count as the server estimates it (pg_class.reltuples) when its incremental snapshot began.", Labels: labels, Value: float64(p.estimate)},
			connect.Gauge{Name: "postgres_incremental_snapshot_done", Help: "1 once an incremental snapshot read the table to its end (or stopped or skipped it).", Labels: labels, Value: b2f(p.done)})
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// signalOf reads a signal from a row of the signal table; ok is false
// when the row lacks a column.
func signalOf(rel *relation, tuple *pglogrepl.TupleData) (sg signal, ok bool) {
	if tuple == nil {
		return sg, false
	}
	vals := map[string]string{}
	for i, c := range rel.msg.Columns {
		if i < len(tuple.Columns) && tuple.Columns[i].DataType == pglogrepl.TupleDataTypeText {
			vals[c.Name] = string(tuple.Columns[i].Data)
		}
	}
	sg.ID, sg.Type, sg.Data = vals["id"], vals["type"], vals["data"]
	return sg, sg.ID != "" && sg.Type != ""
}
