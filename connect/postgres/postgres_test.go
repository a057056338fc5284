package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
	"github.com/sluice-io/sluice/connect/postgres/values"
	"github.com/sluice-io/sluice/sluicetest/wait"
)

// The tests of this file need the PostgreSQL of `make postgres-up`
// (SLUICE_TEST_POSTGRES=host:port): `make test-postgres` runs them.

// testDB is a database of the test PostgreSQL, made for one test.
type testDB struct {
	t          testing.TB
	host, port string
	name       string
	conn       *pgconn.PgConn
}

func newTestDB(t *testing.T) *testDB { return newTestDBB(t) }

// newTestDBB is newTestDB for a test or a benchmark.
func newTestDBB(t testing.TB) *testDB {
	t.Helper()
	addr := os.Getenv("SLUICE_TEST_POSTGRES")
	if addr == "" {
		t.Skip("SLUICE_TEST_POSTGRES is not set (make postgres-up starts one on 127.0.0.1:15432; make test-postgres runs these tests)")
	}
	host, port, _ := strings.Cut(addr, ":")
	name := "sluice_" + strings.ToLower(strings.NewReplacer("/", "_", "-", "_").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgconn.Connect(ctx, fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres", host, port))
	if err != nil {
		t.Fatal(err)
	}
	defer closeConn(admin)
	dropAll := func(ctx context.Context) {
		// Slots of the database first: a database with a slot cannot be dropped.
		_, _ = admin.Exec(ctx, "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE database = "+quoteLiteral(name)+" AND active_pid IS NOT NULL").ReadAll()
		_, _ = admin.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = "+quoteLiteral(name)).ReadAll()
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(name)+" WITH (FORCE)").ReadAll()
	}
	dropAll(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+quoteIdent(name)).ReadAll(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		a, err := pgconn.Connect(ctx, fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres", host, port))
		if err != nil {
			t.Log(err)
			return
		}
		defer closeConn(a)
		admin = a
		dropAll(ctx)
	})
	conn, err := pgconn.Connect(ctx, fmt.Sprintf("host=%s port=%s user=postgres dbname=%s", host, port, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeConn(conn) })
	return &testDB{t: t, host: host, port: port, name: name, conn: conn}
}

// exec runs statements, failing the test on an error.
func (d *testDB) exec(sql ...string) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, s := range sql {
		if _, err := d.conn.Exec(ctx, s).ReadAll(); err != nil {
			d.t.Fatalf("%s: %v", s, err)
		}
	}
}

// props is a connector config for the database; extra keys override.
func (d *testDB) props(extra map[string]string) map[string]string {
	p := map[string]string{
		"name": "pg", "connector.class": Class, "tasks.max": "1",
		"database.hostname": d.host, "database.port": d.port, "database.user": "postgres",
		"database.dbname": d.name, "topic.prefix": "db", "slot.name": d.name, "publication.name": d.name,
		"sluice.heartbeat.wal.interval.ms": "200",
	}
	maps.Copy(p, extra)
	return p
}

// memOffsets is the offset store of a task run in the test: what the
// runtime commits after a poll's records are written.
type memOffsets struct {
	mu sync.Mutex
	o  map[string]map[string]any
}

func (m *memOffsets) Offset(_ context.Context, partition map[string]any) (map[string]any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, _ := json.Marshal(partition)
	return m.o[string(k)], nil
}

func (m *memOffsets) commit(recs []connect.SourceRecord) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.o == nil {
		m.o = map[string]map[string]any{}
	}
	for _, r := range recs {
		k, _ := json.Marshal(r.SourcePartition)
		// A round trip through JSON, as the offset store's.
		b, _ := json.Marshal(r.SourceOffset)
		var o map[string]any
		_ = json.Unmarshal(b, &o)
		m.o[string(k)] = o
	}
}

// seen is a record as a consumer reads it through JsonConverter.
type seen struct {
	Topic      string
	Key, Value map[string]any
}

// runTask runs a task until until says it has seen enough (or the time is
// up), committing offsets after each poll as the runtime does, and returns
// the records it wrote.
func runTask(t *testing.T, props map[string]string, offsets *memOffsets, until func([]seen) bool) []seen {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	task := &Task{}
	if err := task.Start(ctx, connect.SourceTaskContext{Offsets: offsets}, props); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := task.Stop(); err != nil {
			t.Error(err)
		}
	}()
	conv := &converters.JSON{}
	if err := conv.Configure(map[string]string{"schemas.enable": "false"}, false); err != nil {
		t.Fatal(err)
	}
	var out []seen
	for !until(out) {
		if ctx.Err() != nil {
			t.Fatalf("gave up after %d records: %+v", len(out), out)
		}
		recs, err := task.Poll(ctx)
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		for _, r := range recs {
			if r.Dropped {
				continue
			}
			s := seen{Topic: r.Topic}
			s.Key = decode(t, conv, r.Topic, r.KeySchema, r.Key)
			s.Value = decode(t, conv, r.Topic, r.ValueSchema, r.Value)
			out = append(out, s)
		}
		offsets.commit(recs)
		if err := task.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func decode(t *testing.T, conv connect.Converter, topic string, s *connect.Schema, v any) map[string]any {
	t.Helper()
	if s == nil && v == nil {
		return nil
	}
	b, err := conv.FromConnectData(topic, s, v)
	if err != nil {
		t.Fatalf("convert: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return m
}

// ops is the op and id of each change record, in order, and "tombstone"
// for a tombstone.
func ops(recs []seen) []string {
	var out []string
	for _, r := range recs {
		if r.Value == nil {
			out = append(out, fmt.Sprintf("tombstone %v", r.Key["id"]))
			continue
		}
		row, _ := r.Value["after"].(map[string]any)
		if row == nil {
			row, _ = r.Value["before"].(map[string]any)
		}
		out = append(out, fmt.Sprintf("%v %v", r.Value["op"], row["id"]))
	}
	return out
}

// TestSnapshotThenStreamResumes takes a snapshot, streams changes, and
// restarts the task from its committed offset: every change is read once,
// none again.
func TestSnapshotThenStreamResumes(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)",
		"INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 2000) g")
	props := d.props(map[string]string{"snapshot.max.threads": "2"})
	offsets := &memOffsets{}
	snap := runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 2000 })
	if got := slices.Compact(slices.Sorted(slices.Values(topics(snap)))); !slices.Equal(got, []string{"db.public.items"}) {
		t.Fatalf("topics %v", got)
	}
	ids := map[float64]bool{}
	for _, r := range snap {
		if r.Value["op"] != "r" {
			t.Fatalf("snapshot record %+v", r)
		}
		ids[r.Key["id"].(float64)] = true
	}
	if len(ids) != 2000 {
		t.Fatalf("%d distinct rows in the snapshot", len(ids))
	}

	d.exec("INSERT INTO items VALUES (2001, 'new')", "UPDATE items SET name = 'changed' WHERE id = 1",
		"DELETE FROM items WHERE id = 2")
	got := runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 4 })
	if want := []string{"c 2001", "u 1", "d 2", "tombstone 2"}; !slices.Equal(ops(got), want) {
		t.Fatalf("streamed %v, want %v", ops(got), want)
	}
	// A restart reads on from there: only what changed since.
	d.exec("BEGIN", "INSERT INTO items VALUES (3001, 'a')", "INSERT INTO items VALUES (3002, 'b')", "COMMIT")
	got = runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 2 })
	if want := []string{"c 3001", "c 3002"}; !slices.Equal(ops(got), want) {
		t.Fatalf("after a restart %v, want %v", ops(got), want)
	}
}

func topics(recs []seen) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Topic
	}
	return out
}

// lsnOf reads an LSN the server computes.
func (d *testDB) lsnOf(sql string) pglogrepl.LSN {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, _, err := queryOne(ctx, d.conn, sql)
	if err != nil {
		d.t.Fatal(err)
	}
	lsn, err := pglogrepl.ParseLSN(v)
	if err != nil {
		d.t.Fatalf("%s: %q: %v", sql, v, err)
	}
	return lsn
}

// TestIdleTablesDoNotHoldWAL: while only tables the connector does not
// capture change, its own heartbeat messages still move the slot past
// their WAL — no change event is emitted for them.
func TestIdleTablesDoNotHoldWAL(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE items (id int PRIMARY KEY)", "CREATE TABLE noise (id int PRIMARY KEY, pad text)")
	props := d.props(map[string]string{"table.include.list": "public.items", "status.update.interval.ms": "100",
		"sluice.heartbeat.wal.interval.ms": "100"})
	offsets := &memOffsets{}
	runTask(t, props, offsets, func([]seen) bool { return true }) // creates the slot; nothing to snapshot
	d.exec("INSERT INTO noise SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g")
	busy := d.lsnOf("SELECT pg_current_wal_lsn()::text")
	var flushed pglogrepl.LSN
	got := runTask(t, props, offsets, func([]seen) bool {
		flushed = d.lsnOf("SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = " + quoteLiteral(d.name))
		return flushed >= busy
	})
	if len(got) != 0 {
		t.Fatalf("records for tables not captured, or for heartbeats: %+v", got)
	}
	t.Logf("slot confirmed at %s, past the %s of WAL the other table wrote", flushed, busy)
}

// startErr starts a task that must fail to start, and returns its error.
func startErr(t *testing.T, props map[string]string, offsets *memOffsets) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	task := &Task{}
	err := task.Start(ctx, connect.SourceTaskContext{Offsets: offsets}, props)
	if err == nil {
		_ = task.Stop()
		t.Fatal("the task started")
	}
	return err
}

// TestLostSlotFailsFast: a slot dropped under a connector with a stored
// position stops it with a message saying why and what to do, rather than
// a new slot silently skipping the changes in between; a slot recreated
// past the position does too, with offset.mismatch.strategy=trust_offset.
// snapshot.mode=when_needed takes a new snapshot instead.
func TestLostSlotFailsFast(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE items (id int PRIMARY KEY)", "INSERT INTO items VALUES (1)")
	props := d.props(nil)
	offsets := &memOffsets{}
	runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 1 })
	d.exec("INSERT INTO items VALUES (2)")
	runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 1 })

	d.dropSlot()
	err := startErr(t, props, offsets)
	if !strings.Contains(err.Error(), "does not exist, but the connector has a stored position") {
		t.Fatalf("a dropped slot: %v", err)
	}
	d.exec("INSERT INTO items VALUES (3)", "SELECT pg_create_logical_replication_slot("+quoteLiteral(d.name)+", 'pgoutput')")
	trust := d.props(map[string]string{"offset.mismatch.strategy": "trust_offset"})
	err = startErr(t, trust, offsets)
	if !strings.Contains(err.Error(), "past the connector's stored position") {
		t.Fatalf("a recreated slot, trusting the offset: %v", err)
	}
	d.dropSlot()
	again := runTask(t, d.props(map[string]string{"snapshot.mode": "when_needed"}), offsets, func(s []seen) bool { return len(s) >= 3 })
	if want := []string{"r 1", "r 2", "r 3"}; !slices.Equal(ops(again), want) {
		t.Fatalf("when_needed: %v, want %v", ops(again), want)
	}
}

// dropSlot drops the test's slot once its walsender, which outlives a
// stopped task's session by a moment, has let go of it.
func (d *testDB) dropSlot() {
	d.t.Helper()
	wait.Eventually(d.t, 10*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := d.conn.Exec(ctx, "SELECT pg_drop_replication_slot("+quoteLiteral(d.name)+")").ReadAll()
		return err == nil, fmt.Sprint(err)
	})
}

// TestGauges: the task reports its snapshot's progress by table, then its
// slot's lag and WAL status, as gauges the agent serves.
func TestGauges(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE items (id int PRIMARY KEY)", "INSERT INTO items SELECT generate_series(1, 500)")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	task := &Task{}
	if err := task.Start(ctx, connect.SourceTaskContext{Offsets: &memOffsets{}}, d.props(map[string]string{"sluice.heartbeat.wal.interval.ms": "100"})); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = task.Stop() }()
	gauge := func(name string) (connect.Gauge, bool) {
		for _, g := range task.Gauges() {
			if g.Name == name {
				return g, true
			}
		}
		return connect.Gauge{}, false
	}
	wait.Eventually(t, 30*time.Second, func() (bool, string) {
		if _, err := task.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		rows, _ := gauge("postgres_snapshot_rows")
		status, ok := gauge("postgres_slot_wal_status")
		return rows.Value == 500 && rows.Labels["table"] == "public.items" && ok && status.Labels["status"] == "reserved",
			fmt.Sprintf("gauges %+v", task.Gauges())
	})
}

// TestColumnFilters: a column the lists leave out is in no row; a key
// column left out stays in the key, as Debezium keeps it.
func TestColumnFilters(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE items (id int PRIMARY KEY, secret text, name text)", "INSERT INTO items VALUES (1, 's', 'one')")
	got := runTask(t, d.props(map[string]string{"column.exclude.list": `public\.items\.(secret|id)`}), &memOffsets{},
		func(s []seen) bool { return len(s) >= 1 })
	after, _ := got[0].Value["after"].(map[string]any)
	if fmt.Sprint(got[0].Key) != "map[id:1]" || fmt.Sprint(after) != "map[name:one]" {
		t.Fatalf("key %v, after %v: want the key's id, and only name in the row", got[0].Key, after)
	}
}

// TestSchemaChangesWhileBehind: changes written before an ALTER TABLE that
// the connector reads after it keep the columns they were written with —
// the relation pgoutput sends, not today's catalog — and a column of a type
// Debezium leaves out (tsquery) is left out of the rows.
func TestSchemaChangesWhileBehind(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE items (id int PRIMARY KEY, old text, q tsquery)", "INSERT INTO items VALUES (0, 'seed', 'x')")
	props := d.props(nil)
	offsets := &memOffsets{}
	runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 1 })
	d.exec("INSERT INTO items VALUES (1, 'before', 'a & b')", "ALTER TABLE items DROP COLUMN old",
		"ALTER TABLE items ADD COLUMN added int", "INSERT INTO items VALUES (2, 'a', 7)")
	got := runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 2 })
	first, _ := got[0].Value["after"].(map[string]any)
	second, _ := got[1].Value["after"].(map[string]any)
	if fmt.Sprint(first) != "map[id:1 old:before]" || fmt.Sprint(second) != "map[added:7 id:2]" {
		t.Fatalf("rows %v and %v: want each with the columns it was written with, without the tsquery", first, second)
	}
}

// TestResumeSkips: how a restarted stream tells what it emitted already —
// transactions ended at or before the stored commit position, and of the
// stored transaction the events up to the stored one; a stored BEGIN shares
// its LSN with the first change, which was not emitted yet; a
// non-transactional message is a commit position of its own.
func TestResumeSkips(t *testing.T) {
	s := newStreamer(Config{}, nil, nil, nil, nil, position{LSN: 200, Proc: 200, Commit: 150, TxID: 9, HasTxID: true, MessageType: "INSERT"}, nil)
	s.tx = txState{xid: 8, finalLSN: 140, open: true}
	if !s.skipTx() || !s.skipEvent(120) {
		t.Fatal("a transaction ended before the stored commit position is read again")
	}
	s.tx = txState{xid: 9, finalLSN: 300, open: true}
	if !s.skipEvent(200) || s.skipEvent(210) {
		t.Fatal("the stored transaction: its events up to the stored one only are skipped")
	}
	s.tx = txState{xid: 10, finalLSN: 310, open: true}
	if s.skipEvent(190) {
		t.Fatal("another transaction's earlier LSN (interleaved) is not skipped")
	}
	rec, err := newRecords(Config{Prefix: "db", Modes: values.DefaultModes()}, slog.Default(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	b := newStreamer(Config{}, nil, nil, rec, nil, position{LSN: 200, Proc: 200, Commit: 150, TxID: 9, HasTxID: true, MessageType: "BEGIN"}, nil)
	b.tx = txState{xid: 9, finalLSN: 300, open: true}
	if b.skipEvent(200) {
		t.Fatal("after a stored BEGIN, the change at its LSN is still to emit")
	}
	b.tx = txState{lastCommit: 150}
	var recs []connect.SourceRecord
	recs, err = b.logicalMessage(400, &pglogrepl.LogicalDecodingMessage{Prefix: HeartbeatPrefix})
	if err != nil || len(recs) != 1 || !recs[0].Dropped || recs[0].SourceOffset["lsn_commit"] != int64(400) || recs[0].SourceOffset["txId"] != nil {
		t.Fatalf("a heartbeat's position %v %v", recs, err)
	}
	if b.tx.lastCommit != 400 {
		t.Fatalf("the next transaction's events carry lsn_commit %d, want the heartbeat's 400", b.tx.lastCommit)
	}
}

// TestPollBoundedByBytes: a poll's batch of wide rows stops at about 8 MiB
// of values, not at max.batch.size rows, so the agent never holds
// max.batch.size times a wide row.
func TestPollBoundedByBytes(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE wide (id int PRIMARY KEY, body text)",
		"ALTER TABLE wide ALTER COLUMN body SET STORAGE EXTERNAL",
		"INSERT INTO wide SELECT g, repeat(md5(g::text), 32768) FROM generate_series(1, 40) g") // 1 MiB a row
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	task := &Task{}
	if err := task.Start(ctx, connect.SourceTaskContext{Offsets: &memOffsets{}}, d.props(nil)); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = task.Stop() }()
	total, largest := 0, 0
	for total < 40 {
		recs, err := task.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		total += len(recs)
		largest = max(largest, len(recs))
	}
	if largest > 9 {
		t.Fatalf("a poll returned %d rows of 1 MiB: want at most 9 (8 MiB and the row that crossed it)", largest)
	}
}
