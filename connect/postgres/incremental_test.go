package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
	"github.com/sluice-io/sluice/connect/postgres/signals"
)

// signalDDL makes the signal table of the tests, as Debezium documents it.
const signalDDL = "CREATE TABLE sluice_signal (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))"

// incProps is a config with the signal table and small chunks, streaming
// from the start (no initial snapshot): what a consumer knows of a table
// comes from the incremental snapshot and the stream.
func (d *testDB) incProps(chunk int) map[string]string {
	return d.props(map[string]string{"signal.data.collection": "public.sluice_signal", "snapshot.mode": "no_data",
		"incremental.snapshot.chunk.size": fmt.Sprint(chunk)})
}

// running is a task started in a test, polled by poll.
type running struct {
	t       *testing.T
	task    *Task
	offsets *memOffsets
	ctx     context.Context
}

func startTask(t *testing.T, props map[string]string, offsets *memOffsets) *running {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	task := &Task{}
	if err := task.Start(ctx, connect.SourceTaskContext{Offsets: offsets}, props); err != nil {
		t.Fatal(err)
	}
	r := &running{t: t, task: task, offsets: offsets, ctx: ctx}
	t.Cleanup(func() { _ = task.Stop() })
	return r
}

// poll polls once, commits the offsets as the runtime does, and returns
// the records as a consumer sees them.
func (r *running) poll() []seen {
	r.t.Helper()
	recs, err := r.task.Poll(r.ctx)
	if err != nil {
		r.t.Fatalf("poll: %v", err)
	}
	var out []seen
	for _, rec := range recs {
		if rec.Dropped {
			continue
		}
		out = append(out, seen{Topic: rec.Topic, Key: decodeJSON(r.t, rec.KeySchema, rec.Key), Value: decodeJSON(r.t, rec.ValueSchema, rec.Value)})
	}
	r.offsets.commit(recs)
	if err := r.task.Commit(r.ctx); err != nil {
		r.t.Fatal(err)
	}
	return out
}

// gauge is the value of a gauge of the task for table (0 when absent).
func (r *running) gauge(name, table string) float64 {
	for _, g := range r.task.Gauges() {
		if g.Name == name && g.Labels["table"] == table {
			return g.Value
		}
	}
	return 0
}

func decodeJSON(t *testing.T, s *connect.Schema, v any) map[string]any {
	t.Helper()
	conv := jsonConverter(t)
	return decode(t, conv, "x", s, v)
}

// view is a consumer's last value of each key of a topic: a read, create
// or update sets it, a delete removes it.
type view map[string]string

func (v view) apply(topic string, recs []seen) {
	for _, r := range recs {
		if r.Topic != topic || r.Value == nil {
			continue
		}
		id := fmt.Sprint(r.Key["id"])
		if f, ok := r.Key["id"].(float64); ok {
			id = strconv.FormatFloat(f, 'f', -1, 64) // 1010005, not 1.010005e+06
		}
		if r.Value["op"] == "d" {
			delete(v, id)
			continue
		}
		after, _ := r.Value["after"].(map[string]any)
		v[id] = fmt.Sprint(after["v"])
	}
}

// tableView is what the table holds, as a view.
func (d *testDB) tableView(table string) view {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := query(ctx, d.conn, "SELECT id, v FROM "+table)
	if err != nil {
		d.t.Fatal(err)
	}
	out := view{}
	for _, r := range rows {
		out[str(r[0])] = str(r[1])
	}
	return out
}

// TestIncrementalSnapshotWhileWriting: an incremental snapshot of a table
// that is being updated, deleted from and inserted into all along leaves
// a consumer's last value of every key equal to the table's: no row lost,
// no deleted row back, no stale value — the chunks read between
// watermarks give way to the changes streamed inside their windows.
func TestIncrementalSnapshotWhileWriting(t *testing.T) {
	d := newTestDB(t)
	d.exec(signalDDL, "CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL)",
		"INSERT INTO items SELECT g, 0 FROM generate_series(1, 2000) g")
	r := startTask(t, d.incProps(10), &memOffsets{})
	if err := r.task.Signal(r.ctx, connect.Signal{Type: signals.ExecuteSnapshot, Data: []byte(`{"data-collections": ["public\\.items"]}`)}); err != nil {
		t.Fatal(err)
	}

	// Two writers change random rows until the snapshot is done, each
	// change a transaction of its own (one row each: no deadlocks).
	var done atomic.Bool
	var wg sync.WaitGroup
	var writes atomic.Int64
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := pgconn.Connect(r.ctx, fmt.Sprintf("host=%s port=%s user=postgres dbname=%s", d.host, d.port, d.name))
			if err != nil {
				t.Error(err)
				return
			}
			defer closeConn(c)
			next := 10_000 + w*1_000_000
			for !done.Load() && r.ctx.Err() == nil {
				id := 1 + rand.IntN(2000)
				stmt := fmt.Sprintf("UPDATE items SET v = v + 1 WHERE id = %d", id)
				switch rand.IntN(5) {
				case 0:
					stmt = fmt.Sprintf("DELETE FROM items WHERE id = %d", id)
				case 1:
					stmt = fmt.Sprintf("INSERT INTO items VALUES (%d, 1)", next)
					next++
				}
				if _, err := c.Exec(r.ctx, stmt).ReadAll(); err != nil {
					if r.ctx.Err() == nil {
						t.Error(err)
					}
					return
				}
				writes.Add(1)
			}
		}()
	}

	v := view{}
	reads := 0
	for r.gauge("postgres_incremental_snapshot_done", "public.items") != 1 {
		if r.ctx.Err() != nil {
			t.Fatalf("the snapshot did not finish: %d reads, gauges %+v", reads, r.task.Gauges())
		}
		recs := r.poll()
		for _, rec := range recs {
			if rec.Topic == "db.public.items" && rec.Value != nil && rec.Value["op"] == "r" {
				reads++
				if src, _ := rec.Value["source"].(map[string]any); src["snapshot"] != "incremental" {
					t.Fatalf("a read's source.snapshot is %v, want incremental", src["snapshot"])
				}
			}
		}
		v.apply("db.public.items", recs)
	}
	done.Store(true)
	wg.Wait()
	// Everything written is streamed by the time the marker is.
	d.exec("INSERT INTO items VALUES (0, -1)")
	for v["0"] != "-1" {
		if r.ctx.Err() != nil {
			t.Fatal("the marker row never came")
		}
		v.apply("db.public.items", r.poll())
	}
	want := d.tableView("items")
	var diffs []string
	for id, val := range want {
		if v[id] != val {
			diffs = append(diffs, fmt.Sprintf("%s: table %s, consumer %q", id, val, v[id]))
		}
	}
	for id, val := range v {
		if _, ok := want[id]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: deleted, but the consumer has %s", id, val))
		}
	}
	if len(diffs) > 0 {
		t.Fatalf("%d keys differ (of %d; %d reads, %d writes): %s", len(diffs), len(want), reads, writes.Load(), strings.Join(diffs[:min(len(diffs), 10)], "; "))
	}
	if reads == 0 || writes.Load() == 0 {
		t.Fatalf("%d reads and %d writes: the test did not test", reads, writes.Load())
	}
	t.Logf("%d rows in the table; %d read by the snapshot, %d writes streamed alongside", len(want), reads, writes.Load())
	if o, _ := r.offsets.Offset(r.ctx, map[string]any{PartitionKey: "db"}); o[keyIncremental] != nil || o[connect.OffsetsHeldKey] != nil {
		t.Fatalf("the offset still holds the finished snapshot: %v", o)
	}
}

// TestIncrementalSnapshotStop: a stop-snapshot signal ends the snapshot
// after the chunk in flight: the rest of the table is never read, and the
// offsets no longer carry it.
func TestIncrementalSnapshotStop(t *testing.T) {
	d := newTestDB(t)
	d.exec(signalDDL, "CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL)",
		"INSERT INTO items SELECT g, 0 FROM generate_series(1, 20000) g")
	r := startTask(t, d.incProps(10), &memOffsets{})
	if err := r.task.Signal(r.ctx, connect.Signal{Type: signals.ExecuteSnapshot, Data: []byte(`{"data-collections": ["public.items"]}`)}); err != nil {
		t.Fatal(err)
	}
	reads := 0
	count := func(recs []seen) {
		for _, rec := range recs {
			if rec.Value != nil && rec.Value["op"] == "r" {
				reads++
			}
		}
	}
	for reads < 200 {
		if r.ctx.Err() != nil {
			t.Fatalf("%d reads", reads)
		}
		count(r.poll())
	}
	if err := r.task.Signal(r.ctx, connect.Signal{Type: signals.StopSnapshot, Data: []byte(`{"type": "incremental"}`)}); err != nil {
		t.Fatal(err)
	}
	for r.gauge("postgres_incremental_snapshot_done", "public.items") != 1 {
		if r.ctx.Err() != nil {
			t.Fatalf("not stopped after %d reads", reads)
		}
		count(r.poll())
	}
	stoppedAt := reads
	d.exec("INSERT INTO items VALUES (0, -1)")
	for got := false; !got; {
		recs := r.poll()
		count(recs)
		for _, rec := range recs {
			got = got || rec.Value != nil && rec.Value["op"] == "c" && fmt.Sprint(rec.Key["id"]) == "0"
		}
	}
	// The stop takes effect at the next chunk, and the stream reads ahead
	// of the polls by a few dozen chunks: far from the table's end.
	if reads >= 5000 {
		t.Fatalf("%d reads when the snapshot stopped, %d in all: want it stopped well before the table's 20000 rows", stoppedAt, reads)
	}
	if o, _ := r.offsets.Offset(r.ctx, map[string]any{PartitionKey: "db"}); o[keyIncremental] != nil {
		t.Fatalf("the offset still holds the stopped snapshot: %v", o[keyIncremental])
	}
	t.Logf("stopped after %d of 20000 rows", reads)
}

// TestIncrementalSnapshotResumes: a task stopped part way through an
// incremental snapshot reads on, when started again from its offsets,
// after the last row it committed: no row is read twice and none missed.
func TestIncrementalSnapshotResumes(t *testing.T) {
	d := newTestDB(t)
	d.exec(signalDDL, "CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL)",
		"CREATE TABLE others (id text PRIMARY KEY, n int, v int)",
		"INSERT INTO items SELECT g, 0 FROM generate_series(1, 3000) g",
		"INSERT INTO others SELECT 'k' || g, g, 0 FROM generate_series(1, 500) g")
	offsets := &memOffsets{}
	props := d.incProps(100)
	r := startTask(t, props, offsets)
	if err := r.task.Signal(r.ctx, connect.Signal{Type: signals.ExecuteSnapshot,
		Data: []byte(`{"data-collections": ["public.items", "public.others"], "additional-conditions": [{"data-collection": "public.others", "filter": "n <= 300"}]}`)}); err != nil {
		t.Fatal(err)
	}
	seenKeys := map[string]int{}
	reads := func(r *running, until func() bool) {
		for !until() {
			if r.ctx.Err() != nil {
				t.Fatalf("%d keys read", len(seenKeys))
			}
			for _, rec := range r.poll() {
				if rec.Value != nil && rec.Value["op"] == "r" {
					seenKeys[rec.Topic+" "+fmt.Sprint(rec.Key["id"])]++
				}
			}
		}
	}
	reads(r, func() bool { return len(seenKeys) >= 1250 })
	if err := r.task.Stop(); err != nil {
		t.Fatal(err)
	}
	stored, _ := offsets.Offset(context.Background(), map[string]any{PartitionKey: "db"})
	var st incState
	if err := json.Unmarshal([]byte(fmt.Sprint(stored[keyIncremental])), &st); err != nil || len(st.Tables) != 2 || st.Rows == 0 {
		t.Fatalf("the stored offset's snapshot state %v: %v", stored[keyIncremental], err)
	}
	if stored[connect.OffsetsHeldKey] != Class {
		t.Fatalf("the offset with a snapshot in flight is not held to the native class: %v", stored)
	}
	first := len(seenKeys)

	again := startTask(t, props, offsets)
	reads(again, func() bool { return again.gauge("postgres_incremental_snapshot_done", "public.others") == 1 })
	// The last chunks' rows may still wait for a poll: a row inserted now
	// comes after them.
	d.exec("INSERT INTO items VALUES (0, -1)")
	for marker := false; !marker; {
		for _, rec := range again.poll() {
			if rec.Value != nil && rec.Value["op"] == "r" {
				seenKeys[rec.Topic+" "+fmt.Sprint(rec.Key["id"])]++
			}
			marker = marker || rec.Value != nil && rec.Value["op"] == "c"
		}
	}
	// The rows read before the restart count in the table's progress.
	if rows := again.gauge("postgres_incremental_snapshot_rows", "public.items"); rows != 3000 {
		t.Fatalf("the resumed snapshot reports %v rows of public.items, want all 3000 (%d of them before the restart)", rows, st.Rows)
	}
	twice := 0
	for _, n := range seenKeys {
		twice += n - 1
	}
	if len(seenKeys) != 3300 || twice != 0 {
		t.Fatalf("%d keys read (%d before the restart), %d of them twice: want the 3000 rows of items and the 300 of others the filter selects, each once",
			len(seenKeys), first, twice)
	}
}

// jsonConverter is JsonConverter without schemas, as the tests read records.
func jsonConverter(t *testing.T) connect.Converter {
	t.Helper()
	conv := &converters.JSON{}
	if err := conv.Configure(map[string]string{"schemas.enable": "false"}, false); err != nil {
		t.Fatal(err)
	}
	return conv
}

// TestSignalTableValidated: validation names signal.data.collection when
// the signal table does not exist, or the publication does not publish
// it; a task does not start on such a config either.
func TestSignalTableValidated(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE items (id int PRIMARY KEY)", "CREATE PUBLICATION "+quoteIdent(d.name)+" FOR TABLE items")
	props := d.props(map[string]string{"signal.data.collection": "public.sluice_signal", "publication.autocreate.mode": "disabled"})
	errorOn := func(key string) string {
		for _, v := range (&Connector{}).Validate(props) {
			if v.Name == key && len(v.Errors) > 0 {
				return strings.Join(v.Errors, "; ")
			}
		}
		return ""
	}
	if msg := errorOn("signal.data.collection"); !strings.Contains(msg, "the signal table public.sluice_signal does not exist") {
		t.Fatalf("no signal table: %q", msg)
	}
	d.exec(signalDDL)
	if msg := errorOn("signal.data.collection"); !strings.Contains(msg, "does not publish the signal table public.sluice_signal") {
		t.Fatalf("a publication without the signal table: %q", msg)
	}
	if err := startErr(t, props, &memOffsets{}); !strings.Contains(err.Error(), "does not publish the signal table") {
		t.Fatalf("a task on it: %v", err)
	}
	d.exec("ALTER PUBLICATION " + quoteIdent(d.name) + " ADD TABLE sluice_signal")
	if msg := errorOn("signal.data.collection"); msg != "" {
		t.Fatalf("a published signal table: %q", msg)
	}
}

// TestIncrementalSnapshotSkipsABadTable: a table the server will not read
// as asked (an additional condition on a column it does not have) is
// skipped with an error in the log, as Debezium skips it, and the next
// table is read; a signal row inserted by hand that names no captured
// table is counted as refused, and the stream goes on.
func TestIncrementalSnapshotSkipsABadTable(t *testing.T) {
	d := newTestDB(t)
	d.exec(signalDDL, "CREATE TABLE a (id int PRIMARY KEY, v int)", "CREATE TABLE b (id int PRIMARY KEY, v int)",
		"INSERT INTO a SELECT g, 0 FROM generate_series(1, 10) g", "INSERT INTO b SELECT g, 0 FROM generate_series(1, 10) g")
	r := startTask(t, d.incProps(4), &memOffsets{})
	d.exec(`INSERT INTO sluice_signal VALUES ('bad', 'execute-snapshot', '{"data-collections": ["public.nope"]}')`,
		`INSERT INTO sluice_signal VALUES ('s1', 'execute-snapshot', '{"data-collections": ["public.a", "public.b"],
			"additional-conditions": [{"data-collection": "public.a", "filter": "no_such_column > 1"}]}')`)
	read := map[string]int{}
	for r.gauge("postgres_incremental_snapshot_done", "public.b") != 1 {
		if r.ctx.Err() != nil {
			t.Fatalf("not done: %v, gauges %+v", read, r.task.Gauges())
		}
		for _, rec := range r.poll() {
			if rec.Value != nil && rec.Value["op"] == "r" {
				read[rec.Topic]++
			}
		}
	}
	d.exec("INSERT INTO b VALUES (0, -1)")
	for marker := false; !marker; {
		for _, rec := range r.poll() {
			if rec.Value != nil && rec.Value["op"] == "r" {
				read[rec.Topic]++
			}
			marker = marker || rec.Value != nil && rec.Value["op"] == "c" && rec.Topic == "db.public.b"
		}
	}
	if read["db.public.a"] != 0 || read["db.public.b"] != 10 || r.gauge("postgres_incremental_snapshot_done", "public.a") != 1 {
		t.Fatalf("reads %v: want a skipped (its filter does not compile) and b's 10 rows", read)
	}
	if n := r.gauge("postgres_signals_refused", ""); n != 1 {
		t.Fatalf("%v signals refused, want the one naming no captured table", n)
	}
}
