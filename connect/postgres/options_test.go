package postgres

import (
	"strings"
	"testing"
)

// TestSluiceOptions: Sluice's own keys parse, and max.queue.size must
// exceed max.batch.size, as Debezium requires.
func TestSluiceOptions(t *testing.T) {
	p := baseProps()
	p["sluice.toast.reread.tables"] = `public\.docs,inventory\..*`
	p["sluice.schema.change.topic"] = " app.schema-changes "
	c, err := ParseConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.SchemaTopic != "app.schema-changes" || c.MaxQueue != 8192 || c.FetchSize != 10240 {
		t.Errorf("schema topic %q, queue %d, fetch size %d", c.SchemaTopic, c.MaxQueue, c.FetchSize)
	}
	for table, want := range map[string]bool{"public.docs": true, "PUBLIC.DOCS": true, "public.docs2": false, "inventory.orders": true, "other.docs": false} {
		schema, name, _ := strings.Cut(table, ".")
		if got := c.rereads(&Table{Schema: schema, Name: name}); got != want {
			t.Errorf("%s read back: %v, want %v", table, got, want)
		}
	}
	if c, _ := ParseConfig(baseProps()); len(c.ToastReread) != 0 || c.SchemaTopic != "" {
		t.Errorf("by default: read back %v, schema topic %q", c.ToastReread, c.SchemaTopic)
	}
	for _, tc := range []struct{ queue, batch, want string }{
		{"2048", "", `max.queue.size: 2048 must be larger than max.batch.size (2048), as Debezium requires`},
		{"100", "200", `max.queue.size: 100 must be larger than max.batch.size (200)`},
		{"", "9000", `max.queue.size: 8192 must be larger than max.batch.size (9000)`},
		{"x", "", `max.queue.size: "x" is not a whole number`},
	} {
		p := baseProps()
		p["max.queue.size"], p["max.batch.size"] = tc.queue, tc.batch
		errs := configErrors(p)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("queue %q, batch %q: %v, want %q", tc.queue, tc.batch, errs, tc.want)
		}
	}
	for key, value := range map[string]string{"sluice.toast.reread.tables": `public\.(docs`, "sluice.schema.change.topic": "schema changes"} {
		p := baseProps()
		p[key] = value
		if errs := configErrors(p); len(errs) != 1 || errs[0].Key != key {
			t.Errorf("%s=%s: %v, want an error on the key", key, value, errs)
		}
	}
	p = baseProps()
	p["max.queue.size"], p["max.batch.size"] = "10", "5"
	if c, err := ParseConfig(p); err != nil || c.MaxQueue != 10 {
		t.Errorf("a queue of 10 for batches of 5: %v %v", c.MaxQueue, err)
	}
}

// TestSnapshotFetchSize: the snapshot reads its chunks snapshot.fetch.size
// rows a round trip, and every row arrives whether the table holds a
// multiple of it or not.
func TestSnapshotFetchSize(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE a (id int PRIMARY KEY)", "INSERT INTO a SELECT generate_series(1, 49)",
		"CREATE TABLE b (id int PRIMARY KEY)", "INSERT INTO b SELECT generate_series(1, 50)")
	got := runTask(t, d.props(map[string]string{"snapshot.fetch.size": "7"}), &memOffsets{}, func(s []seen) bool { return len(s) >= 99 })
	ids := map[string]map[float64]bool{}
	for _, r := range got {
		if ids[r.Topic] == nil {
			ids[r.Topic] = map[float64]bool{}
		}
		ids[r.Topic][r.Key["id"].(float64)] = true
	}
	if len(ids["db.public.a"]) != 49 || len(ids["db.public.b"]) != 50 {
		t.Fatalf("%d rows of a, %d of b: want 49 and 50", len(ids["db.public.a"]), len(ids["db.public.b"]))
	}
}
