package plugins

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/tests/harness"
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

// sql runs statements with psql as user postgres.
func sql(t *testing.T, host, port string, stmts ...string) {
	t.Helper()
	cmd := exec.Command("psql", "-h", host, "-p", port, "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-q", "-c", strings.Join(stmts, "; "))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
}

// TestDebeziumPostgresSnapshotAndStream: Debezium's PostgreSQL connector,
// unchanged, through the connector host: a snapshot of a table, then an
// insert, an update and a delete streamed, in Debezium's envelope; GET
// …/offsets shows Debezium's own offsets ({"server": …} → {"lsn": …}).
func TestDebeziumPostgresSnapshotAndStream(t *testing.T) {
	host, port := postgres(t)
	c := start(t, 1)
	table := strings.ReplaceAll(c.Name("items"), "-", "_")
	sql(t, host, port, "DROP TABLE IF EXISTS "+table, "CREATE TABLE "+table+" (id int PRIMARY KEY, name text)",
		"INSERT INTO "+table+" VALUES (1, 'one'), (2, 'two'), (3, 'three')")
	prefix := c.Name("db")
	slot := strings.ReplaceAll(c.Prefix, "-", "_")
	t.Cleanup(func() {
		// The connector is gone with the cluster (cleanups run last in,
		// first out); its walsender may linger a moment, so end it first.
		exec.Command("psql", "-h", host, "-p", port, "-U", "postgres", "-q", "-c",
			"SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '"+slot+"' AND active_pid IS NOT NULL").Run()
		exec.Command("psql", "-h", host, "-p", port, "-U", "postgres", "-q", "-c",
			"SELECT pg_drop_replication_slot('"+slot+"') FROM pg_replication_slots WHERE slot_name = '"+slot+"'").Run()
	})
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "pg", "config": map[string]string{
		"connector.class": debeziumClass, "tasks.max": "1",
		"database.hostname": host, "database.port": port, "database.user": "postgres", "database.password": "unused",
		"database.dbname": "postgres", "topic.prefix": prefix, "plugin.name": "pgoutput",
		"slot.name": slot, "publication.name": slot, "publication.autocreate.mode": "filtered",
		"table.include.list": "public." + table,
		"key.converter":      "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "false",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
	}})
	topic := prefix + ".public." + table
	events := func() []map[string]any {
		var out []map[string]any
		for _, r := range c.ReadTopic(topic) {
			var ev map[string]any
			if r.Value != nil && json.Unmarshal(r.Value, &ev) == nil {
				out = append(out, ev)
			}
		}
		return out
	}
	ops := func() string {
		var s []string
		for _, ev := range events() {
			s = append(s, fmt.Sprint(ev["op"]))
		}
		return strings.Join(s, ",")
	}
	harness.Eventually(t, 90*time.Second, func() (bool, string) {
		return ops() == "r,r,r", "snapshot events: " + ops()
	})
	sql(t, host, port, "INSERT INTO "+table+" VALUES (4, 'four')", "UPDATE "+table+" SET name = 'TWO' WHERE id = 2",
		"DELETE FROM "+table+" WHERE id = 3")
	harness.Eventually(t, 60*time.Second, func() (bool, string) {
		return ops() == "r,r,r,c,u,d", "events: " + ops()
	})
	up := events()[4]
	if after, _ := up["after"].(map[string]any); after["name"] != "TWO" {
		t.Fatalf("update event %v: want after.name TWO", up)
	}
	harness.Eventually(t, 30*time.Second, func() (bool, string) {
		offsets, body := connectorOffsets(c, "pg")
		ok := len(offsets) == 1 && offsets[0].Partition["server"] == prefix && offsets[0].Offset["lsn"] != nil
		return ok, "offsets " + body
	})
}
