package cdccompare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// change is a change record as Debezium writes it through JsonConverter
// with schemas (schema parts shortened), for prefix "run7_a" on database
// "run7".
const change = `{"schema":{"type":"struct","name":"run7_a.cdc.items.Envelope"},"payload":{` +
	`"before":null,"after":{"id":1,"version":"v9","lsn":42,"big":9223372036854775807,"d":1.0E10,"x":"<a & b>"},` +
	`"source":{"version":"3.6.1.Final","connector":"postgresql","name":"run7_a","ts_ms":1765000000123,` +
	`"ts_us":1765000000123000,"ts_ns":1765000000123000000,"snapshot":"false","db":"run7",` +
	`"sequence":"[\"24023928\",\"24023984\"]","schema":"cdc","table":"items","txId":771,"lsn":24023984,"xmin":null},` +
	`"transaction":{"id":"771:24023984","total_order":1,"data_collection_order":1},` +
	`"op":"c","ts_ms":1765000000200,"ts_us":1765000000200111,"ts_ns":1765000000200111222}}`

const changeKey = `{"schema":{"type":"struct","name":"run7_a.cdc.items.Key"},"payload":{"id":1}}`

func normalizeOne(t *testing.T, r Record) Record {
	t.Helper()
	out, err := Normalizer{Prefix: "run7_a", Database: "run7"}.Normalize([]Record{r})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 {
		t.Fatalf("%d records, want 1", len(out))
	}
	return out[0]
}

// TestNormalizeChange: the run's names become the golden ones (the prefix
// whole, though the database's name is part of it), the volatile source and
// envelope fields are masked keeping their JSON type (null stays null),
// and the row's own columns named like masked fields, 64-bit integers and
// a double's spelling are kept exactly.
func TestNormalizeChange(t *testing.T) {
	got := normalizeOne(t, Record{Topic: "run7_a.cdc.items", Key: []byte(changeKey), Value: []byte(change),
		Headers: []Header{{"__debezium.context.connectorLogicalName", "run7_a"}, {"__debezium.context.runId", "01a2-77"}}})
	if got.Topic != "golden.cdc.items" {
		t.Errorf("topic %q, want golden.cdc.items", got.Topic)
	}
	if want := `{"payload":{"id":1},"schema":{"name":"golden.cdc.items.Key","type":"struct"}}`; string(got.Key) != want {
		t.Errorf("key\n%s, want\n%s", got.Key, want)
	}
	want := `{"payload":{` +
		`"after":{"big":9223372036854775807,"d":1.0E10,"id":1,"lsn":42,"version":"v9","x":"<a & b>"},"before":null,"op":"c",` +
		`"source":{"connector":"postgresql","db":"golden","lsn":0,"name":"golden","schema":"cdc","sequence":"","snapshot":"false",` +
		`"table":"items","ts_ms":0,"ts_ns":0,"ts_us":0,"txId":0,"version":"","xmin":null},` +
		`"transaction":{"data_collection_order":1,"id":"","total_order":1},"ts_ms":0,"ts_ns":0,"ts_us":0},` +
		`"schema":{"name":"golden.cdc.items.Envelope","type":"struct"}}`
	if string(got.Value) != want {
		t.Errorf("value\n%s, want\n%s", got.Value, want)
	}
	wantHeaders := []Header{{"__debezium.context.connectorLogicalName", "golden"}, {"__debezium.context.runId", ""}}
	if len(got.Headers) != 2 || got.Headers[0] != wantHeaders[0] || got.Headers[1] != wantHeaders[1] {
		t.Errorf("headers %v, want %v", got.Headers, wantHeaders)
	}
}

// TestNormalizeTopicKinds: the transaction topic's ids are masked in key
// and value, its data collections sorted with Java's identity hash masked;
// a table's key column "id" is not; heartbeats in a row collapse to one.
func TestNormalizeTopicKinds(t *testing.T) {
	txn := normalizeOne(t, Record{Topic: "run7_a.transaction",
		Key: []byte(`{"payload":{"id":"771:24023984"}}`),
		Value: []byte(`{"payload":{"status":"END","id":"771:24023984","event_count":3,"ts_ms":1765,"data_collections":[` +
			`{"data_collection":"cdc.b","event_count":1},` +
			`{"data_collection":"io.debezium.connector.postgresql.LogicalDecodingMessageMonitor$LogicalDecodingMessageId@1b6d3586","event_count":1},` +
			`{"data_collection":"cdc.a","event_count":1}]}}`)})
	if string(txn.Key) != `{"payload":{"id":""}}` {
		t.Errorf("transaction key %s: want the id masked", txn.Key)
	}
	want := `{"payload":{"data_collections":[{"data_collection":"cdc.a","event_count":1},{"data_collection":"cdc.b","event_count":1},` +
		`{"data_collection":"io.debezium.connector.postgresql.LogicalDecodingMessageMonitor$LogicalDecodingMessageId@0","event_count":1}],` +
		`"event_count":3,"id":"","status":"END","ts_ms":0}}`
	if string(txn.Value) != want {
		t.Errorf("transaction value\n%s, want\n%s", txn.Value, want)
	}

	beat := func(ts string) Record {
		return Record{Topic: "__debezium-heartbeat.run7_a", Key: []byte(`{"payload":{"serverName":"run7_a"}}`),
			Value: []byte(`{"payload":{"ts_ms":` + ts + `}}`)}
	}
	row := Record{Topic: "run7_a.cdc.items", Key: []byte(`{"payload":{"id":7}}`), Value: nil}
	out, err := Normalizer{Prefix: "run7_a", Database: "run7"}.Normalize([]Record{beat("1"), beat("2"), row, beat("3")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Topic != "__debezium-heartbeat.golden" || string(out[1].Key) != `{"payload":{"id":7}}` || string(out[1].Value) != "null" {
		t.Errorf("normalized %+v: want one heartbeat, then the tombstone with its key intact", out)
	}
}

// TestMaskKeepsType: each JSON type has a placeholder of its own type.
func TestMaskKeepsType(t *testing.T) {
	for in, want := range map[string]string{`12`: `0`, `"x"`: `""`, `true`: `false`, `null`: `null`, `[1]`: `[]`, `{"a":1}`: `{}`} {
		v, err := decodeJSON([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeJSON(Mask(v))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("Mask(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestDiff: the first difference of each topic is named by its path down
// to the value; a type change, a missing or extra field, a number spelled
// otherwise, a count difference and headers are each reported; identical
// runs have none.
func TestDiff(t *testing.T) {
	rec := func(topic, value string) Record {
		return Record{Topic: topic, Key: []byte(`{"payload":{"id":1}}`), Value: []byte(value)}
	}
	want := []Record{
		rec("golden.cdc.a", `{"payload":{"after":{"id":1,"n":1.5,"s":"x"}}}`),
		rec("golden.cdc.a", `{"payload":{"after":{"id":1,"n":2.5,"s":"y"}}}`),
		rec("golden.cdc.b", `{"payload":{"after":{"arr":[1,2]}}}`),
		rec("golden.cdc.c", `{"payload":{"d":1.0E10}}`),
	}
	if d := Diff(want, want); len(d) != 0 {
		t.Fatalf("identical runs: %v", d)
	}
	got := []Record{
		rec("golden.cdc.a", `{"payload":{"after":{"id":1,"n":1.5,"s":"x"}}}`),
		rec("golden.cdc.a", `{"payload":{"after":{"id":1,"n":"2.5","s":"y"}}}`),
		rec("golden.cdc.b", `{"payload":{"after":{"arr":[1,2,3]}}}`),
		rec("golden.cdc.c", `{"payload":{"d":1e10}}`),
		rec("golden.cdc.c", `{"payload":{"d":1e10}}`),
		rec("golden.cdc.d", `{"payload":{}}`),
	}
	var lines []string
	for _, d := range Diff(want, got) {
		lines = append(lines, d.String())
	}
	wantLines := []string{
		`golden.cdc.a[1].value.payload.after.n: want 2.5, got "2.5" (string, want number)`,
		`golden.cdc.b[0].value.payload.after.arr: want [1,2], got [1,2,3] (3 elements, want 2)`,
		`golden.cdc.c[0].value.payload.d: want 1.0E10, got 1e10 (same number, spelled differently; the topic has 2 records, want 1)`,
		`golden.cdc.d: want 0 records, got 1 records (first extra: key {"payload":{"id":1}} value {"payload":{}})`,
	}
	if strings.Join(lines, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
	}

	missingField := Diff([]Record{rec("t", `{"payload":{"a":1,"b":null}}`)}, []Record{rec("t", `{"payload":{"a":1}}`)})
	if len(missingField) != 1 || missingField[0].String() != `t[0].value.payload.b: want null, got (missing)` {
		t.Errorf("a field left out: %v", missingField)
	}
	headers := Diff([]Record{{Topic: "t", Headers: []Header{{"k", "v"}}}}, []Record{{Topic: "t"}})
	if len(headers) != 1 || headers[0].Path != "t[0].headers" {
		t.Errorf("a header left out: %v", headers)
	}
}

// TestGoldenRoundTrip: WriteDir writes a file per topic that ReadDir reads
// back the same, in file name order, and removes a topic's file that is no
// longer written.
func TestGoldenRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "stale.jsonl"), []byte(`{"topic":"golden.stale","key":null,"value":null,"headers":[]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	recs := []Record{
		{Topic: "golden.transaction", Key: []byte(`{"payload":{"id":""}}`), Value: []byte(`{"payload":{"status":"BEGIN"}}`)},
		{Topic: "golden.cdc.items", Key: []byte(`{"payload":{"id":1}}`), Value: nil, Headers: []Header{{"h", "é"}}},
		{Topic: "__debezium-heartbeat.golden", Key: []byte(`{"payload":{"serverName":"golden"}}`), Value: []byte(`{"payload":{"ts_ms":0}}`)},
	}
	if err := WriteDir(dir, recs); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	if strings.Join(names, " ") != "__debezium-heartbeat.jsonl cdc.items.jsonl transaction.jsonl" {
		t.Errorf("files %v", names)
	}
	back, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(recs, back); len(d) != 0 || len(back) != 3 || back[0].Topic != "__debezium-heartbeat.golden" {
		t.Errorf("read back %+v: %v", back, d)
	}
	if _, err := ReadDir(t.TempDir()); err == nil {
		t.Error("ReadDir of an empty directory: no error")
	}
}
