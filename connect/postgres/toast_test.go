package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
)

// big is an SQL expression of a text of n kilobytes that differs with seed;
// stored EXTERNAL it is TOASTed uncompressed, whatever it holds.
func big(seed string, n int) string {
	return fmt.Sprintf("repeat(md5(%s), %d)", quoteLiteral(seed), n*1024/32)
}

// after is a change record's after struct, and before its before.
func after(r seen) map[string]any  { m, _ := r.Value["after"].(map[string]any); return m }
func before(r seen) map[string]any { m, _ := r.Value["before"].(map[string]any); return m }

// text reads one value the server computes.
func (d *testDB) text(sql string) string {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, _, err := queryOne(ctx, d.conn, sql)
	if err != nil {
		d.t.Fatal(err)
	}
	return v
}

// TestToastReread: with sluice.toast.reread.tables, an update that left a
// TOASTed column alone carries the row's value read back from the table —
// its current one, newer than the change when the row changed again since —
// while a row deleted since, a table without a primary key and a table the
// option does not name keep Debezium's placeholder; under REPLICA IDENTITY
// FULL the old row carries the value, so both before and after have it.
func TestToastReread(t *testing.T) {
	d := newTestDB(t)
	for _, tb := range []string{"docs", "other", "fullrow"} {
		d.exec("CREATE TABLE "+tb+" (id int PRIMARY KEY, status text, body text)",
			"ALTER TABLE "+tb+" ALTER COLUMN body SET STORAGE EXTERNAL")
	}
	d.exec("CREATE TABLE nokey (code int NOT NULL, status text, body text)",
		"CREATE UNIQUE INDEX nokey_code ON nokey (code)", "ALTER TABLE nokey REPLICA IDENTITY USING INDEX nokey_code",
		"ALTER TABLE nokey ALTER COLUMN body SET STORAGE EXTERNAL",
		"ALTER TABLE fullrow REPLICA IDENTITY FULL")
	for _, tb := range []string{"docs", "other", "fullrow"} {
		d.exec("INSERT INTO " + tb + " SELECT g, 'new', " + big("x", 4) + " || g FROM generate_series(1, 3) g")
	}
	d.exec("INSERT INTO nokey VALUES (1, 'new', " + big("k", 4) + ")")
	props := d.props(map[string]string{"sluice.toast.reread.tables": `public\.docs,public\.nokey`})
	offsets := &memOffsets{}
	runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 10 })

	d.exec("UPDATE docs SET status = 'read' WHERE id = 1",
		"UPDATE docs SET status = 'read' WHERE id = 2", "UPDATE docs SET body = "+big("y", 3)+" WHERE id = 2",
		"UPDATE docs SET status = 'read' WHERE id = 3", "DELETE FROM docs WHERE id = 3",
		"UPDATE nokey SET status = 'read'", "UPDATE other SET status = 'read' WHERE id = 1",
		"UPDATE fullrow SET status = 'read' WHERE id = 1")
	got := runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 9 })
	if want := "[u 1 u 2 u 2 u 3 d 3 tombstone 3 u <nil> u 1 u 1]"; fmt.Sprint(ops(got)) != want {
		t.Fatalf("events %v, want %s", ops(got), want)
	}
	body := func(id int, table string) string {
		return d.text(fmt.Sprintf("SELECT body FROM %s WHERE id = %d", table, id))
	}
	const placeholder = "__debezium_unavailable_value"
	for i, want := range []string{body(1, "docs"), body(2, "docs"), body(2, "docs"), placeholder} {
		if b, _ := after(got[i])["body"].(string); b != want {
			t.Errorf("event %d (%v) body %.40q… (%d chars), want %.40q… (%d chars)", i, ops(got)[i], b, len(b), want, len(want))
		}
	}
	if b := after(got[6])["body"]; b != placeholder {
		t.Errorf("a table without a primary key: body %.40q, want the placeholder", b)
	}
	if b := after(got[7])["body"]; b != placeholder {
		t.Errorf("a table the option does not name: body %.40q, want the placeholder", b)
	}
	if a, b := after(got[8])["body"], before(got[8])["body"]; a != body(1, "fullrow") || b != a {
		t.Errorf("REPLICA IDENTITY FULL: before %.40q, after %.40q, want the value in both", b, a)
	}
	if s := after(got[0])["status"]; s != "read" {
		t.Errorf("the changed column: %v", s)
	}
}

// TestToastRereadBoundsBatch: the values read back count against a poll's
// 8 MiB: updates of rows with 1 MiB TOASTed values, of two tables in turn,
// come in polls of a few rows, each with its value, in order, none lost or
// repeated between polls.
func TestToastRereadBoundsBatch(t *testing.T) {
	d := newTestDB(t)
	for _, tb := range []string{"a", "b"} {
		d.exec("CREATE TABLE "+tb+" (id int PRIMARY KEY, status text, body text)",
			"ALTER TABLE "+tb+" ALTER COLUMN body SET STORAGE EXTERNAL",
			"INSERT INTO "+tb+" SELECT g, 'new', "+big(tb, 1024)+" || g FROM generate_series(1, 15) g")
	}
	props := d.props(map[string]string{"sluice.toast.reread.tables": `.*`})
	offsets := &memOffsets{}
	runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 30 })
	stmts := []string{"BEGIN"}
	var want []string
	for id := 1; id <= 15; id++ {
		for _, tb := range []string{"a", "b"} {
			stmts = append(stmts, fmt.Sprintf("UPDATE %s SET status = 'read' WHERE id = %d", tb, id))
			want = append(want, fmt.Sprintf("%s%d", tb, id))
		}
	}
	d.exec(append(stmts, "COMMIT")...)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	task := &Task{}
	if err := task.Start(ctx, connect.SourceTaskContext{Offsets: offsets}, props); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = task.Stop() }()
	var got []string
	largest := 0
	for len(got) < len(want) {
		recs, err := task.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range recs {
			v, ok := r.Value.(map[string]any)
			if !ok {
				continue
			}
			a := v["after"].(map[string]any)
			id := a["id"].(int32)
			tb := strings.TrimPrefix(r.Topic, "db.public.")
			if b, _ := a["body"].(string); !strings.HasSuffix(b, fmt.Sprint(id)) || len(b) < 1<<20 {
				t.Fatalf("%s row %d: body %.40q… of %d chars, want its 1 MiB value", tb, id, b, len(b))
			}
			got, n = append(got, fmt.Sprintf("%s%d", tb, id)), n+1
		}
		largest = max(largest, n)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows in the order %v, want %v", got, want)
	}
	t.Logf("largest poll: %d rows", largest)
	if largest > 9 {
		t.Fatalf("a poll returned %d rows with 1 MiB read back: want at most 9 (8 MiB and the row that crossed it)", largest)
	}
}

// TestToastRereadKeyChange: an update that changes the key is a delete and
// a create, whose values are read back by the new key — and, not read
// back, are Debezium's placeholder.
func TestToastRereadKeyChange(t *testing.T) {
	d := newTestDB(t)
	for _, tb := range []string{"docs", "plain"} {
		d.exec("CREATE TABLE "+tb+" (id int PRIMARY KEY, status text, body text)",
			"ALTER TABLE "+tb+" ALTER COLUMN body SET STORAGE EXTERNAL",
			"INSERT INTO "+tb+" VALUES (1, 'new', "+big("x", 4)+")")
	}
	props := d.props(map[string]string{"sluice.toast.reread.tables": `public\.docs`})
	offsets := &memOffsets{}
	runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 2 })
	d.exec("UPDATE docs SET id = 11, status = 'moved' WHERE id = 1", "UPDATE plain SET id = 11, status = 'moved' WHERE id = 1")
	got := runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 6 })
	if want := "[d 1 tombstone 1 c 11 d 1 tombstone 1 c 11]"; fmt.Sprint(ops(got)) != want {
		t.Fatalf("events %v, want %s", ops(got), want)
	}
	if b, want := after(got[2])["body"], d.text("SELECT body FROM docs WHERE id = 11"); b != want {
		t.Errorf("the create's body %.40q, want the row's %d chars", b, len(want))
	}
	// Without the option, Debezium's placeholder: the old key tuple's
	// other columns are nulls, not the value.
	if b := after(got[5])["body"]; b != "__debezium_unavailable_value" {
		t.Errorf("the create's body, not read back: %.40q, want the placeholder", b)
	}
}

// TestToastRereadPartitions: a partitioned table's values are read back
// whether its partitions' changes are published as their own or as the
// root's (publish_via_partition_root).
func TestToastRereadPartitions(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE parts (id int PRIMARY KEY, status text, body text) PARTITION BY RANGE (id)",
		"CREATE TABLE parts_1 PARTITION OF parts FOR VALUES FROM (0) TO (100)",
		"ALTER TABLE parts_1 ALTER COLUMN body SET STORAGE EXTERNAL",
		"INSERT INTO parts VALUES (1, 'new', "+big("p", 4)+")",
		"CREATE PUBLICATION viaroot FOR TABLE parts WITH (publish_via_partition_root = true)")
	want := d.text("SELECT body FROM parts WHERE id = 1")
	for _, tc := range []struct{ name, topic string }{{"", "db.public.parts_1"}, {"viaroot", "db.public.parts"}} {
		extra := map[string]string{"sluice.toast.reread.tables": `public\.parts.*`}
		if tc.name != "" {
			extra["publication.name"], extra["slot.name"], extra["publication.autocreate.mode"] = tc.name, d.name+"_vr", "disabled"
		}
		props := d.props(extra)
		offsets := &memOffsets{}
		runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 1 })
		d.exec("UPDATE parts SET status = 'read' WHERE id = 1")
		got := runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 1 })
		if b, _ := after(got[0])["body"].(string); got[0].Topic != tc.topic || b != want {
			t.Errorf("%s: body %.40q… (%d chars), want %d chars", got[0].Topic, b, len(b), len(want))
		}
	}
}
