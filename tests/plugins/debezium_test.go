package plugins

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

const debeziumClass = "io.debezium.connector.postgresql.PostgresConnector"

// postgres is the PostgreSQL the Debezium tests use (make postgres-up), or
// skips the test when SLUICE_TEST_POSTGRES (host:port) is not set.
func postgres(t *testing.T) (host, port string) {
	t.Helper()
	addr := os.Getenv("SLUICE_TEST_POSTGRES")
	if addr == "" {
		t.Skip("SLUICE_TEST_POSTGRES is not set (make postgres-up starts one on 127.0.0.1:15432)")
	}
	host, port, ok := strings.Cut(addr, ":")
	if !ok {
		t.Fatalf("SLUICE_TEST_POSTGRES=%q: want host:port", addr)
	}
	return host, port
}

// sluice is what the Debezium tests need of a cluster, in-process
// (sluicetest.Cluster) or of separate processes (procs.Cluster).
type sluice interface {
	Name(base string) string
	Do(method, path string, body any) sluicetest.Response
	Must(want int, method, path string, body any) sluicetest.Response
	ReadTopic(topic string) []sluicetest.Record
}

// debezium is one Debezium PostgreSQL connector, "pg", capturing a table of
// its own (id int primary key, name text) through its own replication slot
// and publication, which the test's cleanup drops.
type debezium struct {
	t          *testing.T
	c          sluice
	host, port string
	table      string // the captured table, in schema public
	prefix     string // topic.prefix, Debezium's "server" partition key
	topic      string // the table's change topic
}

// newDebezium creates the table with rows 1 'one', 2 'two', 3 'three' and
// the connector, its config given extra keys on top of the test's own.
func newDebezium(t *testing.T, c sluice, extra map[string]string) *debezium {
	t.Helper()
	host, port := postgres(t)
	d := &debezium{t: t, c: c, host: host, port: port,
		table: strings.ReplaceAll(c.Name("items"), "-", "_"), prefix: c.Name("db")}
	d.topic = d.prefix + ".public." + d.table
	d.sql("DROP TABLE IF EXISTS "+d.table, "CREATE TABLE "+d.table+" (id int PRIMARY KEY, name text)",
		"INSERT INTO "+d.table+" VALUES (1, 'one'), (2, 'two'), (3, 'three')")
	slot := d.table // unique to the cluster, and a valid slot name
	t.Cleanup(func() {
		// The connector is gone with the cluster (cleanups run last in,
		// first out); its walsender may linger a moment, so end it first.
		_ = exec.Command("psql", "-h", host, "-p", port, "-U", "postgres", "-q", "-c",
			"SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '"+slot+"' AND active_pid IS NOT NULL").Run()
		_ = exec.Command("psql", "-h", host, "-p", port, "-U", "postgres", "-q", "-c",
			"SELECT pg_drop_replication_slot('"+slot+"') FROM pg_replication_slots WHERE slot_name = '"+slot+"'").Run()
	})
	cfg := map[string]string{
		"connector.class": debeziumClass, "tasks.max": "1",
		"database.hostname": host, "database.port": port, "database.user": "postgres", "database.password": "unused",
		"database.dbname": "postgres", "topic.prefix": d.prefix, "plugin.name": "pgoutput",
		"slot.name": slot, "publication.name": slot, "publication.autocreate.mode": "filtered",
		"table.include.list": "public." + d.table,
		"key.converter":      "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "false",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
	}
	maps.Copy(cfg, extra)
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "pg", "config": cfg})
	return d
}

// sql runs statements with psql as user postgres, in one transaction.
func (d *debezium) sql(stmts ...string) {
	d.t.Helper()
	cmd := exec.Command("psql", "-h", d.host, "-p", d.port, "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-q", "-c", strings.Join(stmts, "; "))
	if out, err := cmd.CombinedOutput(); err != nil {
		d.t.Fatalf("psql: %v\n%s", err, out)
	}
}

// events are the change events in the table's topic, in order.
func (d *debezium) events() []map[string]any {
	var out []map[string]any
	for _, r := range d.c.ReadTopic(d.topic) {
		var ev map[string]any
		if r.Value != nil && json.Unmarshal(r.Value, &ev) == nil {
			out = append(out, ev)
		}
	}
	return out
}

// ops are the events' operations, comma-separated: "r" snapshot, "c"
// insert, "u" update, "d" delete.
func (d *debezium) ops() string {
	var s []string
	for _, ev := range d.events() {
		s = append(s, fmt.Sprint(ev["op"]))
	}
	return strings.Join(s, ",")
}

// waitOps waits until the topic's operations are want.
func (d *debezium) waitOps(timeout time.Duration, want string) {
	d.t.Helper()
	sluicetest.Eventually(d.t, timeout, func() (bool, string) {
		got := d.ops()
		return got == want, "events: " + got + ", want " + want
	})
}

// offset is the connector's one committed offset as GET …/offsets shows
// it, nil while it has none.
func (d *debezium) offset() map[string]any {
	offs, body := connectorOffsets(d.c, "pg")
	if len(offs) != 1 {
		return nil
	}
	if p := offs[0].Partition; len(p) != 1 || p["server"] != d.prefix {
		d.t.Fatalf("offsets %s: want Debezium's one partition {\"server\": %q}", body, d.prefix)
	}
	return offs[0].Offset
}

// waitStreamedOffset waits until the committed offset is a streaming one
// (an LSN, no snapshot marker) other than not, and returns it.
func (d *debezium) waitStreamedOffset(not map[string]any) map[string]any {
	d.t.Helper()
	var off map[string]any
	sluicetest.Eventually(d.t, 30*time.Second, func() (bool, string) {
		off = d.offset()
		_, snapshot := off["snapshot"]
		return off["lsn"] != nil && !snapshot && !maps.Equal(off, not), fmt.Sprintf("offset %v", off)
	})
	return off
}

// TestDebeziumPostgresSnapshotAndStream: Debezium's PostgreSQL connector,
// unchanged, through the connector host: a snapshot of a table, then an
// insert, an update and a delete streamed, in Debezium's envelope; GET
// …/offsets shows Debezium's own offsets ({"server": …} → {"lsn": …}).
func TestDebeziumPostgresSnapshotAndStream(t *testing.T) {
	d := newDebezium(t, start(t, 1), nil)
	d.waitOps(90*time.Second, "r,r,r")
	d.sql("INSERT INTO "+d.table+" VALUES (4, 'four')", "UPDATE "+d.table+" SET name = 'TWO' WHERE id = 2",
		"DELETE FROM "+d.table+" WHERE id = 3")
	d.waitOps(60*time.Second, "r,r,r,c,u,d")
	up := d.events()[4]
	if after, _ := up["after"].(map[string]any); after["name"] != "TWO" {
		t.Fatalf("update event %v: want after.name TWO", up)
	}
	d.waitStreamedOffset(nil)
}

// TestDebeziumPostgresOffsetsRewind: stop the connector, PATCH its offset
// back to an earlier LSN, resume: the changes after that LSN are emitted
// again, and no snapshot is taken. (flush.lsn.source=false keeps the slot
// from confirming the LSNs Debezium read, which would make PostgreSQL skip
// them whatever the offset says: a rewind needs the WAL still there.)
func TestDebeziumPostgresOffsetsRewind(t *testing.T) {
	d := newDebezium(t, start(t, 1), map[string]string{"flush.lsn.source": "false"})
	d.waitOps(90*time.Second, "r,r,r")
	d.sql("INSERT INTO " + d.table + " VALUES (4, 'four')")
	d.waitOps(60*time.Second, "r,r,r,c")
	mark := d.waitStreamedOffset(nil)
	d.sql("UPDATE " + d.table + " SET name = 'TWO' WHERE id = 2")
	d.sql("DELETE FROM " + d.table + " WHERE id = 3")
	d.waitOps(60*time.Second, "r,r,r,c,u,d")
	d.waitStreamedOffset(mark)

	d.c.Must(http.StatusNoContent, "PUT", "/connectors/pg/stop", nil)
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		r := d.c.Do("GET", "/connectors/pg/status", nil)
		return strings.Contains(string(r.Body), `"STOPPED"`), "status " + string(r.Body)
	})
	d.c.Must(http.StatusOK, "PATCH", "/connectors/pg/offsets", map[string]any{"offsets": []any{
		map[string]any{"partition": map[string]any{"server": d.prefix}, "offset": mark}}})
	if got := d.offset(); !maps.EqualFunc(got, mark, func(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Fatalf("offset after PATCH %v, want %v", got, mark)
	}
	d.c.Must(http.StatusAccepted, "PUT", "/connectors/pg/resume", nil)
	d.waitOps(60*time.Second, "r,r,r,c,u,d,u,d")
	again := d.events()[6]
	if after, _ := again["after"].(map[string]any); after["name"] != "TWO" {
		t.Fatalf("re-emitted update %v: want after.name TWO", again)
	}
}

// TestDebeziumWithJavaTransforms: a Debezium connector whose config names
// Java transformations and a predicate — Debezium's ExtractNewRecordState
// from its plugin directory, Kafka's InsertField and TopicNameMatches from
// the host's classpath — is validated against the host's classes (a bad
// setting of one is a 400 naming the key) and runs them in the host: the
// topic holds the flat rows.
func TestDebeziumWithJavaTransforms(t *testing.T) {
	c := start(t, 1)
	transforms := map[string]string{
		"transforms":                                       "unwrap,origin",
		"transforms.unwrap.type":                           "io.debezium.transforms.ExtractNewRecordState",
		"transforms.origin.type":                           "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.origin.static.field":                   "origin",
		"transforms.origin.static.value":                   "sluice",
		"transforms.origin.predicate":                      "isItems",
		"predicates":                                       "isItems",
		"predicates.isItems.type":                          "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
		"predicates.isItems.pattern":                       ".*items.*",
		"value.converter.schemas.enable":                   "false",
		"transforms.unwrap.delete.tombstone.handling.mode": "drop",
	}
	bad := maps.Clone(transforms)
	bad["connector.class"] = debeziumClass
	bad["predicates.isItems.pattern"] = "(unclosed"
	count, errs := validateErrors(t, c, debeziumClass, bad)
	var errored []string
	for k := range errs {
		errored = append(errored, k)
	}
	if !slices.Contains(errored, "predicates.isItems.pattern") || slices.ContainsFunc(errored, func(k string) bool { return strings.HasSuffix(k, ".type") }) {
		t.Fatalf("validate with a bad predicate pattern: errors on %v (%d), want one on predicates.isItems.pattern and none on a type", errored, count)
	}

	d := newDebezium(t, c, transforms)
	want := []string{`{"id":1,"name":"one","origin":"sluice"}`, `{"id":2,"name":"two","origin":"sluice"}`, `{"id":3,"name":"three","origin":"sluice"}`}
	sluicetest.Eventually(t, 90*time.Second, func() (bool, string) {
		var got []string
		for _, rec := range c.ReadTopic(d.topic) {
			got = append(got, string(rec.Value))
		}
		return slices.Equal(got, want), fmt.Sprintf("values %q, want %q", got, want)
	})
}
