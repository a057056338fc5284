package envelope

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
)

// The schemas of a table public.customers (id int4 primary key, name text,
// status int4 NOT NULL DEFAULT 0) as the values package gives them.
var (
	idSchema     = &connect.Schema{Type: connect.SchemaTypeInt32}
	nameSchema   = &connect.Schema{Type: connect.SchemaTypeString, Optional: true}
	statusSchema = &connect.Schema{Type: connect.SchemaTypeInt32, Default: int32(0)}
	customers    = []Column{{Name: "id", Schema: idSchema}, {Name: "name", Schema: nameSchema}, {Name: "status", Schema: statusSchema}}
)

// Debezium's JSON text of the shared schemas, as JsonConverter writes them.
const (
	sourceSchemaJSON = `{"type":"struct","fields":[` +
		`{"type":"string","optional":false,"field":"version"},` +
		`{"type":"string","optional":false,"field":"connector"},` +
		`{"type":"string","optional":false,"field":"name"},` +
		`{"type":"int64","optional":false,"field":"ts_ms"},` +
		`{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},"default":"false","field":"snapshot"},` +
		`{"type":"string","optional":false,"field":"db"},` +
		`{"type":"string","optional":true,"field":"sequence"},` +
		`{"type":"int64","optional":true,"field":"ts_us"},` +
		`{"type":"int64","optional":true,"field":"ts_ns"},` +
		`{"type":"string","optional":false,"field":"schema"},` +
		`{"type":"string","optional":false,"field":"table"},` +
		`{"type":"int64","optional":true,"field":"txId"},` +
		`{"type":"int64","optional":true,"field":"lsn"},` +
		`{"type":"int64","optional":true,"field":"xmin"},` +
		`{"type":"string","optional":true,"field":"origin"},` +
		`{"type":"int64","optional":true,"field":"origin_lsn"}],` +
		`"optional":false,"name":"io.debezium.connector.postgresql.Source","version":1,"field":"source"}`
	txBlockSchemaJSON = `{"type":"struct","fields":[` +
		`{"type":"string","optional":false,"field":"id"},` +
		`{"type":"int64","optional":false,"field":"total_order"},` +
		`{"type":"int64","optional":false,"field":"data_collection_order"}],` +
		`"optional":true,"name":"event.block","version":1,"field":"transaction"}`
	customersRowFieldsJSON = `"fields":[{"type":"int32","optional":false,"field":"id"},` +
		`{"type":"string","optional":true,"field":"name"},` +
		`{"type":"int32","optional":false,"default":0,"field":"status"}]`
	customersEnvelopeSchemaJSON = `{"type":"struct","fields":[` +
		`{"type":"struct",` + customersRowFieldsJSON + `,"optional":true,"name":"srv.public.customers.Value","field":"before"},` +
		`{"type":"struct",` + customersRowFieldsJSON + `,"optional":true,"name":"srv.public.customers.Value","field":"after"},` +
		sourceSchemaJSON + `,` + txBlockSchemaJSON + `,` +
		`{"type":"string","optional":false,"field":"op"},` +
		`{"type":"int64","optional":true,"field":"ts_ms"},` +
		`{"type":"int64","optional":true,"field":"ts_us"},` +
		`{"type":"int64","optional":true,"field":"ts_ns"}],` +
		`"optional":false,"name":"srv.public.customers.Envelope","version":2}`
	customersKeyJSON = `{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],` +
		`"optional":false,"name":"srv.public.customers.Key"},"payload":{"id":%d}}`
)

// processed is the test clock: the processing time of every event.
var processed = time.Date(2026, 12, 6, 21, 0, 0, 123456789, time.UTC)

// committed is a commit time with PostgreSQL's microseconds.
var committed = time.Date(2026, 12, 6, 20, 59, 59, 987654000, time.UTC)

func testConfig() Config {
	cfg := DefaultConfig("srv")
	cfg.Database = "shop"
	cfg.ConnectorVersion = "3.6.1.Final"
	cfg.RunID = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
	cfg.Now = func() time.Time { return processed }
	return cfg
}

func newEmitter(t *testing.T, cfg Config) *Emitter {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func newCustomers(t *testing.T, e *Emitter, key ...string) *Table {
	t.Helper()
	tbl, err := e.NewTable("public", "customers", customers, key)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// jsonOf is what JsonConverter (schemas.enable=true) writes for a schema and
// value; "" for a null.
func jsonOf(t *testing.T, schema *connect.Schema, value any) string {
	t.Helper()
	c := &converters.JSON{}
	if err := c.Configure(map[string]string{}, false); err != nil {
		t.Fatal(err)
	}
	b, err := c.FromConnectData("topic", schema, value)
	if err != nil {
		t.Fatalf("JsonConverter: %v", err)
	}
	return string(b)
}

func keyJSON(t *testing.T, r connect.SourceRecord) string   { return jsonOf(t, r.KeySchema, r.Key) }
func valueJSON(t *testing.T, r connect.SourceRecord) string { return jsonOf(t, r.ValueSchema, r.Value) }

// payload is the payload of a record's value JSON, parsed.
func payload(t *testing.T, r connect.SourceRecord) map[string]any {
	t.Helper()
	var doc struct{ Payload map[string]any }
	d := json.NewDecoder(strings.NewReader(valueJSON(t, r)))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc.Payload
}

func headerMap(hs []connect.Header) map[string]string {
	m := map[string]string{}
	for _, h := range hs {
		m[h.Key] = string(h.Value)
	}
	return m
}

func headerKeys(hs []connect.Header) []string {
	var keys []string
	for _, h := range hs {
		keys = append(keys, h.Key)
	}
	return keys
}

func streamSource(txID, lsn int64) Source {
	return Source{Commit: committed, TxID: Int64(txID), LSN: Int64(lsn), LastCommitLSN: Int64(lsn - 100)}
}

// TestInsert checks a whole create event, key, value and headers, against
// the JSON Debezium writes for it.
func TestInsert(t *testing.T) {
	e := newEmitter(t, testConfig())
	tbl := newCustomers(t, e, "id")
	recs, err := e.Insert(tbl, streamSource(767, 24023128), []any{int32(1), "Anne", int32(3)})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.Topic != "srv.public.customers" || r.KafkaPartition != nil || !r.Timestamp.IsZero() {
		t.Errorf("topic %s, partition %v, timestamp %v", r.Topic, r.KafkaPartition, r.Timestamp)
	}
	if got, want := keyJSON(t, r), strings.Replace(customersKeyJSON, "%d", "1", 1); got != want {
		t.Errorf("key\n got %s\nwant %s", got, want)
	}
	want := `{"schema":` + customersEnvelopeSchemaJSON + `,"payload":{` +
		`"before":null,` +
		`"after":{"id":1,"name":"Anne","status":3},` +
		`"source":{"version":"3.6.1.Final","connector":"postgresql","name":"srv","ts_ms":1796590799987,"snapshot":"false","db":"shop",` +
		`"sequence":"[\"24023028\",\"24023128\"]","ts_us":1796590799987654,"ts_ns":1796590799987654000,"schema":"public","table":"customers",` +
		`"txId":767,"lsn":24023128,"xmin":null,"origin":null,"origin_lsn":null},` +
		`"transaction":null,"op":"c","ts_ms":1796590800123,"ts_us":1796590800123456,"ts_ns":1796590800123456789}}`
	if got := valueJSON(t, r); got != want {
		t.Errorf("value\n got %s\nwant %s", got, want)
	}
	wantHeaders := map[string]string{
		"__debezium.context.connectorLogicalName": "srv",
		"__debezium.context.taskId":               "0",
		"__debezium.context.connectorName":        "postgresql",
		"__debezium.context.runId":                "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
	}
	if got := headerMap(r.Headers); len(r.Headers) != 4 || !equalMaps(got, wantHeaders) {
		t.Errorf("headers %v", got)
	}
	for _, h := range r.Headers {
		if !h.Typed || h.Schema.Type != connect.SchemaTypeString || h.Data != string(h.Value) {
			t.Errorf("header %s is not a typed string: %+v", h.Key, h)
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// BenchmarkInsert is the cost of one create event and its JsonConverter
// text (schema and payload): the streaming path's share of a record.
func BenchmarkInsert(b *testing.B) {
	e, err := New(testConfig())
	if err != nil {
		b.Fatal(err)
	}
	tbl, err := e.NewTable("public", "customers", customers, []string{"id"})
	if err != nil {
		b.Fatal(err)
	}
	c := &converters.JSON{}
	if err := c.Configure(map[string]string{}, false); err != nil {
		b.Fatal(err)
	}
	src := streamSource(767, 24023128)
	row := []any{int32(1), "Anne", int32(3)}
	b.ReportAllocs()
	for b.Loop() {
		recs, err := e.Insert(tbl, src, row)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.FromConnectData(recs[0].Topic, recs[0].ValueSchema, recs[0].Value); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInsertRecord is the cost of one create event alone.
func BenchmarkInsertRecord(b *testing.B) {
	e, err := New(testConfig())
	if err != nil {
		b.Fatal(err)
	}
	tbl, err := e.NewTable("public", "customers", customers, []string{"id"})
	if err != nil {
		b.Fatal(err)
	}
	src := streamSource(767, 24023128)
	row := []any{int32(1), "Anne", int32(3)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Insert(tbl, src, row); err != nil {
			b.Fatal(err)
		}
	}
}
