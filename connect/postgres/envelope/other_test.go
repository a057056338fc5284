package envelope

import (
	"strings"
	"testing"
	"time"
)

// TestMessage: a logical decoding message on <prefix>.message, keyed by
// its prefix, as Debezium writes it; its content typed by
// binary.handling.mode.
func TestMessage(t *testing.T) {
	e := newEmitter(t, testConfig())
	recs := e.Message(Source{Commit: committed, LSN: Int64(5000), LastCommitLSN: Int64(4900)}, Message{Prefix: "audit", Content: []byte("hello")})
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.Topic != "srv.message" || r.KafkaPartition != nil || len(r.Headers) != 0 {
		t.Errorf("topic %s, partition %v, headers %v", r.Topic, r.KafkaPartition, headerKeys(r.Headers))
	}
	wantKey := `{"schema":{"type":"struct","fields":[{"type":"string","optional":true,"field":"prefix"}],` +
		`"optional":false,"name":"io.debezium.connector.postgresql.MessageKey","version":1},"payload":{"prefix":"audit"}}`
	if got := keyJSON(t, r); got != wantKey {
		t.Errorf("key\n got %s\nwant %s", got, wantKey)
	}
	wantValue := `{"schema":{"type":"struct","fields":[` +
		`{"type":"string","optional":false,"field":"op"},` +
		`{"type":"int64","optional":true,"field":"ts_ms"},` +
		sourceSchemaJSON + `,` + txBlockSchemaJSON + `,` +
		`{"type":"struct","fields":[{"type":"string","optional":true,"field":"prefix"},{"type":"bytes","optional":true,"field":"content"}],` +
		`"optional":false,"name":"io.debezium.connector.postgresql.Message","version":1,"field":"message"}],` +
		`"optional":false,"name":"io.debezium.connector.postgresql.MessageValue","version":1},` +
		`"payload":{"op":"m","ts_ms":1796590800123,` +
		`"source":{"version":"3.6.1.Final","connector":"postgresql","name":"srv","ts_ms":1796590799987,"snapshot":"false","db":"shop",` +
		`"sequence":"[\"4900\",\"5000\"]","ts_us":1796590799987654,"ts_ns":1796590799987654000,"schema":"","table":"",` +
		`"txId":null,"lsn":5000,"xmin":null,"origin":null,"origin_lsn":null},` +
		`"transaction":null,"message":{"prefix":"audit","content":"aGVsbG8="}}}`
	if got := valueJSON(t, r); got != wantValue {
		t.Errorf("value\n got %s\nwant %s", got, wantValue)
	}
	for mode, want := range map[BinaryHandling]string{
		BinaryBase64:        `"content":"/+8A"`,
		BinaryBase64URLSafe: `"content":"_-8A"`,
		BinaryHex:           `"content":"ffef00"`,
		BinaryBytes:         `"content":"/+8A"`,
	} {
		cfg := testConfig()
		cfg.BinaryHandling = mode
		r := newEmitter(t, cfg).Message(Source{Commit: committed}, Message{Prefix: "p", Content: []byte{0xff, 0xef, 0x00}})[0]
		typ := `{"type":"string","optional":true,"field":"content"}`
		if mode == BinaryBytes {
			typ = `{"type":"bytes","optional":true,"field":"content"}`
		}
		if got := valueJSON(t, r); !strings.Contains(got, want) || !strings.Contains(got, typ) {
			t.Errorf("%s: %s", mode, got)
		}
	}
	cfg := testConfig()
	cfg.BinaryHandling = "base32"
	if _, err := New(cfg); err == nil {
		t.Error("an unknown binary.handling.mode was accepted")
	}
}

// TestHeartbeat: partition 0 of __debezium-heartbeat.<prefix>, keyed by the
// prefix, the current time as its value, no headers.
func TestHeartbeat(t *testing.T) {
	r := newEmitter(t, testConfig()).Heartbeat()
	if r.Topic != "__debezium-heartbeat.srv" || r.KafkaPartition == nil || *r.KafkaPartition != 0 || len(r.Headers) != 0 {
		t.Errorf("topic %s partition %v headers %v", r.Topic, r.KafkaPartition, r.Headers)
	}
	if got, want := keyJSON(t, r), `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"serverName"}],`+
		`"optional":false,"name":"io.debezium.connector.common.ServerNameKey","version":1},"payload":{"serverName":"srv"}}`; got != want {
		t.Errorf("key\n got %s\nwant %s", got, want)
	}
	if got, want := valueJSON(t, r), `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"ts_ms"}],`+
		`"optional":false,"name":"io.debezium.connector.common.Heartbeat","version":1},"payload":{"ts_ms":1796590800123}}`; got != want {
		t.Errorf("value\n got %s\nwant %s", got, want)
	}
}

// TestTopics: Debezium's topic names under the naming keys.
func TestTopics(t *testing.T) {
	cfg := DefaultConfig("srv")
	if cfg.TableTopic("public", "orders") != "srv.public.orders" || cfg.HeartbeatTopic() != "__debezium-heartbeat.srv" ||
		cfg.TransactionTopicName() != "srv.transaction" || cfg.MessageTopic() != "srv.message" {
		t.Errorf("defaults: %s %s %s %s", cfg.TableTopic("public", "orders"), cfg.HeartbeatTopic(), cfg.TransactionTopicName(), cfg.MessageTopic())
	}
	cfg.TopicDelimiter = "_"
	cfg.HeartbeatTopicPrefix = "hb"
	cfg.TransactionTopic = "tx"
	if cfg.TableTopic("public", "orders") != "srv_public_orders" || cfg.HeartbeatTopic() != "hb_srv" ||
		cfg.TransactionTopicName() != "srv_tx" || cfg.MessageTopic() != "srv.message" {
		t.Errorf("delimiter _: %s %s %s %s", cfg.TableTopic("public", "orders"), cfg.HeartbeatTopic(), cfg.TransactionTopicName(), cfg.MessageTopic())
	}
	cfg.HeartbeatTopicName = "shared-heartbeats"
	if cfg.HeartbeatTopic() != "shared-heartbeats" {
		t.Errorf("topic.heartbeat.name: %s", cfg.HeartbeatTopic())
	}
	cfg = DefaultConfig("srv")
	for _, c := range []struct{ schema, table, want string }{
		{"Sales Data", "order$items", "srv.Sales_Data.order_items"},
		{"public", "naïve", "srv.public.na_ve"},
		{"public", "emoji😀", "srv.public.emoji__"},
		{"", "t", "srv.t"},
		{" ", "t", "srv.t"},
		{"s", strings.Repeat("x", 300), "srv.s." + strings.Repeat("x", 243)},
	} {
		if got := cfg.TableTopic(c.schema, c.table); got != c.want {
			t.Errorf("%q.%q: %s, want %s", c.schema, c.table, got, c.want)
		}
	}
	// The table's schema names follow its sanitized topic.
	e := newEmitter(t, testConfig())
	tbl, err := e.NewTable("Sales Data", "orders", customers, []string{"id"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.KeySchema.Name != "srv.Sales_Data.orders.Key" || tbl.ValueSchema.Name != "srv.Sales_Data.orders.Value" ||
		tbl.EnvelopeSchema.Name != "srv.Sales_Data.orders.Envelope" {
		t.Errorf("schema names %s %s %s", tbl.KeySchema.Name, tbl.ValueSchema.Name, tbl.EnvelopeSchema.Name)
	}
	if _, err := New(Config{}); err == nil {
		t.Error("an empty topic.prefix was accepted")
	}
}

// TestSourceTimes: ts_ms/ts_us/ts_ns as Java's Instant derives them (also
// before 1970), sequence with its nulls, and the clock standing in for an
// unknown commit time.
func TestSourceTimes(t *testing.T) {
	e := newEmitter(t, testConfig())
	for _, c := range []struct {
		at              time.Time
		ms, us, ns      int64
		lastCommit, lsn *int64
		sequence        string
	}{
		{committed, 1796590799987, 1796590799987654, 1796590799987654000, nil, nil, "[null,null]"},
		{time.Unix(-1, 500_000), -1000, -999_500, -999_500_000, Int64(0), nil, `["0",null]`},
		{time.Unix(0, 0), 0, 0, 0, Int64(1), Int64(2), `["1","2"]`},
		{time.Time{}, 1796590800123, 1796590800123456, 1796590800123456789, nil, Int64(3), `[null,"3"]`},
	} {
		src := e.sourceBlock(Source{Commit: c.at, LastCommitLSN: c.lastCommit, LSN: c.lsn}, "s", "t")
		if src["ts_ms"] != c.ms || src["ts_us"] != c.us || src["ts_ns"] != c.ns || src["sequence"] != c.sequence {
			t.Errorf("%v: %v %v %v %v", c.at, src["ts_ms"], src["ts_us"], src["ts_ns"], src["sequence"])
		}
	}
	src := e.sourceBlock(Source{Commit: committed, Origin: "pg_17", OriginLSN: Int64(99), Xmin: Int64(12)}, "s", "t")
	if src["origin"] != "pg_17" || src["origin_lsn"] != int64(99) || src["xmin"] != int64(12) {
		t.Errorf("origin %v", src)
	}
}

// TestSnapshotMarker: the markers of a one-table-at-a-time snapshot of
// three tables of 3, 1 and 2 rows, as Debezium resolves them.
func TestSnapshotMarker(t *testing.T) {
	rows := []int{3, 1, 2}
	var got []string
	for ti, n := range rows {
		for r := 0; r < n; r++ {
			first, last := r == 0, r == n-1
			m := SnapshotMarker(first && ti == 0, last && ti == len(rows)-1, first, last)
			got = append(got, string(m))
		}
	}
	want := "first,true,last_in_data_collection,last_in_data_collection,first_in_data_collection,last"
	if strings.Join(got, ",") != want {
		t.Errorf("markers %s\nwant    %s", strings.Join(got, ","), want)
	}
}
