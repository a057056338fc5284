package postgres

import (
	"strings"
	"testing"
)

func baseProps() map[string]string {
	return map[string]string{
		"name": "pg", "connector.class": Class, "tasks.max": "1", "key.converter": "org.apache.kafka.connect.json.JsonConverter",
		"database.hostname": "db", "database.user": "u", "database.dbname": "app", "topic.prefix": "app",
		"topic.creation.default.partitions": "1", "transforms": "", "errors.tolerance": "none",
	}
}

// TestConfigErrors: every Debezium key the native connector does not
// support, and every value of a supported key it does not, is an error on
// that key — never silently ignored — while Kafka Connect's own keys and
// values Debezium would take as the native connector's are accepted.
func TestConfigErrors(t *testing.T) {
	if errs := configErrors(baseProps()); len(errs) != 0 {
		t.Fatalf("a plain config: %v", errs)
	}
	for _, tc := range []struct{ key, value, want string }{
		{"plugin.name", "decoderbufs", `"decoderbufs" is not supported by the native connector; use one of pgoutput`},
		{"snapshot.mode", "custom", `"custom" is not supported by the native connector`},
		{"snapshot.locking.mode", "shared", `use one of none`},
		{"slot.name", "Bad-Name", "is not a valid replication slot name"},
		{"database.port", "x", `"x" is not a whole number`},
		{"database.server.name", "x", "is an old Debezium key: use topic.prefix"},
		{"column.mask.with.12.chars", "public.t.c", "is not supported by the native PostgreSQL connector"},
		{"signal.kafka.topic", "signals", "is not supported by the native PostgreSQL connector"},
		{"signal.data.collection", "signals", `"signals" is not a table as <schema>.<table>`},
		{"signal.enabled.channels", "source,kafka", `channel "kafka" is not supported by the native connector: only source`},
		{"incremental.snapshot.watermarking.strategy", "insert_delete", "use one of insert_insert"},
		{"incremental.snapshot.chunk.size", "0", "below the least allowed value, 1"},
		{"skipped.operations", "c,x", `"x" is not an operation`},
		{"offset.mismatch.strategy", "guess", "use one of no_validation, trust_offset, trust_slot, trust_greater_lsn"},
		{"include.unknown.datatypes", "true", "use one of false"},
	} {
		p := baseProps()
		p[tc.key] = tc.value
		errs := configErrors(p)
		if len(errs) != 1 || errs[0].Key != tc.key || !strings.Contains(errs[0].Message, tc.want) {
			t.Errorf("%s=%s: %v, want one error on the key containing %q", tc.key, tc.value, errs, tc.want)
		}
	}
	p := baseProps()
	delete(p, "topic.prefix")
	if errs := configErrors(p); len(errs) != 1 || errs[0].Key != "topic.prefix" || errs[0].Message != "is required" {
		t.Errorf("without topic.prefix: %v", errs)
	}
	p = baseProps()
	p["table.include.list"], p["table.exclude.list"] = "public.a", "public.b"
	if errs := configErrors(p); len(errs) != 1 || errs[0].Key != "table.exclude.list" {
		t.Errorf("include and exclude lists together: %v", errs)
	}
	// What the native connector does anyway is accepted.
	p = baseProps()
	p["plugin.name"], p["snapshot.isolation.mode"], p["schema.refresh.mode"] = "pgoutput", "serializable", "columns_diff"
	if errs := configErrors(p); len(errs) != 0 {
		t.Errorf("values the connector has anyway: %v", errs)
	}
}

// TestParseConfig reads Debezium's keys with Debezium's defaults.
func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(baseProps())
	if err != nil {
		t.Fatal(err)
	}
	if c.Slot != "debezium" || c.Publication != "dbz_publication" || c.PubAutocreate != PubAllTables || c.Port != 5432 ||
		c.SnapshotMode != SnapshotInitial || !c.Tombstones || !c.Skipped["t"] || c.Skipped["c"] || c.HeartbeatPrefix != "__debezium-heartbeat" {
		t.Fatalf("defaults: %+v", c)
	}
	p := baseProps()
	p["table.include.list"] = `public\.orders_\d+,inventory.items`
	p["skipped.operations"] = "none"
	c, err = ParseConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]bool{"public.orders_12": true, "PUBLIC.ORDERS_7": true, "public.orders_x": false,
		"inventory.items": true, "inventory.items2": false, "xinventory.items": false} {
		schema, name, _ := strings.Cut(table, ".")
		if got := c.Tables.Table(schema, name); got != want {
			t.Errorf("table %s captured: %v, want %v", table, got, want)
		}
	}
	if len(c.Skipped) != 0 {
		t.Errorf("skipped.operations=none: %v", c.Skipped)
	}
}

// TestPositionRoundTrip: an offset written by Debezium — the older boolean
// snapshot key, numbers as JSON gives them back — reads as the native
// connector's position, and a position renders Debezium's keys.
func TestPositionRoundTrip(t *testing.T) {
	p, err := parsePosition(map[string]any{"lsn": float64(23884736), "lsn_proc": float64(23884736), "lsn_commit": float64(23884600),
		"txId": float64(771), "ts_usec": float64(1733490000123456), "messageType": "INSERT", "lsn_events_processed": float64(2)})
	if err != nil {
		t.Fatal(err)
	}
	if p.LSN != 23884736 || p.Commit != 23884600 || p.TxID != 771 || !p.HasTxID || p.MessageType != "INSERT" || p.EventsAtLSN != 2 || p.snapshotUnfinished() {
		t.Fatalf("%+v", p)
	}
	o := p.offset()
	if o["lsn_commit"] != int64(23884600) || o["ts_usec"] != int64(1733490000123456) || o["lsn_events_processed"] != int64(2) {
		t.Fatalf("%v", o)
	}
	old, err := parsePosition(map[string]any{"lsn": float64(10), "snapshot": true, "last_snapshot_record": false})
	if err != nil || !old.snapshotUnfinished() {
		t.Fatalf("a snapshot cut short, as older versions wrote it: %+v %v", old, err)
	}
	done, _ := parsePosition(map[string]any{"lsn": float64(10), "snapshot": "INITIAL", "last_snapshot_record": true, "snapshot_completed": false})
	if done.snapshotUnfinished() {
		t.Fatal("the snapshot's last record marks it done")
	}
	if _, err := parsePosition(map[string]any{"lsn": "x"}); err == nil {
		t.Fatal("a non-numeric lsn")
	}
}

// TestRefuseIncremental: a Debezium offset with an incremental snapshot in
// progress is not taken over; one without is.
func TestRefuseIncremental(t *testing.T) {
	if err := refuseIncremental(map[string]any{"lsn": float64(1), "incremental_snapshot_collections": `[{"incremental_snapshot_collections_id":"public.t"}]`}); err == nil ||
		!strings.Contains(err.Error(), "incremental snapshot in progress") {
		t.Fatalf("%v", err)
	}
	if err := refuseIncremental(map[string]any{"lsn": float64(1)}); err != nil {
		t.Fatal(err)
	}
}

// TestSignalConfig: the signal table is captured whatever the table lists
// say, and column lists must keep its id, type and data.
func TestSignalConfig(t *testing.T) {
	p := baseProps()
	p["signal.data.collection"], p["table.include.list"], p["schema.exclude.list"] = "ops.signals", "public.orders", "ops"
	cfg, err := ParseConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ChunkSize != 1024 || !cfg.Tables.Table("ops", "signals") || cfg.Tables.Table("ops", "other") || !cfg.Tables.Table("public", "orders") {
		t.Errorf("chunk size %d; captured: signals %v, another table of the excluded schema %v, orders %v", cfg.ChunkSize,
			cfg.Tables.Table("ops", "signals"), cfg.Tables.Table("ops", "other"), cfg.Tables.Table("public", "orders"))
	}
	p["column.exclude.list"] = `ops\.signals\.data`
	if errs := configErrors(p); len(errs) != 1 || errs[0].Key != "column.exclude.list" || !strings.Contains(errs[0].Message, "leaves out column data of the signal table ops.signals") {
		t.Errorf("a column list without the signal table's data: %v", errs)
	}
}
