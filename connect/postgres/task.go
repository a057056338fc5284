package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-io/sluice/connect"
)

// Task is the connector's one task: it takes the snapshot if one is due,
// then streams the slot.
type Task struct {
	cfg     Config
	log     *slog.Logger
	offsets connect.OffsetReader
	rec     *records

	conn, repl *pgconn.PgConn
	cat        *catalog
	tables     []*Table // the captured tables when the task started
	// viaRoot says the publication publishes partitions' changes as their
	// root's.
	viaRoot  bool
	stream   *streamer
	progress *Progress
	// inc runs the stream's incremental snapshots (nil: no signal table,
	// or not streaming yet); guarded by mu.
	inc *incremental
	// slot is the slot's state as last read, for the gauges.
	slot atomic.Pointer[slotState]

	out chan item
	// carry are the items a poll's re-reads cut off, the next poll's
	// first; reread reads unchanged TOASTed values back (nil: none are).
	carry  batch
	reread *rereader
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	err    error // why the background work ended
	ended  bool  // snapshot.mode=initial_only: the snapshot is all there is
}

// Start implements connect.SourceTask: it decides what the task does from
// the stored offset, the slot and snapshot.mode, and starts doing it.
func (t *Task) Start(ctx context.Context, tc connect.SourceTaskContext, props map[string]string) error {
	cfg, err := ParseConfig(props)
	if err != nil {
		return err
	}
	t.cfg, t.offsets = cfg, tc.Offsets
	t.log = slog.Default().With("connector", props["name"])
	t.progress = newProgress()
	var stored map[string]any
	if tc.Offsets != nil {
		if stored, err = tc.Offsets.Offset(ctx, map[string]any{PartitionKey: cfg.Prefix}); err != nil {
			return fmt.Errorf("read the stored offset: %w", err)
		}
	}
	pos, err := parsePosition(stored)
	if err != nil {
		return err
	}
	if err := refuseIncremental(stored); err != nil {
		return err
	}
	if err := t.open(ctx); err != nil {
		t.closeConns()
		return err
	}
	plan, err := t.plan(ctx, stored != nil, pos)
	if err != nil {
		t.closeConns()
		return err
	}
	if plan.snapshot == nil {
		plan.stored = stored
		if plan.incremental, err = parseIncState(stored); err != nil {
			t.closeConns()
			return err
		}
		if plan.incremental != nil && t.cfg.Signals == nil {
			t.closeConns()
			return fmt.Errorf("the connector's offset holds an incremental snapshot in progress (of %s), but signal.data.collection is not set: "+
				"set it back to the signal table, or stop the snapshot by resetting the offset key %s", plan.incremental.Tables[0].ID(), keyIncremental)
		}
	}
	t.out = make(chan item, min(queueItems, cfg.MaxQueue))
	if len(cfg.ToastReread) > 0 {
		t.reread = newRereader(cfg, t.log)
	}
	bctx, cancel := context.WithCancel(context.Background())
	t.cancel, t.done = cancel, make(chan struct{})
	go t.run(bctx, plan)
	return nil
}

// open opens the regular and the replication sessions and checks the server.
func (t *Task) open(ctx context.Context) error {
	var err error
	if t.conn, err = dial(ctx, t.cfg, false, t.cfg.InitialStatements); err != nil {
		return err
	}
	if err := checkServer(ctx, t.conn); err != nil {
		return err
	}
	cat := newCatalog(t.conn)
	viaRoot, err := ensurePublication(ctx, t.conn, t.cfg, func(viaRoot bool) ([]*Table, error) { return cat.tables(ctx, t.cfg, viaRoot) })
	if err != nil {
		return err
	}
	tables, err := cat.tables(ctx, t.cfg, viaRoot)
	if err != nil {
		return err
	}
	if t.rec, err = newRecords(t.cfg, t.log, time.Now); err != nil {
		return err
	}
	for _, tb := range tables {
		if err := t.rec.register(tb); err != nil {
			return err
		}
	}
	if t.repl, err = dial(ctx, t.cfg, true, ""); err != nil {
		return err
	}
	if t.cfg.Signals != nil {
		if err := checkSignalTable(ctx, t.conn, t.cfg); err != nil {
			return err
		}
	}
	t.cat, t.tables, t.viaRoot = cat, tables, viaRoot
	return nil
}

// checkServer refuses a server the connector cannot stream from.
func checkServer(ctx context.Context, c *pgconn.PgConn) error {
	rows, err := query(ctx, c, "SELECT current_setting('server_version_num')::int >= 140000, current_setting('wal_level')")
	if err != nil {
		return fmt.Errorf("read the server's settings: %w", err)
	}
	if str(rows[0][0]) != "t" {
		return errors.New("PostgreSQL 14 or later is needed (logical decoding messages in pgoutput)")
	}
	if lvl := str(rows[0][1]); lvl != "logical" {
		return fmt.Errorf("wal_level is %s: logical decoding needs wal_level=logical (set it in postgresql.conf and restart the server)", lvl)
	}
	return nil
}

// plan is what the task does: a snapshot first or not, and where the stream
// starts.
type plan struct {
	snapshot *snapshotter
	// holder keeps the transaction whose snapshot the snapshotter takes up,
	// when the slot existed already; nil when the slot exported it.
	holder *pgconn.PgConn
	start  position
	// stored is the stored offset the stream resumes from (nil after a
	// snapshot): it holds the transaction in progress, if any.
	stored map[string]any
	// ended says there is nothing to do: snapshot.mode=initial_only with
	// the snapshot taken.
	ended bool
	// incremental is the incremental snapshot the stored offset holds in
	// progress (nil: none).
	incremental *incState
}

// plan decides, from snapshot.mode, the stored offset and the slot, whether
// to take a snapshot, and prepares the slot.
func (t *Task) plan(ctx context.Context, hasOffset bool, pos position) (plan, error) {
	slot, err := readSlot(ctx, t.conn, t.cfg.Slot)
	if err != nil {
		return plan{}, err
	}
	if slot.Exists {
		if err := checkSlot(t.cfg, slot); err != nil {
			if t.cfg.SnapshotMode != SnapshotWhenNeeded || slot.WALStatus != "lost" {
				return plan{}, err
			}
		}
	}
	unfinished := pos.snapshotUnfinished()
	if t.cfg.SnapshotMode == SnapshotInitialOnly {
		// A snapshot and nothing else: no slot, which would hold WAL that
		// nothing reads.
		if hasOffset && !unfinished {
			return plan{ended: true}, nil
		}
		return t.ownSnapshot(ctx, slotState{})
	}
	var snap bool
	switch t.cfg.SnapshotMode {
	case SnapshotAlways:
		snap = true
	case SnapshotNoData:
		snap = false
	case SnapshotWhenNeeded:
		snap = !hasOffset || unfinished || !slot.Exists || slot.WALStatus == "lost"
	default: // initial, initial_only
		snap = !hasOffset || unfinished
	}
	if hasOffset && !unfinished && !slot.Exists && !snap {
		return plan{}, fmt.Errorf("replication slot %s does not exist, but the connector has a stored position (%s): "+
			"the slot was dropped, and changes since that position cannot be read. Reset the connector's offsets to take a new snapshot, "+
			"or set snapshot.mode=when_needed to have it done on its own", t.cfg.Slot, pglogrepl.LSN(max(pos.Commit, pos.LSN)))
	}
	if snap && slot.Exists && unfinished && slot.Confirmed <= pos.LSN {
		// A snapshot cut short: nothing was streamed from the slot yet
		// (it is still at the snapshot's point). Creating it anew exports
		// a new snapshot with the stream starting exactly where it ends,
		// so the snapshot taken again and the stream neither overlap nor
		// leave a gap.
		t.log.Info("the last snapshot did not finish; taking it again from a new slot", "slot", t.cfg.Slot)
		if err := t.dropSlot(ctx); err != nil {
			return plan{}, err
		}
		slot = slotState{}
	}
	if slot.Exists && slot.WALStatus == "lost" {
		if err := t.dropSlot(ctx); err != nil {
			return plan{}, err
		}
		slot = slotState{}
	}
	if hasOffset && !snap && slot.Exists {
		to, err := checkPosition(t.cfg, pos, slot)
		if err != nil {
			return plan{}, err
		}
		if to != 0 {
			if err := advanceSlot(ctx, t.conn, t.cfg.Slot, to); err != nil {
				return plan{}, err
			}
		}
	}
	p := plan{start: pos}
	if !snap {
		if !slot.Exists {
			if _, err := createSlot(ctx, t.repl, t.cfg.Slot, false); err != nil {
				return plan{}, err
			}
		}
		if !hasOffset || unfinished {
			p.start = position{}
		}
		return p, nil
	}
	sn := &snapshotter{cfg: t.cfg, rec: t.rec, log: t.log, tables: t.tables, progress: t.progress}
	if !slot.Exists {
		res, err := createSlot(ctx, t.repl, t.cfg.Slot, true)
		if err != nil {
			return plan{}, err
		}
		sn.name = res.SnapshotName
		sn.lsn, err = pglogrepl.ParseLSN(res.ConsistentPoint)
		if err != nil {
			return plan{}, fmt.Errorf("slot %s's consistent point %q: %w", t.cfg.Slot, res.ConsistentPoint, err)
		}
		p.snapshot = sn
		p.start = position{LSN: sn.lsn}
		return p, nil
	}
	return t.ownSnapshot(ctx, slot)
}

// ownSnapshot plans a snapshot in a transaction of its own, for when the
// slot exists already (or there is none, with initial_only). The stream
// then starts where the slot was confirmed before the snapshot began: the
// changes committed since may come twice — once in the snapshot, once
// streamed — but none is missed, even one whose commit was written before
// the snapshot and made visible after it.
func (t *Task) ownSnapshot(ctx context.Context, slot slotState) (plan, error) {
	sn := &snapshotter{cfg: t.cfg, rec: t.rec, log: t.log, tables: t.tables, progress: t.progress}
	h, err := dial(ctx, t.cfg, false, t.cfg.InitialStatements)
	if err != nil {
		return plan{}, err
	}
	var r [][]*string
	_, err = query(ctx, h, "BEGIN ISOLATION LEVEL REPEATABLE READ")
	if err == nil {
		r, err = query(ctx, h, "SELECT pg_export_snapshot(), pg_current_wal_lsn()::text")
	}
	if err != nil {
		closeConn(h)
		return plan{}, fmt.Errorf("take a snapshot: %w", err)
	}
	sn.name = str(r[0][0])
	if sn.lsn = slot.Confirmed; sn.lsn == 0 {
		sn.lsn, _ = pglogrepl.ParseLSN(str(r[0][1]))
	}
	return plan{snapshot: sn, holder: h, start: position{LSN: sn.lsn}}, nil
}

// dropSlot drops the connector's slot.
func (t *Task) dropSlot(ctx context.Context) error {
	if _, err := query(ctx, t.conn, "SELECT pg_drop_replication_slot($1)", t.cfg.Slot); err != nil {
		return fmt.Errorf("drop replication slot %s: %w", t.cfg.Slot, err)
	}
	return nil
}

// run does the plan: the snapshot, then the stream, until ctx ends.
func (t *Task) run(ctx context.Context, p plan) {
	defer close(t.done)
	err := t.work(ctx, p)
	t.mu.Lock()
	t.err = err
	t.mu.Unlock()
}

func (t *Task) work(ctx context.Context, p plan) error {
	if p.snapshot != nil {
		t.log.Info("taking a snapshot", "tables", len(p.snapshot.tables), "lsn", p.snapshot.lsn.String(), "threads", t.cfg.SnapshotThreads)
		err := p.snapshot.run(ctx, t.out)
		if p.holder != nil {
			closeConn(p.holder)
		}
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		t.log.Info("snapshot done", "rows", t.progress.Rows())
		if t.cfg.SnapshotMode == SnapshotInitialOnly {
			t.mu.Lock()
			t.ended = true
			t.mu.Unlock()
			return nil
		}
	}
	if p.ended {
		t.mu.Lock()
		t.ended = true
		t.mu.Unlock()
		return nil
	}
	if err := t.rec.restore(p.stored); err != nil {
		return err
	}
	slot, err := readSlot(ctx, t.conn, t.cfg.Slot)
	if err != nil {
		return err
	}
	s := newStreamer(t.cfg, t.repl, t.cat, t.rec, t.log, p.start, t.out)
	// What the slot confirmed is durable already; what the offsets hold
	// beyond it, Commit adds.
	s.flush.Store(uint64(slot.Confirmed))
	if t.cfg.Signals != nil {
		s.inc = newIncremental(t.cfg, t.log, t.cat, t.rec, t.viaRoot, p.incremental)
		s.inc.known = func(oid uint32) *Table {
			if r := s.relations[oid]; r != nil {
				return r.table
			}
			return nil
		}
		t.rec.incremental = s.inc.store
	}
	t.mu.Lock()
	t.stream, t.inc = s, s.inc
	t.mu.Unlock()
	hctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); t.heartbeats(hctx) }()
	defer func() { cancel(); wg.Wait() }()
	return s.run(ctx)
}

// queueItems is how many messages' records the stream queues for Poll at
// most (max.queue.size may make it fewer).
const queueItems = 64

// batchBytes bounds a poll's batch by the size of the values it carries, as
// max.batch.size bounds it by records: a batch of wide rows (a transaction
// of large values) is cut short, so the agent holds a few MiB of them rather
// than max.batch.size times a row.
const batchBytes = 8 << 20

// item is what the background work hands Poll: the records of one message
// or snapshot row, about how many bytes of values they carry, and the
// unchanged TOASTed values to read back into them, if any.
type item struct {
	recs  []connect.SourceRecord
	bytes int
	fix   *toastFix
}

// batch is a poll's items, with their record and byte counts.
type batch struct {
	items          []item
	records, bytes int
}

func (b *batch) add(it item) {
	b.items = append(b.items, it)
	b.records += len(it.recs)
	b.bytes += it.bytes
}

// Poll implements connect.SourceTask.
func (t *Task) Poll(ctx context.Context) ([]connect.SourceRecord, error) {
	b := t.carry
	t.carry = batch{}
	if len(b.items) == 0 {
		timer := time.NewTimer(500 * time.Millisecond)
		defer timer.Stop()
		select {
		case it := <-t.out:
			// Sized once for what is queued, as the records are below.
			b.items = make([]item, 0, min(t.cfg.MaxBatch, 1+2*len(t.out)))
			b.add(it)
		case <-t.done:
			return t.drain(ctx)
		case <-timer.C:
			return nil, nil
		case <-ctx.Done():
			return nil, nil
		}
	}
	for b.records < t.cfg.MaxBatch && b.bytes < batchBytes {
		select {
		case it := <-t.out:
			b.add(it)
		default:
			return t.finish(ctx, b)
		}
	}
	return t.finish(ctx, b)
}

// finish reads back the batch's unchanged TOASTed values, which may cut it
// short (the rest is the next poll's), and returns its records.
func (t *Task) finish(ctx context.Context, b batch) ([]connect.SourceRecord, error) {
	keep := len(b.items)
	if t.reread != nil {
		var err error
		if keep, err = t.reread.fill(ctx, b.items, batchBytes); err != nil {
			return nil, err
		}
		for _, it := range b.items[keep:] {
			t.carry.add(it)
		}
	}
	// Sized once: growing it append by append was a good part of the
	// garbage a busy task makes.
	out := make([]connect.SourceRecord, 0, b.records)
	for _, it := range b.items[:keep] {
		out = append(out, it.recs...)
	}
	return out, nil
}

// drain returns what is left once the background work ended, then why it
// ended.
func (t *Task) drain(ctx context.Context) ([]connect.SourceRecord, error) {
	var b batch
	for {
		select {
		case it := <-t.out:
			b.add(it)
			continue
		default:
		}
		break
	}
	if len(b.items) > 0 {
		return t.finish(ctx, b)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return nil, connect.ErrDone
	}
	if t.err != nil && !errors.Is(t.err, context.Canceled) {
		return nil, t.err
	}
	return nil, connect.ErrDone
}

// Commit implements connect.OffsetCommitter: the offsets are durable up to
// what the offset store holds now, so the slot may let go of the WAL before
// it — the commit position, as Debezium flushes it.
func (t *Task) Commit(ctx context.Context) error {
	t.mu.Lock()
	s := t.stream
	t.mu.Unlock()
	if t.offsets == nil || s == nil {
		return nil
	}
	o, err := t.offsets.Offset(ctx, map[string]any{PartitionKey: t.cfg.Prefix})
	if err != nil || o == nil {
		return err
	}
	p, err := parsePosition(o)
	if err != nil {
		return err
	}
	at := p.Commit
	if at == 0 {
		at = p.Proc
	}
	if at == 0 && p.streaming() {
		at = p.LSN
	}
	if uint64(at) > s.flush.Load() {
		s.flush.Store(uint64(at))
	}
	return nil
}

// heartbeats emits the connector's own logical decoding message every
// sluice.heartbeat.wal.interval.ms, runs heartbeat.action.query every
// heartbeat.interval.ms — each reaches the stream as a position between
// transactions, which moves the slot while captured tables are idle — and
// reads the slot's state for the task's gauges, at the shortest of those
// intervals and at least every 10 seconds.
func (t *Task) heartbeats(ctx context.Context) {
	every := 10 * time.Second
	for _, d := range []time.Duration{t.cfg.WALHeartbeat, t.cfg.Heartbeat} {
		if d > 0 && d < every {
			every = d
		}
	}
	c, err := dial(ctx, t.cfg, false, t.cfg.InitialStatements)
	if err != nil {
		if ctx.Err() == nil {
			t.log.Warn("heartbeats: cannot connect; the slot moves only with captured changes", "err", err)
		}
		return
	}
	defer closeConn(c)
	tick := time.NewTicker(every)
	defer tick.Stop()
	var lastQuery, lastMessage time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		if t.cfg.HeartbeatQuery != "" && t.cfg.Heartbeat > 0 && now.Sub(lastQuery) >= t.cfg.Heartbeat {
			lastQuery = now
			if _, err := c.Exec(ctx, t.cfg.HeartbeatQuery).ReadAll(); err != nil && ctx.Err() == nil {
				t.log.Warn("heartbeat.action.query failed", "err", err)
			}
		}
		if t.cfg.WALHeartbeat > 0 && now.Sub(lastMessage) >= t.cfg.WALHeartbeat {
			lastMessage = now
			if _, err := query(ctx, c, "SELECT pg_logical_emit_message(false, $1, $2)", HeartbeatPrefix, strconv.FormatInt(now.UnixMilli(), 10)); err != nil && ctx.Err() == nil {
				t.log.Warn("heartbeat message failed", "err", err)
			}
		}
		if st, err := readSlot(ctx, c, t.cfg.Slot); err == nil {
			t.slot.Store(&st)
		}
	}
}

// Gauges implements connect.GaugeReporter: the slot's lag and WAL status,
// the stream's positions, and the snapshot's progress table by table.
func (t *Task) Gauges() []connect.Gauge {
	var out []connect.Gauge
	if st := t.slot.Load(); st != nil && st.Exists {
		out = append(out,
			connect.Gauge{Name: "postgres_slot_lag_bytes", Help: "WAL between the server's current position and the slot's confirmed one.",
				Value: float64(max(int64(st.Current)-int64(st.Confirmed), 0))},
			connect.Gauge{Name: "postgres_slot_retained_wal_bytes", Help: "WAL the slot keeps the server from recycling (from its restart position).",
				Value: float64(st.Lag())},
			connect.Gauge{Name: "postgres_slot_wal_status", Help: "1 for the slot's wal_status (reserved, extended, unreserved, lost).",
				Labels: map[string]string{"status": st.WALStatus}, Value: 1})
	}
	t.mu.Lock()
	s := t.stream
	t.mu.Unlock()
	if s != nil {
		out = append(out,
			connect.Gauge{Name: "postgres_received_lsn", Help: "The last WAL position read from the slot.", Value: float64(s.received.Load())},
			connect.Gauge{Name: "postgres_flushed_lsn", Help: "The WAL position the task told the server its offsets hold.", Value: float64(s.flush.Load())})
	}
	t.mu.Lock()
	inc := t.inc
	t.mu.Unlock()
	if inc != nil {
		out = append(out, inc.gauges()...)
	}
	for _, tp := range t.progress.Tables() {
		labels := map[string]string{"table": tp.Table}
		out = append(out,
			connect.Gauge{Name: "postgres_snapshot_rows", Help: "Rows the snapshot emitted, by table.", Labels: labels, Value: float64(tp.Rows)},
			connect.Gauge{Name: "postgres_snapshot_chunks", Help: "Chunks (page ranges) of a table's snapshot.", Labels: labels, Value: float64(tp.Chunks)},
			connect.Gauge{Name: "postgres_snapshot_chunks_done", Help: "Chunks of a table's snapshot read and emitted.", Labels: labels, Value: float64(tp.ChunksDone)})
	}
	return out
}

// Stop implements connect.SourceTask.
func (t *Task) Stop() error {
	if t.cancel != nil {
		t.cancel()
		<-t.done
	}
	if t.cfg.SlotDropOnStop && t.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if t.repl != nil {
			closeConn(t.repl)
			t.repl = nil
		}
		if err := t.dropSlot(ctx); err != nil {
			t.log.Warn("slot.drop.on.stop", "err", err)
		}
	}
	t.reread.close()
	t.closeConns()
	return nil
}

func (t *Task) closeConns() {
	for _, c := range []*pgconn.PgConn{t.repl, t.conn} {
		if c != nil {
			closeConn(c)
		}
	}
	t.repl, t.conn = nil, nil
}
