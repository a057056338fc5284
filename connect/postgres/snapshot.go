package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/postgres/envelope"
)

// chunkPages is how many heap pages one snapshot chunk reads: 8 KiB pages,
// so about 4 MiB of table a chunk. The connector holds at most a few chunks'
// rows at once (threads + 1), which bounds a snapshot's memory whatever the
// tables' sizes.
const chunkPages = 512

// snapshotter reads the captured tables as of one snapshot of the database:
// the one the slot exported when it was created, so that streaming from
// the slot starts exactly where the snapshot ends. Each table is split in
// ranges of heap pages (CTID ranges, which any table has, with or without
// a key), read side by side on Config.SnapshotThreads sessions that all
// import the snapshot, and emitted table by table, range by range.
type snapshotter struct {
	cfg      Config
	rec      *records
	log      *slog.Logger
	name     string // the exported snapshot
	lsn      pglogrepl.LSN
	txID     int64
	hasTx    bool
	tables   []*Table
	progress *Progress
}

// chunk is one range of a table's pages; last is open-ended.
type chunk struct {
	table    *Table
	from, to int64
	last     bool
	rows     chan rowBatch // the rows' values, in batches; closed at the end
	err      atomic.Pointer[error]
}

// run emits the snapshot's records on out and returns once the last is
// handed over. ctx ends it early.
func (sn *snapshotter) run(ctx context.Context, out chan<- item) error {
	threads := max(sn.cfg.SnapshotThreads, 1)
	conns := make([]*pgconn.PgConn, 0, threads)
	defer func() {
		for _, c := range conns {
			closeConn(c)
		}
	}()
	for range threads {
		c, err := sn.open(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	// The snapshot's transaction id, as Debezium gives it in the snapshot
	// records' source block and offset.
	xid, _, err := queryOne(ctx, conns[0], "SELECT txid_current()")
	if err != nil {
		return fmt.Errorf("read the snapshot's transaction id: %w", err)
	}
	if sn.txID, err = strconv.ParseInt(xid, 10, 64); err != nil {
		return fmt.Errorf("the snapshot's transaction id %q: %w", xid, err)
	}
	sn.hasTx = true
	var chunks []*chunk
	for _, t := range sn.tables {
		cs, err := sn.split(ctx, conns[0], t)
		if err != nil {
			return err
		}
		chunks = append(chunks, cs...)
		sn.progress.addTable(t.ID(), len(cs))
	}
	// Workers read chunks in order, each at most one ahead of the emitter
	// per worker: the channel of pending chunks is as deep as the threads.
	work := make(chan *chunk, threads)
	var wg sync.WaitGroup
	wctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); wg.Wait() }()
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range work {
				sn.read(wctx, c, ch)
			}
		}()
	}
	go func() {
		defer close(work)
		for _, ch := range chunks {
			select {
			case work <- ch:
			case <-wctx.Done():
				return
			}
		}
	}()
	return sn.emit(ctx, chunks, out)
}

// open opens a session that reads as of the exported snapshot.
func (sn *snapshotter) open(ctx context.Context) (*pgconn.PgConn, error) {
	c, err := dial(ctx, sn.cfg, false, sn.cfg.InitialStatements)
	if err != nil {
		return nil, err
	}
	stmt := "BEGIN ISOLATION LEVEL REPEATABLE READ; SET TRANSACTION SNAPSHOT " + quoteLiteral(sn.name)
	if _, err := c.Exec(ctx, stmt).ReadAll(); err != nil {
		closeConn(c)
		return nil, fmt.Errorf("take up snapshot %s: %w", sn.name, err)
	}
	return c, nil
}

// split cuts a table in ranges of chunkPages pages, from its size now (the
// snapshot's rows are all in pages that exist now: a table only grows until
// a VACUUM FULL, which the snapshot's transaction holds off).
func (sn *snapshotter) split(ctx context.Context, c *pgconn.PgConn, t *Table) ([]*chunk, error) {
	v, _, err := queryOne(ctx, c, "SELECT pg_relation_size($1::oid) / current_setting('block_size')::bigint", strconv.FormatUint(uint64(t.OID), 10))
	if err != nil {
		return nil, fmt.Errorf("size of %s: %w", t.ID(), err)
	}
	pages, _ := strconv.ParseInt(v, 10, 64)
	if t.Partitioned {
		pages = 0 // a partitioned table's root has no pages of its own: read it whole
	}
	var out []*chunk
	for from := int64(0); ; from += chunkPages {
		last := from+chunkPages >= pages
		out = append(out, &chunk{table: t, from: from, to: from + chunkPages, last: last, rows: make(chan rowBatch, 4)})
		if last {
			return out, nil
		}
	}
}

// read reads one chunk's rows into ch.rows, in batches, converted: the
// conversion of the values, the costliest part of a row, runs on the
// reading sessions' goroutines side by side.
func (sn *snapshotter) read(ctx context.Context, c *pgconn.PgConn, ch *chunk) {
	defer close(ch.rows)
	cols := make([]string, len(ch.table.Columns))
	for i, col := range ch.table.Columns {
		cols[i] = quoteIdent(col.Name)
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM " + quoteIdent(ch.table.Schema) + "." + quoteIdent(ch.table.Name)
	if !ch.table.Partitioned {
		q += fmt.Sprintf(" WHERE ctid >= '(%d,0)'::tid", ch.from)
		if !ch.last {
			q += fmt.Sprintf(" AND ctid < '(%d,0)'::tid", ch.to)
		}
	}
	fail := func(err error) { ch.err.Store(&err) }
	// Through a cursor, snapshot.fetch.size rows a round trip, as
	// Debezium's JDBC fetch size has it.
	if _, err := c.Exec(ctx, "DECLARE sluice_chunk NO SCROLL CURSOR FOR "+q).ReadAll(); err != nil {
		fail(fmt.Errorf("read %s: %w", ch.table.ID(), err))
		return
	}
	fetch := fmt.Sprintf("FETCH FORWARD %d FROM sluice_chunk", max(sn.cfg.FetchSize, 1))
	batch := rowBatch{vals: make([][]any, 0, 256), sizes: make([]int, 0, 256)}
	text := make([]*string, len(cols))
	for more := true; more; {
		rr := c.ExecParams(ctx, fetch, nil, nil, nil, nil)
		n := 0
		for rr.NextRow() {
			n++
			size := 0
			for i, v := range rr.Values() {
				text[i] = nil
				if v != nil {
					s := string(v)
					text[i] = &s
					size += len(v)
				}
			}
			vals, err := sn.rec.rowValues(ch.table, text)
			if err != nil {
				_, _ = rr.Close()
				fail(err)
				return
			}
			batch.vals, batch.sizes = append(batch.vals, vals), append(batch.sizes, size)
			if len(batch.vals) == cap(batch.vals) {
				select {
				case ch.rows <- batch:
				case <-ctx.Done():
					_, _ = rr.Close()
					return
				}
				batch = rowBatch{vals: make([][]any, 0, 256), sizes: make([]int, 0, 256)}
			}
		}
		if _, err := rr.Close(); err != nil {
			fail(fmt.Errorf("read %s: %w", ch.table.ID(), err))
			return
		}
		more = n == max(sn.cfg.FetchSize, 1)
	}
	if _, err := c.Exec(ctx, "CLOSE sluice_chunk").ReadAll(); err != nil {
		fail(fmt.Errorf("read %s: %w", ch.table.ID(), err))
		return
	}
	if len(batch.vals) > 0 {
		select {
		case ch.rows <- batch:
		case <-ctx.Done():
		}
	}
}

// emit converts the chunks' rows to records, in order, marking the first
// and last records of the snapshot and of each table as Debezium does.
func (sn *snapshotter) emit(ctx context.Context, chunks []*chunk, out chan<- item) error {
	var pending *pendingRow // held back one row: only the next one says whether it was a last
	first := true
	send := func(p *pendingRow, marker string) error {
		recs, err := sn.rec.read(p.table, p.values, marker, sn.pos(marker == string(envelope.SnapshotLast)))
		if err != nil {
			return err
		}
		sn.progress.row(p.table.ID())
		select {
		case out <- item{recs: recs, bytes: p.bytes}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, ch := range chunks {
		for batch := range ch.rows {
			for i, vals := range batch.vals {
				next := &pendingRow{table: ch.table, values: vals, bytes: batch.sizes[i], firstOfTable: pending == nil || pending.table != ch.table}
				if pending != nil {
					if err := send(pending, marker(pending, first, false, pending.table != ch.table)); err != nil {
						return err
					}
					first = false
				}
				pending = next
			}
		}
		if errp := ch.err.Load(); errp != nil {
			return *errp
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sn.progress.chunkDone(ch.table.ID())
	}
	if pending != nil {
		if err := send(pending, marker(pending, first, true, true)); err != nil {
			return err
		}
		return nil
	}
	// No row at all: the completion still needs an offset, or a restart
	// would take the snapshot again.
	p := sn.pos(true)
	select {
	case out <- item{recs: []connect.SourceRecord{{SourcePartition: sn.rec.partition(), SourceOffset: p.offset(), Dropped: true}}}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pendingRow is a snapshot row not emitted yet; bytes is the size of its
// values as read.
type pendingRow struct {
	table        *Table
	values       []any
	bytes        int
	firstOfTable bool
}

// rowBatch is a batch of a chunk's rows: their values, and each row's size
// as read.
type rowBatch struct {
	vals  [][]any
	sizes []int
}

// marker is the source.snapshot of p, as Debezium resolves it.
func marker(p *pendingRow, firstOfAll, lastOfAll, lastOfTable bool) string {
	return string(envelope.SnapshotMarker(firstOfAll, lastOfAll, p.firstOfTable, lastOfTable))
}

// pos is the position of a snapshot record.
func (sn *snapshotter) pos(last bool) position {
	return position{LSN: sn.lsn, TxID: sn.txID, HasTxID: sn.hasTx, Time: time.Now().UTC(),
		Snapshot: "INITIAL", LastSnapshot: last}
}
