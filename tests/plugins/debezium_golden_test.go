package plugins

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/tests/cdccompare"
)

var update = flag.Bool("update", false, "rewrite the golden files of connect/postgres/testdata/debezium with Debezium's output")

// goldenDir holds the fixtures (schema.sql, changes.sql) and, per config,
// the golden files of Debezium's output.
var goldenDir = filepath.Join("..", "..", "connect", "postgres", "testdata", "debezium")

// goldenConfigs are the Debezium configurations whose output the golden
// files hold, each in the directory of its name, on top of goldenBase.
var goldenConfigs = []struct {
	dir    string
	config map[string]string
}{
	// Debezium's defaults, with every optional topic on: transaction
	// metadata, truncate events, heartbeats.
	{"a-defaults", map[string]string{
		"provide.transaction.metadata": "true",
		"skipped.operations":           "none",
		"heartbeat.interval.ms":        "200",
	}},
	{"b-double-adaptive-micros", map[string]string{
		"decimal.handling.mode":  "double",
		"time.precision.mode":    "adaptive_time_microseconds",
		"interval.handling.mode": "string",
		"binary.handling.mode":   "base64",
	}},
	{"c-string-connect-hex", map[string]string{
		"decimal.handling.mode": "string",
		"time.precision.mode":   "connect",
		"binary.handling.mode":  "hex",
	}},
}

// goldenPublication is the publication schema.sql's tables are published
// in, one per database, so every run has its own.
const goldenPublication = "golden_pub"

// TestDebeziumGolden: Debezium 3.6.1's PostgreSQL connector, through the
// connector host with JsonConverter (schemas on for key and value), under
// each of goldenConfigs at once on one database: the snapshot of
// schema.sql's tables, then changes.sql streamed. Every record of every
// topic the connectors write — table changes, tombstones, heartbeats,
// transaction metadata, logical messages — normalized by cdccompare, is
// the same as in the golden files, key by key; with -update they are
// written as the golden files instead.
func TestDebeziumGolden(t *testing.T) {
	began := time.Now()
	db := newGoldenDatabase(t)
	c := start(t, 1)
	runs := make([]goldenRun, len(goldenConfigs))
	for i, gc := range goldenConfigs {
		runs[i] = goldenRun{dir: gc.dir, name: "golden-" + gc.dir[:1],
			prefix: db.name + "_" + gc.dir[:1]}
		cfg := map[string]string{
			"connector.class": debeziumClass, "tasks.max": "1",
			"database.hostname": db.host, "database.port": db.port, "database.user": "postgres",
			"database.password": "unused", "database.dbname": db.name,
			"topic.prefix": runs[i].prefix, "plugin.name": "pgoutput",
			"slot.name": runs[i].prefix, "publication.name": goldenPublication,
			"publication.autocreate.mode": "disabled",
			// The partitions are published as their root and not captured
			// on their own.
			"table.include.list":             `cdc\.(all_types|ri_default|ri_full|ri_nothing|no_pk|measurements)`,
			"key.converter":                  "org.apache.kafka.connect.json.JsonConverter",
			"key.converter.schemas.enable":   "true",
			"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
			"value.converter.schemas.enable": "true",
		}
		maps.Copy(cfg, gc.config)
		db.dropSlotAtCleanup(runs[i].prefix)
		c.Must(201, "POST", "/connectors", map[string]any{"name": runs[i].name, "config": cfg})
	}
	for _, r := range runs {
		r.waitSnapshot(t, c)
	}
	t.Logf("snapshots done after %v", time.Since(began).Round(time.Millisecond))

	end := db.runFile(filepath.Join(goldenDir, "changes.sql"))
	for _, r := range runs {
		r.waitDelivered(t, c, end)
	}
	t.Logf("changes delivered after %v", time.Since(began).Round(time.Millisecond))

	for _, r := range runs {
		got, err := cdccompare.Normalizer{Prefix: r.prefix, Database: db.name}.Normalize(r.records(t, c))
		if err != nil {
			t.Fatalf("%s: %v", r.dir, err)
		}
		dir := filepath.Join(goldenDir, r.dir)
		if *update {
			if err := cdccompare.WriteDir(dir, got); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: wrote %d records", dir, len(got))
			continue
		}
		want, err := cdccompare.ReadDir(dir)
		if err != nil {
			t.Fatalf("%v (go test -run TestDebeziumGolden -update writes them)", err)
		}
		if diffs := cdccompare.Diff(want, got); len(diffs) > 0 {
			var lines []string
			for _, d := range diffs {
				lines = append(lines, "  "+d.String())
			}
			t.Errorf("%s: Debezium's output differs from the golden files in %d topics (the first difference of each):\n%s",
				r.dir, len(diffs), strings.Join(lines, "\n"))
		}
	}
	t.Logf("done after %v", time.Since(began).Round(time.Millisecond))
}

// goldenDatabase is a database of the test's own on the Debezium tests'
// PostgreSQL, with schema.sql's tables and their publication, dropped (with
// the test's replication slots) at cleanup.
type goldenDatabase struct {
	t          *testing.T
	host, port string
	name       string
}

func newGoldenDatabase(t *testing.T) *goldenDatabase {
	t.Helper()
	host, port := postgres(t)
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		t.Fatal(err)
	}
	db := &goldenDatabase{t: t, host: host, port: port, name: "golden_" + hex.EncodeToString(suffix)}
	db.psql("postgres", "-c", "CREATE DATABASE "+db.name)
	t.Cleanup(func() {
		// Registered first, this runs last: after the cluster and its
		// connectors are gone and their slots dropped.
		_ = exec.Command("psql", "-h", host, "-p", port, "-U", "postgres", "-d", "postgres", "-q",
			"-c", "DROP DATABASE IF EXISTS "+db.name+" WITH (FORCE)").Run()
	})
	db.runFile(filepath.Join(goldenDir, "schema.sql"))
	db.psql(db.name, "-c", "CREATE PUBLICATION "+goldenPublication+" FOR TABLES IN SCHEMA cdc WITH (publish_via_partition_root = true)")
	return db
}

// dropSlotAtCleanup drops a connector's replication slot when the test
// ends (after the cluster, registered later, has stopped the connector),
// ending its walsender first if it lingers.
func (db *goldenDatabase) dropSlotAtCleanup(slot string) {
	db.t.Cleanup(func() {
		for _, q := range []string{
			"SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '" + slot + "' AND active_pid IS NOT NULL",
			"SELECT pg_drop_replication_slot('" + slot + "') FROM pg_replication_slots WHERE slot_name = '" + slot + "'",
		} {
			_ = exec.Command("psql", "-h", db.host, "-p", db.port, "-U", "postgres", "-d", "postgres", "-q", "-c", q).Run()
		}
	})
}

// psql runs psql on database with args, stopping at the first error, and
// returns what it printed, unaligned and without headers.
func (db *goldenDatabase) psql(database string, args ...string) string {
	db.t.Helper()
	cmd := exec.Command("psql", append([]string{"-h", db.host, "-p", db.port, "-U", "postgres", "-d", database,
		"-v", "ON_ERROR_STOP=1", "-q", "-A", "-t"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		db.t.Fatalf("psql %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runFile runs a fixture SQL file on the database and returns the last
// line it printed: for changes.sql, the LSN of its end marker.
func (db *goldenDatabase) runFile(path string) string {
	db.t.Helper()
	lines := strings.Fields(db.psql(db.name, "-f", path))
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// goldenRun is one of goldenConfigs' connectors.
type goldenRun struct {
	dir    string // its golden files' directory, under goldenDir
	name   string // the connector's name
	prefix string // its topic.prefix and slot name, unique to the run
}

// topics are the run's topics that exist now, in name order: those of its
// prefix, and its heartbeat topic.
func (r goldenRun) topics(t *testing.T, c *sluicetest.Cluster) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listed, err := c.Admin().ListTopics(ctx)
	if err != nil {
		t.Fatalf("list topics: %v", err)
	}
	var out []string
	for _, name := range listed.Names() {
		if strings.HasPrefix(name, r.prefix+".") || name == "__debezium-heartbeat."+r.prefix {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// records are every record of the run's topics, topic by topic in name
// order, each topic's in offset order. Each topic must have one partition
// (Debezium's order within a topic is what is compared).
func (r goldenRun) records(t *testing.T, c *sluicetest.Cluster) []cdccompare.Record {
	t.Helper()
	var out []cdccompare.Record
	for _, topic := range r.topics(t, c) {
		for _, kr := range sluicetest.ReadLog(t, c.Brokers, "golden-reader", topic, true) {
			if kr.Attrs.IsControl() {
				continue
			}
			if kr.Partition != 0 {
				t.Fatalf("%s has a record in partition %d: want one partition, whose order is Debezium's", topic, kr.Partition)
			}
			rec := cdccompare.Record{Topic: topic, Key: kr.Key, Value: kr.Value}
			for _, h := range kr.Headers {
				rec.Headers = append(rec.Headers, cdccompare.Header{Key: h.Key, Value: string(h.Value)})
			}
			out = append(out, rec)
		}
	}
	return out
}

// payload is the payload of a JsonConverter value with schemas enabled, nil
// for a tombstone or what does not parse.
func payload(value []byte) map[string]any {
	var v struct {
		Payload map[string]any `json:"payload"`
	}
	if json.Unmarshal(value, &v) != nil {
		return nil
	}
	return v.Payload
}

// waitSnapshot waits until the run's snapshot has ended: a table topic
// holds the record Debezium marks as the snapshot's last
// (source.snapshot "last").
func (r goldenRun) waitSnapshot(t *testing.T, c *sluicetest.Cluster) {
	t.Helper()
	sluicetest.Eventually(t, 120*time.Second, func() (bool, string) {
		n := 0
		for _, topic := range r.topics(t, c) {
			if !strings.HasPrefix(topic, r.prefix+".cdc.") {
				continue
			}
			for _, rec := range c.ReadTopic(topic) {
				n++
				if src, _ := payload(rec.Value)["source"].(map[string]any); src["snapshot"] == "last" {
					return true, ""
				}
			}
		}
		st, _ := c.Status(r.name)
		return false, fmt.Sprintf("%s: %d snapshot records, none marked last; status %+v", r.name, n, st)
	})
}

// waitDelivered waits until the run has delivered changes.sql's end marker
// (its message topic holds it) and committed an offset at or past its LSN:
// Kafka Connect commits an offset only once every record before it is
// written, so every topic is then complete.
func (r goldenRun) waitDelivered(t *testing.T, c *sluicetest.Cluster, endLSN string) {
	t.Helper()
	end, err := parseLSN(endLSN)
	if err != nil {
		t.Fatalf("changes.sql's end marker: %v", err)
	}
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		marked := false
		for _, rec := range c.ReadTopic(r.prefix + ".message") {
			if m, _ := payload(rec.Value)["message"].(map[string]any); m["prefix"] == "golden.end" {
				marked = true
			}
		}
		if !marked {
			return false, r.name + ": no end marker in " + r.prefix + ".message"
		}
		offs, body := connectorOffsets(c, r.name)
		if len(offs) != 1 {
			return false, r.name + ": offsets " + body
		}
		lsn, err := strconv.ParseUint(fmt.Sprint(offs[0].Offset["lsn"]), 10, 64)
		return err == nil && lsn >= end, fmt.Sprintf("%s: offset %v, want lsn ≥ %d (%s)", r.name, offs[0].Offset, end, endLSN)
	})
}

// parseLSN parses PostgreSQL's text form of an LSN, "16/B374D848".
func parseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("LSN %q: want hi/lo", s)
	}
	h, err := strconv.ParseUint(hi, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("LSN %q: %w", s, err)
	}
	l, err := strconv.ParseUint(lo, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("LSN %q: %w", s, err)
	}
	return h<<32 | l, nil
}
