package envelope

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/connect"
)

const (
	txKeySchemaJSON = `{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"}],` +
		`"optional":false,"name":"io.debezium.connector.common.TransactionMetadataKey","version":1}`
	txValueSchemaJSON = `{"type":"struct","fields":[` +
		`{"type":"string","optional":false,"field":"status"},` +
		`{"type":"string","optional":false,"field":"id"},` +
		`{"type":"int64","optional":true,"field":"event_count"},` +
		`{"type":"array","items":{"type":"struct","fields":[{"type":"string","optional":false,"field":"data_collection"},` +
		`{"type":"int64","optional":false,"field":"event_count"}],"optional":true,"name":"event.collection","version":1},"optional":true,"field":"data_collections"},` +
		`{"type":"int64","optional":false,"field":"ts_ms"}],` +
		`"optional":false,"name":"io.debezium.connector.common.TransactionMetadataValue","version":1}`
)

func txConfig() Config {
	cfg := testConfig()
	cfg.ProvideTransactionMetadata = true
	return cfg
}

// table is a one-column table schema.name keyed by its column.
func table(t *testing.T, e *Emitter, schema, name string) *Table {
	t.Helper()
	tbl, err := e.NewTable(schema, name, []Column{{Name: "id", Schema: idSchema}}, []string{"id"})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func block(t *testing.T, r connect.SourceRecord) any { return payload(t, r)["transaction"] }

func txBlock(id string, total, order int) map[string]any {
	return map[string]any{"id": id, "total_order": json.Number(strconv.Itoa(total)), "data_collection_order": json.Number(strconv.Itoa(order))}
}

// TestTransactionMetadata: BEGIN, the events' blocks, END with its counts,
// each id "<xid>:<LSN last seen>", written as Debezium writes them.
func TestTransactionMetadata(t *testing.T) {
	e := newEmitter(t, txConfig())
	a, b := table(t, e, "s", "a"), table(t, e, "s", "b")
	begin := e.Begin(571, 1000, committed)
	if len(begin) != 1 {
		t.Fatalf("BEGIN: %d records", len(begin))
	}
	if r := begin[0]; r.Topic != "srv.transaction" || len(r.Headers) != 0 ||
		keyJSON(t, r) != `{"schema":`+txKeySchemaJSON+`,"payload":{"id":"571:1000"}}` ||
		valueJSON(t, r) != `{"schema":`+txValueSchemaJSON+`,"payload":{"status":"BEGIN","id":"571:1000","event_count":null,"data_collections":null,"ts_ms":1796590799987}}` {
		t.Errorf("BEGIN %s %s %s", r.Topic, keyJSON(t, r), valueJSON(t, r))
	}
	var events []connect.SourceRecord
	for i, step := range []struct {
		tbl *Table
		lsn int64
	}{{a, 1010}, {b, 1020}, {a, 1030}} {
		recs, err := e.Insert(step.tbl, streamSource(571, step.lsn), []any{int32(i)})
		if err != nil || len(recs) != 1 {
			t.Fatalf("event %d: %d records, %v", i, len(recs), err)
		}
		events = append(events, recs[0])
	}
	for i, want := range []map[string]any{txBlock("571:1010", 1, 1), txBlock("571:1020", 2, 1), txBlock("571:1030", 3, 2)} {
		if got := block(t, events[i]); !reflect.DeepEqual(got, want) {
			t.Errorf("event %d block %v, want %v", i, got, want)
		}
	}
	end := e.Commit(1040, committed)
	if len(end) != 1 {
		t.Fatalf("END: %d records", len(end))
	}
	// "s.b" falls in HashMap bucket 6 and "s.a" in bucket 7 (String.hashCode
	// 112039 and 112038, spread and masked by 15): b is listed first.
	if r := end[0]; keyJSON(t, r) != `{"schema":`+txKeySchemaJSON+`,"payload":{"id":"571:1040"}}` ||
		valueJSON(t, r) != `{"schema":`+txValueSchemaJSON+`,"payload":{"status":"END","id":"571:1040","event_count":3,`+
			`"data_collections":[{"data_collection":"s.b","event_count":1},{"data_collection":"s.a","event_count":2}],"ts_ms":1796590799987}}` {
		t.Errorf("END %s", valueJSON(t, r))
	}
	// Between transactions: nothing to end, no offset entries.
	if recs := e.Commit(1050, committed); len(recs) != 0 {
		t.Errorf("a second COMMIT: %d records", len(recs))
	}
	offset := map[string]any{}
	if e.TransactionOffset(offset); len(offset) != 0 {
		t.Errorf("offset between transactions: %v", offset)
	}

	// Off: no BEGIN, END or block.
	off := newEmitter(t, testConfig())
	recs, _ := off.Insert(table(t, off, "s", "a"), streamSource(9, 9), []any{int32(1)})
	if len(off.Begin(9, 9, committed)) != 0 || len(off.Commit(9, committed)) != 0 || len(recs) != 1 || block(t, recs[0]) != nil {
		t.Errorf("metadata off: %d records, block %v", len(recs), block(t, recs[0]))
	}
}

func statuses(t *testing.T, recs []connect.SourceRecord) string {
	var s []string
	for _, r := range recs {
		if r.Topic == "srv.transaction" {
			s = append(s, r.Value.(map[string]any)["status"].(string)+" "+r.Key.(map[string]any)["id"].(string))
		} else {
			s = append(s, r.Topic)
		}
	}
	return strings.Join(s, ", ")
}

// TestImplicitTransactionBoundaries: an event of a transaction whose BEGIN
// was not seen begins it, an event of another transaction ends the one in
// progress, and an event without a transaction id ends it too — each
// boundary taking the event's LSN and commit time.
func TestImplicitTransactionBoundaries(t *testing.T) {
	e := newEmitter(t, txConfig())
	a := table(t, e, "s", "a")
	var out []connect.SourceRecord
	for _, step := range []Source{streamSource(5, 100), streamSource(5, 110), streamSource(6, 200)} {
		recs, err := e.Insert(a, step, []any{int32(1)})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, recs...)
	}
	out = append(out, e.Message(Source{Commit: committed, LSN: Int64(300)}, Message{Prefix: "p", Content: []byte("x")})...)
	want := "BEGIN 5:100, srv.s.a, srv.s.a, END 5:200, BEGIN 6:200, srv.s.a, END 6:300, srv.message"
	if got := statuses(t, out); got != want {
		t.Errorf("records %s\nwant    %s", got, want)
	}
	if got := block(t, out[5]); !reflect.DeepEqual(got, txBlock("6:200", 1, 1)) {
		t.Errorf("first event of 6: %v", got)
	}
	if end := payload(t, out[3]); end["event_count"] != json.Number("2") || end["ts_ms"] != json.Number("1796590799987") {
		t.Errorf("END of 5: %v", end)
	}
	if block(t, out[7]) != nil {
		t.Errorf("a non-transactional message has a transaction block")
	}
}

// TestTransactionRestore: the transaction in progress goes to the offset
// and back; its replayed BEGIN emits nothing and its counts go on.
func TestTransactionRestore(t *testing.T) {
	e := newEmitter(t, txConfig())
	a, b := table(t, e, "s", "a"), table(t, e, "s", "b")
	e.Begin(42, 10, committed)
	for i, step := range []struct {
		tbl *Table
		lsn int64
	}{{a, 11}, {b, 12}, {a, 13}} {
		if _, err := e.Insert(step.tbl, streamSource(42, step.lsn), []any{int32(i)}); err != nil {
			t.Fatal(err)
		}
	}
	offset := map[string]any{"lsn": int64(13)}
	e.TransactionOffset(offset)
	want := map[string]any{"lsn": int64(13), "transaction_id": "42",
		"transaction_data_collection_order_s.a": int64(2), "transaction_data_collection_order_s.b": int64(1)}
	if !reflect.DeepEqual(offset, want) {
		t.Fatalf("offset %v", offset)
	}
	// As the offset store hands it back: numbers as JSON gives them.
	stored, _ := json.Marshal(offset)
	var read map[string]any
	if err := json.Unmarshal(stored, &read); err != nil {
		t.Fatal(err)
	}

	r := newEmitter(t, txConfig())
	if err := r.RestoreTransaction(read); err != nil {
		t.Fatal(err)
	}
	b = table(t, r, "s", "b")
	if recs := r.Begin(42, 10, committed); len(recs) != 0 {
		t.Errorf("the replayed BEGIN emitted %s", statuses(t, recs))
	}
	recs, _ := r.Insert(b, streamSource(42, 14), []any{int32(4)})
	if got := block(t, recs[0]); !reflect.DeepEqual(got, txBlock("42:14", 4, 2)) {
		t.Errorf("block after restore %v", got)
	}
	if end := payload(t, r.Commit(15, committed)[0]); end["event_count"] != json.Number("4") {
		t.Errorf("END after restore %v", end)
	}
	if err := r.RestoreTransaction(map[string]any{"transaction_id": "1", "transaction_data_collection_order_s.a": "two"}); err == nil {
		t.Error("a count that is not a number was restored")
	}
	// Another transaction's BEGIN forgets the restored one without END.
	if err := r.RestoreTransaction(read); err != nil {
		t.Fatal(err)
	}
	if recs := r.Begin(43, 20, committed); statuses(t, recs) != "BEGIN 43:20" {
		t.Errorf("BEGIN of another transaction: %s", statuses(t, recs))
	}
}

// TestDataCollectionsOrder: END lists collections as Debezium's HashMap
// iterates them, and that map keeps the table it grew to across
// transactions — twelve tables list differently after a transaction of
// thirteen (the orders are Java 17's, see javahash's tests).
func TestDataCollectionsOrder(t *testing.T) {
	e := newEmitter(t, txConfig())
	tables := make([]*Table, 13)
	for i := range tables {
		tables[i] = table(t, e, "", "f"+strconv.Itoa(i))
	}
	run := func(xid int64, n int) string {
		e.Begin(xid, 1, committed)
		for _, tbl := range tables[:n] {
			if _, err := e.Insert(tbl, streamSource(xid, 2), []any{int32(1)}); err != nil {
				t.Fatal(err)
			}
		}
		var names []string
		for _, c := range e.Commit(3, committed)[0].Value.(map[string]any)["data_collections"].([]any) {
			names = append(names, strings.TrimPrefix(c.(map[string]any)["data_collection"].(string), "f"))
		}
		return strings.Join(names, ",")
	}
	if got := run(1, 12); got != "6,7,8,9,10,11,0,1,2,3,4,5" {
		t.Errorf("12 tables in a fresh map: %s", got)
	}
	if got := run(2, 13); got != "10,12,11,0,1,2,3,4,5,6,7,8,9" {
		t.Errorf("13 tables: %s", got)
	}
	if got := run(3, 12); got != "10,11,0,1,2,3,4,5,6,7,8,9" {
		t.Errorf("12 tables after 13: %s", got)
	}
}

// TestMessageInTransaction: a transactional message is counted as a data
// collection of its own, named after a Java object's identity hash.
func TestMessageInTransaction(t *testing.T) {
	e := newEmitter(t, txConfig())
	e.Begin(77, 10, committed)
	var recs []connect.SourceRecord
	for lsn := int64(11); lsn <= 12; lsn++ {
		recs = append(recs, e.Message(streamSource(77, lsn), Message{Prefix: "audit", Content: []byte("x"), Transactional: true})...)
	}
	if len(recs) != 2 || !reflect.DeepEqual(block(t, recs[0]), txBlock("77:11", 1, 1)) || !reflect.DeepEqual(block(t, recs[1]), txBlock("77:12", 2, 1)) {
		t.Fatalf("messages %s, blocks %v %v", statuses(t, recs), block(t, recs[0]), block(t, recs[1]))
	}
	cols := e.Commit(13, committed)[0].Value.(map[string]any)["data_collections"].([]any)
	if len(cols) != 2 {
		t.Fatalf("data_collections %v", cols)
	}
	for _, c := range cols {
		name := c.(map[string]any)["data_collection"].(string)
		hash, ok := strings.CutPrefix(name, "io.debezium.connector.postgresql.LogicalDecodingMessageMonitor$LogicalDecodingMessageId@")
		if n, err := strconv.ParseUint(hash, 16, 32); !ok || err != nil || n == 0 || n >= 1<<31 || c.(map[string]any)["event_count"] != int64(1) {
			t.Errorf("collection %v", c)
		}
	}
}
