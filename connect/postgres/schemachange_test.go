package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
)

// TestSchemaChangeNotifications: with sluice.schema.change.topic, a column
// added, retyped or dropped while streaming is announced once, on that
// topic, before the first event written with the new columns, which carries
// them; a description sent again unchanged (an ALTER that leaves the columns
// alone) announces nothing. The records go through JsonConverter with
// schemas.
func TestSchemaChangeNotifications(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE items (id int PRIMARY KEY, qty int, secret text)", "INSERT INTO items VALUES (0, 0, 's')")
	props := d.props(map[string]string{"sluice.schema.change.topic": "db.schema-changes",
		"column.exclude.list": `public\.items\.secret`})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	task := &Task{}
	if err := task.Start(ctx, connect.SourceTaskContext{Offsets: &memOffsets{}}, props); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = task.Stop() }()
	conv := &converters.JSON{}
	if err := conv.Configure(map[string]string{"schemas.enable": "true"}, false); err != nil {
		t.Fatal(err)
	}
	type out struct {
		topic      string
		key, value map[string]any
	}
	var got []out
	poll := func(n int) {
		t.Helper()
		for len(got) < n {
			if ctx.Err() != nil {
				t.Fatalf("gave up after %d records: %+v", len(got), got)
			}
			recs, err := task.Poll(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if r.Dropped {
					continue
				}
				o := out{topic: r.Topic}
				for _, kv := range []struct {
					s  *connect.Schema
					v  any
					to *map[string]any
				}{{r.KeySchema, r.Key, &o.key}, {r.ValueSchema, r.Value, &o.value}} {
					b, err := conv.FromConnectData(r.Topic, kv.s, kv.v)
					if err != nil {
						t.Fatalf("%s: %v", r.Topic, err)
					}
					var env map[string]any
					if err := json.Unmarshal(b, &env); err != nil {
						t.Fatalf("%s: %v", b, err)
					}
					*kv.to, _ = env["payload"].(map[string]any)
				}
				got = append(got, o)
			}
		}
	}
	poll(1) // the snapshot
	d.exec("INSERT INTO items VALUES (1, 1, 's')",
		"ALTER TABLE items ALTER COLUMN qty SET STATISTICS 200", "INSERT INTO items VALUES (2, 2, 's')",
		"ALTER TABLE items ADD COLUMN note text", "ALTER TABLE items ALTER COLUMN secret TYPE varchar(10)",
		"INSERT INTO items VALUES (3, 3, 's', 'three')", "INSERT INTO items VALUES (4, 4, 's', 'four')",
		"ALTER TABLE items ALTER COLUMN qty TYPE numeric(12,2)", "INSERT INTO items VALUES (5, 5, 's', 'five')",
		"ALTER TABLE items DROP COLUMN note", "INSERT INTO items VALUES (6, 6, 's')")
	poll(10)
	var seq []string
	for _, o := range got[1:] {
		if o.topic == "db.schema-changes" {
			seq = append(seq, fmt.Sprintf("change added=%v dropped=%v retyped=%v", o.value["added"], o.value["dropped"], o.value["retyped"]))
			continue
		}
		a, _ := o.value["after"].(map[string]any)
		seq = append(seq, fmt.Sprintf("%v %v", a["id"], a["note"]))
	}
	want := []string{"1 <nil>", "2 <nil>", "change added=[note] dropped=[] retyped=[]", "3 three", "4 four",
		"change added=[] dropped=[] retyped=[qty]", "5 five", "change added=[] dropped=[note] retyped=[]", "6 <nil>"}
	if strings.Join(seq, "\n") != strings.Join(want, "\n") {
		t.Fatalf("records:\n%s\nwant:\n%s", strings.Join(seq, "\n"), strings.Join(want, "\n"))
	}
	// The first notification whole: the table, its columns before and
	// after (the excluded column in neither), the position and times.
	n := got[3]
	if fmt.Sprint(n.key) != "map[schema:public table:items]" {
		t.Errorf("key %v", n.key)
	}
	if b, a := fmt.Sprint(n.value["before"]), fmt.Sprint(n.value["after"]); b != "[map[key:true name:id type:integer] map[key:false name:qty type:integer]]" ||
		a != "[map[key:true name:id type:integer] map[key:false name:qty type:integer] map[key:false name:note type:text]]" {
		t.Errorf("before %s, after %s", b, a)
	}
	if lsn, _ := n.value["lsn"].(float64); lsn <= 0 || n.value["txId"] == nil || n.value["commit_ts_ms"].(float64) <= 0 || n.value["ts_ms"].(float64) <= 0 {
		t.Errorf("position and times: %v", n.value)
	}
	if a, _ := got[4].value["after"].(map[string]any); fmt.Sprint(a) != "map[id:3 note:three qty:3]" {
		t.Errorf("the event after it: %v", a)
	}
	if a := fmt.Sprint(got[6].value["after"]); !strings.Contains(a, "type:numeric(12,2)") {
		t.Errorf("the retyped column's type: %s", a)
	}
}

// TestSchemaChangeRestart: a notification carries the position of the
// event before it, so a task stopped right after it reads the change that
// came with the new columns again; the restart reads again, and skips, the
// table's event before the change, whose description is the session's
// baseline: the change is announced again with the event it came with, as
// records are at least once. Once that event is committed, nothing is
// announced again.
func TestSchemaChangeRestart(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE items (id int PRIMARY KEY)", "INSERT INTO items VALUES (0)")
	props := d.props(map[string]string{"sluice.schema.change.topic": "db.schema-changes"})
	offsets := &memOffsets{}
	runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 1 })
	d.exec("INSERT INTO items VALUES (1)", "ALTER TABLE items ADD COLUMN note text", "INSERT INTO items VALUES (2, 'two')")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	task := &Task{}
	if err := task.Start(ctx, connect.SourceTaskContext{Offsets: offsets}, props); err != nil {
		t.Fatal(err)
	}
	var recs []connect.SourceRecord
	for len(recs) < 3 {
		polled, err := task.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, polled...)
	}
	if recs[1].Topic != "db.schema-changes" {
		t.Fatalf("topics %s, %s, %s: want the notification second", recs[0].Topic, recs[1].Topic, recs[2].Topic)
	}
	offsets.commit(recs[:2]) // up to the notification: the insert of row 2 is not committed
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
	got := runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 2 })
	if len(got) != 2 || got[0].Topic != "db.schema-changes" || fmt.Sprint(got[0].Value["added"]) != "[note]" ||
		fmt.Sprint(after(got[1])) != "map[id:2 note:two]" {
		t.Fatalf("after the restart: %+v, want the notification and the insert of row 2 once more", got)
	}
	d.exec("INSERT INTO items VALUES (3, 'three')")
	got = runTask(t, props, offsets, func(s []seen) bool { return len(s) >= 1 })
	if len(got) != 1 || got[0].Topic != "db.public.items" {
		t.Fatalf("then: %+v, want the insert of row 3 alone", got)
	}
}
