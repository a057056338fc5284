package envelope

import (
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/connect"
)

// TestRead: a snapshot read has after only, its snapshot marker, no
// transaction even with metadata on, and the context headers.
func TestRead(t *testing.T) {
	cfg := testConfig()
	cfg.ProvideTransactionMetadata = true
	e := newEmitter(t, cfg)
	tbl := newCustomers(t, e, "id")
	for _, marker := range []Snapshot{SnapshotFirst, SnapshotTrue, SnapshotFirstInDataCollection, SnapshotLastInDataCollection, SnapshotLast} {
		r, err := e.Read(tbl, Source{Commit: committed, Snapshot: marker, LSN: Int64(500), TxID: Int64(9)}, []any{int32(4), nil, int32(0)})
		if err != nil {
			t.Fatal(err)
		}
		p := payload(t, r)
		src := p["source"].(map[string]any)
		if p["op"] != "r" || p["before"] != nil || p["transaction"] != nil || src["snapshot"] != string(marker) ||
			src["sequence"] != `[null,"500"]` || src["txId"] != json.Number("9") {
			t.Errorf("%s: %v", marker, p)
		}
		if got := p["after"]; !reflect.DeepEqual(got, map[string]any{"id": json.Number("4"), "name": nil, "status": json.Number("0")}) {
			t.Errorf("after %v", got)
		}
		if len(r.Headers) != 4 {
			t.Errorf("headers %v", headerKeys(r.Headers))
		}
	}
	// Debezium marks the last record once it knows it is the last.
	r, _ := e.Read(tbl, Source{Commit: committed, Snapshot: SnapshotTrue}, []any{int32(5), "x", int32(1)})
	if err := SetSnapshot(&r, SnapshotLast); err != nil || payload(t, r)["source"].(map[string]any)["snapshot"] != "last" {
		t.Errorf("SetSnapshot: %v", err)
	}
	if _, err := e.Read(tbl, Source{}, []any{int32(1)}); err == nil || !strings.Contains(err.Error(), "a row of 1 values for 3 columns") {
		t.Errorf("short row: %v", err)
	}
}

// TestIncrementalSource: an incremental snapshot's source block has no
// txId, lsn or xmin (sequence stays).
func TestIncrementalSource(t *testing.T) {
	e := newEmitter(t, testConfig())
	tbl := newCustomers(t, e, "id")
	r, err := e.Read(tbl, Source{Commit: committed, Snapshot: SnapshotIncremental, TxID: Int64(1), LSN: Int64(2), Xmin: Int64(3)}, []any{int32(1), nil, int32(0)})
	if err != nil {
		t.Fatal(err)
	}
	src := payload(t, r)["source"].(map[string]any)
	if src["snapshot"] != "incremental" || src["txId"] != nil || src["lsn"] != nil || src["xmin"] != nil || src["sequence"] != `[null,"2"]` {
		t.Errorf("source %v", src)
	}
}

// TestUpdateReplicaIdentity: before is the old tuple pgoutput sent — none
// under DEFAULT (before null), the whole row under FULL, the key columns
// when the key changed — and a changed key splits the update.
func TestUpdateReplicaIdentity(t *testing.T) {
	e := newEmitter(t, testConfig())
	tbl := newCustomers(t, e, "id")
	src := streamSource(800, 9000)
	newRow := []any{int32(1), "Anne", int32(4)}

	// DEFAULT, key unchanged: no old tuple.
	recs, err := e.Update(tbl, src, nil, newRow)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	if p := payload(t, recs[0]); p["op"] != "u" || p["before"] != nil || p["after"] == nil {
		t.Errorf("DEFAULT update: %v", p)
	}
	if got, want := keyJSON(t, recs[0]), strings.Replace(customersKeyJSON, "%d", "1", 1); got != want {
		t.Errorf("key %s", got)
	}

	// FULL: the whole old row.
	recs, _ = e.Update(tbl, src, []any{int32(1), "Ann", int32(3)}, newRow)
	if p := payload(t, recs[0]); len(recs) != 1 || !reflect.DeepEqual(p["before"], map[string]any{"id": json.Number("1"), "name": "Ann", "status": json.Number("3")}) {
		t.Errorf("FULL update: %d records, %v", len(recs), p)
	}

	// skip.messages.without.change drops an update that changed nothing.
	skip := testConfig()
	skip.SkipMessagesWithoutChange = true
	if recs, _ := newEmitter(t, skip).Update(tbl, src, newRow, newRow); len(recs) != 0 {
		t.Errorf("an unchanged update was emitted: %d records", len(recs))
	}
	if recs, _ := newEmitter(t, skip).Update(tbl, src, nil, newRow); len(recs) != 1 {
		t.Errorf("an update without its old row was dropped")
	}
}

// TestPrimaryKeyChange: the delete of the old key (header newkey), its
// tombstone (same key and headers), the create of the new key (header
// oldkey), all with the update's source.
func TestPrimaryKeyChange(t *testing.T) {
	e := newEmitter(t, testConfig())
	tbl := newCustomers(t, e, "id")
	// Under DEFAULT the old tuple holds the key; the other columns are the
	// values package's conversions of null.
	recs, err := e.Update(tbl, streamSource(801, 9100), []any{int32(1), nil, int32(0)}, []any{int32(2), "Anne", int32(4)})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	del, tomb, create := recs[0], recs[1], recs[2]
	if p := payload(t, del); p["op"] != "d" || p["after"] != nil ||
		!reflect.DeepEqual(p["before"], map[string]any{"id": json.Number("1"), "name": nil, "status": json.Number("0")}) {
		t.Errorf("delete %v", p)
	}
	if keyJSON(t, del) != strings.Replace(customersKeyJSON, "%d", "1", 1) || keyJSON(t, tomb) != keyJSON(t, del) {
		t.Errorf("delete key %s, tombstone key %s", keyJSON(t, del), keyJSON(t, tomb))
	}
	if tomb.Value != nil || tomb.ValueSchema != nil || tomb.Topic != del.Topic {
		t.Errorf("tombstone %+v", tomb)
	}
	if p := payload(t, create); p["op"] != "c" || p["before"] != nil || keyJSON(t, create) != strings.Replace(customersKeyJSON, "%d", "2", 1) {
		t.Errorf("create %v", p)
	}
	context := []string{HeaderConnectorLogicalName, HeaderTaskID, HeaderConnectorName, HeaderRunID}
	for _, c := range []struct {
		name string
		r    connect.SourceRecord
		key  string
		text string
	}{{"delete", del, HeaderNewKey, `{"id":2}`}, {"tombstone", tomb, HeaderNewKey, `{"id":2}`}, {"create", create, HeaderOldKey, `{"id":1}`}} {
		if got, want := headerKeys(c.r.Headers), append([]string{c.key}, context...); !reflect.DeepEqual(got, want) {
			t.Errorf("%s headers %v, want %v", c.name, got, want)
			continue
		}
		h := c.r.Headers[0]
		if string(h.Value) != c.text || !h.Typed || h.Schema != tbl.KeySchema {
			t.Errorf("%s %s = %q (typed %v)", c.name, h.Key, h.Value, h.Typed)
		}
	}
	if ds, cs := payload(t, del)["source"], payload(t, create)["source"]; !reflect.DeepEqual(ds, cs) {
		t.Errorf("sources differ: %v, %v", ds, cs)
	}

	// A table without a key cannot change its key: a plain update.
	nokey := newCustomers(t, e)
	recs, _ = e.Update(nokey, streamSource(802, 9200), []any{int32(1), "a", int32(0)}, []any{int32(2), "b", int32(0)})
	if len(recs) != 1 || recs[0].Key != nil || recs[0].KeySchema != nil || payload(t, recs[0])["op"] != "u" {
		t.Errorf("keyless update: %d records", len(recs))
	}
}

// TestDelete: before is the old tuple, a tombstone follows unless
// tombstones.on.delete=false, and a delete without an old tuple emits
// nothing.
func TestDelete(t *testing.T) {
	e := newEmitter(t, testConfig())
	tbl := newCustomers(t, e, "id")
	recs, err := e.Delete(tbl, streamSource(803, 9300), []any{int32(7), nil, int32(0)})
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	if p := payload(t, recs[0]); p["op"] != "d" || p["after"] != nil || p["before"] == nil {
		t.Errorf("delete %v", p)
	}
	if tomb := recs[1]; tomb.Value != nil || keyJSON(t, tomb) != strings.Replace(customersKeyJSON, "%d", "7", 1) || len(tomb.Headers) != 4 {
		t.Errorf("tombstone %+v", tomb)
	}
	if recs, _ := e.Delete(tbl, streamSource(803, 9300), nil); len(recs) != 0 {
		t.Errorf("a delete without an old tuple: %d records", len(recs))
	}
	cfg := testConfig()
	cfg.TombstonesOnDelete = false
	if recs, _ := newEmitter(t, cfg).Delete(tbl, streamSource(803, 9300), []any{int32(7), nil, int32(0)}); len(recs) != 1 {
		t.Errorf("tombstones off: %d records", len(recs))
	}
	// A keyless table's delete and tombstone have a null key.
	recs, _ = e.Delete(newCustomers(t, e), streamSource(804, 9400), []any{int32(7), "x", int32(0)})
	if len(recs) != 2 || recs[0].Key != nil || recs[1].Key != nil || recs[1].KeySchema != nil {
		t.Errorf("keyless delete: %+v", recs)
	}
}

// TestTruncateAndSkippedOperations: truncates are skipped by default; a
// truncate has a null key and no before or after; each skipped op emits
// nothing.
func TestTruncateAndSkippedOperations(t *testing.T) {
	e := newEmitter(t, testConfig())
	tbl := newCustomers(t, e, "id")
	if recs := e.Truncate(tbl, streamSource(805, 9500)); len(recs) != 0 {
		t.Errorf("a truncate was emitted by default")
	}
	cfg := testConfig()
	cfg.SkippedOperations = nil
	recs := newEmitter(t, cfg).Truncate(tbl, streamSource(805, 9500))
	if len(recs) != 1 || recs[0].Key != nil || recs[0].KeySchema != nil || recs[0].Topic != "srv.public.customers" {
		t.Fatalf("truncate: %+v", recs)
	}
	if p := payload(t, recs[0]); p["op"] != "t" || p["before"] != nil || p["after"] != nil || p["source"].(map[string]any)["table"] != "customers" {
		t.Errorf("truncate %v", p)
	}

	cfg.SkippedOperations = []Op{OpCreate, OpUpdate, OpDelete}
	skip := newEmitter(t, cfg)
	row := []any{int32(1), "a", int32(0)}
	ins, _ := skip.Insert(tbl, streamSource(1, 1), row)
	upd, _ := skip.Update(tbl, streamSource(1, 1), nil, row)
	del, _ := skip.Delete(tbl, streamSource(1, 1), row)
	if len(ins)+len(upd)+len(del) != 0 {
		t.Errorf("skipped ops emitted %d, %d, %d records", len(ins), len(upd), len(del))
	}
	// Only the create of a key change survives skipping deletes.
	cfg.SkippedOperations = []Op{OpDelete}
	recs, _ = newEmitter(t, cfg).Update(tbl, streamSource(1, 1), []any{int32(1), nil, int32(0)}, []any{int32(2), nil, int32(0)})
	if len(recs) != 1 || payload(t, recs[0])["op"] != "c" {
		t.Errorf("key change with deletes skipped: %d records", len(recs))
	}
	cfg.SkippedOperations = []Op{OpRead}
	if _, err := New(cfg); err == nil {
		t.Error("skipping reads was accepted")
	}
}

// TestContextHeadersOff: extended.headers.enabled=false leaves events
// without headers, and a key change with its key header only.
func TestContextHeadersOff(t *testing.T) {
	cfg := testConfig()
	cfg.ExtendedHeaders = false
	e := newEmitter(t, cfg)
	tbl := newCustomers(t, e, "id")
	ins, _ := e.Insert(tbl, streamSource(1, 1), []any{int32(1), nil, int32(0)})
	upd, _ := e.Update(tbl, streamSource(1, 1), []any{int32(1), nil, int32(0)}, []any{int32(2), nil, int32(0)})
	if len(ins[0].Headers) != 0 || !reflect.DeepEqual(headerKeys(upd[0].Headers), []string{HeaderNewKey}) ||
		!reflect.DeepEqual(headerKeys(upd[2].Headers), []string{HeaderOldKey}) {
		t.Errorf("headers: %v, %v, %v", headerKeys(ins[0].Headers), headerKeys(upd[0].Headers), headerKeys(upd[2].Headers))
	}
}

// TestTableShapes: key fields in key order with the columns' own schemas,
// every column in the value, and refusals of what cannot be a table.
func TestTableShapes(t *testing.T) {
	e := newEmitter(t, testConfig())
	tbl, err := e.NewTable("public", "customers", customers, []string{"status", "id"})
	if err != nil {
		t.Fatal(err)
	}
	key := `{"type":"struct","fields":[{"type":"int32","optional":false,"default":0,"field":"status"},{"type":"int32","optional":false,"field":"id"}],` +
		`"optional":false,"name":"srv.public.customers.Key"}`
	r, _ := e.Insert(tbl, streamSource(1, 1), []any{int32(3), nil, int32(5)})
	if got := keyJSON(t, r[0]); got != `{"schema":`+key+`,"payload":{"status":5,"id":3}}` {
		t.Errorf("key %s", got)
	}
	if got := jsonOf(t, tbl.EnvelopeSchema, map[string]any{"op": "c", "source": r[0].Value.(map[string]any)["source"]}); !strings.HasPrefix(got, `{"schema":`+customersEnvelopeSchemaJSON) {
		t.Errorf("envelope schema %s", got)
	}
	for _, c := range []struct {
		cols []Column
		key  []string
		err  string
	}{
		{customers, []string{"nope"}, `key column "nope" is not a column`},
		{customers, []string{"id", "id"}, `key column "id" appears twice`},
		{append(customers[:1:1], Column{Name: "id", Schema: idSchema}), nil, `column "id" appears twice`},
		{[]Column{{Name: "id"}}, nil, `column "id" has no schema`},
	} {
		if _, err := e.NewTable("public", "customers", c.cols, c.key); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%v / %v: %v, want %s", c.cols, c.key, err, c.err)
		}
	}
}

// TestRunID: without a run id, each Emitter makes a random UUID, as each
// Debezium task run does.
func TestRunID(t *testing.T) {
	cfg := testConfig()
	cfg.RunID = ""
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a, b := newEmitter(t, cfg).Config().RunID, newEmitter(t, cfg).Config().RunID
	if !uuid.MatchString(a) || !uuid.MatchString(b) || a == b {
		t.Errorf("run ids %q, %q", a, b)
	}
	e := newEmitter(t, cfg)
	recs, _ := e.Insert(newCustomers(t, e, "id"), streamSource(1, 1), []any{int32(1), nil, int32(0)})
	if got := headerMap(recs[0].Headers)[HeaderRunID]; got != e.Config().RunID {
		t.Errorf("runId header %q, run id %q", got, e.Config().RunID)
	}
}

// TestExcludedColumns: an excluded column is out of before and after but,
// as a key column, in the key.
func TestExcludedColumns(t *testing.T) {
	e := newEmitter(t, testConfig())
	cols := []Column{{Name: "id", Schema: idSchema, Excluded: true}, {Name: "name", Schema: nameSchema}, {Name: "status", Schema: statusSchema, Excluded: true}}
	tbl, err := e.NewTable("public", "customers", cols, []string{"id"})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := e.Update(tbl, streamSource(1, 1), []any{int32(1), "a", int32(0)}, []any{int32(1), "b", int32(5)})
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	p := payload(t, recs[0])
	if !reflect.DeepEqual(p["before"], map[string]any{"name": "a"}) || !reflect.DeepEqual(p["after"], map[string]any{"name": "b"}) {
		t.Errorf("before %v, after %v", p["before"], p["after"])
	}
	if got := keyJSON(t, recs[0]); got != strings.Replace(customersKeyJSON, "%d", "1", 1) {
		t.Errorf("key %s", got)
	}
	if len(tbl.ValueSchema.Fields) != 1 || len(tbl.Columns()) != 3 {
		t.Errorf("value fields %v", tbl.ValueSchema.Fields)
	}
}

// TestKeyEquality: keys are compared as Java's Struct.equals compares
// them — a NaN key is unchanged, a -0.0 key changed from 0.0.
func TestKeyEquality(t *testing.T) {
	e := newEmitter(t, testConfig())
	f8 := &connect.Schema{Type: connect.SchemaTypeFloat64}
	tbl, err := e.NewTable("public", "floats", []Column{{Name: "k", Schema: f8}, {Name: "v", Schema: nameSchema}}, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		old, new float64
		records  int
	}{{math.NaN(), math.NaN(), 1}, {1.5, 1.5, 1}, {0, math.Copysign(0, -1), 3}, {1, 2, 3}} {
		recs, err := e.Update(tbl, streamSource(1, 1), []any{c.old, "a"}, []any{c.new, "b"})
		if err != nil || len(recs) != c.records {
			t.Errorf("key %v → %v: %d records, %v", c.old, c.new, len(recs), err)
		}
	}
	if !javaEqual(map[string]any{"a": []any{float32(math.NaN())}}, map[string]any{"a": []any{float32(math.NaN())}}) ||
		javaEqual(map[string]any{"a": int32(1)}, map[string]any{"a": int64(1)}) || javaEqual([]any{1}, []any{1, 2}) {
		t.Error("javaEqual on nested values")
	}
}
