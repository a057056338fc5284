// Package cdcrun runs PostgreSQL change data capture connectors live
// against the compatibility fixtures of connect/postgres/testdata/debezium
// (schema.sql, changes.sql) and collects what they write, for
// cdccompare to compare: Debezium through the connector host with the
// golden files (tests/plugins, TestDebeziumGolden), and Sluice's native
// connector with Debezium, on the same changes.
//
// A run has a database of its own on the test's PostgreSQL (make
// postgres-up), so runs in parallel, other tests' traffic and their logical
// messages (decoded per database) do not reach its connectors. The steps:
//
//	db := cdcrun.NewDatabase(t, host, port)         // schema.sql and the publication
//	conn := db.Connector(c, "debezium", "a", extra) // created in cluster c
//	conn.WaitSnapshot(time.Minute)
//	end := db.ApplyChanges()                        // changes.sql
//	conn.WaitDelivered(end, time.Minute)
//	records := conn.Normalized()                    // cdccompare's form
package cdcrun

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/tests/cdccompare"
)

// Publication is the publication of schema.sql's tables in a run's
// database: every table of schema cdc, partitions published as their root.
const Publication = "golden_pub"

// TableIncludeList captures schema.sql's tables, the partitioned table
// through its root only: its partitions' changes are published as the
// root's, and the root's snapshot reads their rows.
const TableIncludeList = `cdc\.(all_types|ri_default|ri_full|ri_nothing|no_pk|measurements)`

// EndPrefix is the prefix of the logical message that ends changes.sql.
const EndPrefix = "golden.end"

// FixturesDir is the directory of the fixtures and golden files
// (connect/postgres/testdata/debezium), found from this source file so any
// package's test can use it.
func FixturesDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("cdcrun: no caller information to find the fixtures by")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "connect", "postgres", "testdata", "debezium")
}

// Database is a run's database: schema.sql's tables and their publication,
// dropped with the run's replication slots when the test ends.
type Database struct {
	t          *testing.T
	Host, Port string
	// Name is the database's name, unique to the run ("golden_<hex>").
	Name string
}

// NewDatabase creates a run's database on the PostgreSQL at host:port
// (user postgres, trust authentication, wal_level=logical) with
// schema.sql's tables and the Publication. Call it before the cluster
// starts, so that its cleanup — dropping the database — runs after the
// cluster's (cleanups run last in, first out).
func NewDatabase(t *testing.T, host, port string) *Database {
	t.Helper()
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		t.Fatal(err)
	}
	db := &Database{t: t, Host: host, Port: port, Name: "golden_" + hex.EncodeToString(suffix)}
	db.psql("postgres", "-c", "CREATE DATABASE "+db.Name)
	t.Cleanup(func() {
		_ = exec.Command("psql", db.args("postgres", "-c", "DROP DATABASE IF EXISTS "+db.Name+" WITH (FORCE)")...).Run()
	})
	// The settings that shape values' text form (money, dates, intervals,
	// zoned times), pinned here rather than left to how the server was set
	// up: the walsender of a connection to the database applies them too.
	db.psql("postgres", "-c", "ALTER DATABASE "+db.Name+" SET lc_monetary = 'C'",
		"-c", "ALTER DATABASE "+db.Name+" SET TimeZone = 'UTC'",
		"-c", "ALTER DATABASE "+db.Name+" SET DateStyle = 'ISO, MDY'",
		"-c", "ALTER DATABASE "+db.Name+" SET IntervalStyle = 'postgres'")
	db.runFile("schema.sql")
	db.psql(db.Name, "-c", "CREATE PUBLICATION "+Publication+" FOR TABLES IN SCHEMA cdc WITH (publish_via_partition_root = true)")
	return db
}

// args are psql's arguments to run on database: user postgres, stop at
// the first error, quiet, unaligned output without headers.
func (db *Database) args(database string, more ...string) []string {
	return append([]string{"-h", db.Host, "-p", db.Port, "-U", "postgres", "-d", database,
		"-v", "ON_ERROR_STOP=1", "-q", "-A", "-t"}, more...)
}

// psql runs psql on database with more arguments and returns what it
// printed; an error fails the test.
func (db *Database) psql(database string, more ...string) string {
	db.t.Helper()
	out, err := exec.Command("psql", db.args(database, more...)...).CombinedOutput()
	if err != nil {
		db.t.Fatalf("psql %s: %v\n%s", strings.Join(more, " "), err, out)
	}
	return string(out)
}

// runFile runs a fixture file on the database and returns the last word it
// printed.
func (db *Database) runFile(name string) string {
	db.t.Helper()
	words := strings.Fields(db.psql(db.Name, "-f", filepath.Join(FixturesDir(), name)))
	if len(words) == 0 {
		return ""
	}
	return words[len(words)-1]
}

// ApplyChanges runs changes.sql and returns the LSN of its end marker.
func (db *Database) ApplyChanges() uint64 {
	db.t.Helper()
	text := db.runFile("changes.sql")
	lsn, err := ParseLSN(text)
	if err != nil {
		db.t.Fatalf("changes.sql's end marker: %v", err)
	}
	return lsn
}

// dropSlotAtCleanup drops a replication slot when the test ends, ending
// its walsender first if it lingers after its connector.
func (db *Database) dropSlotAtCleanup(slot string) {
	db.t.Cleanup(func() {
		for _, q := range []string{
			"SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '" + slot + "' AND active_pid IS NOT NULL",
			"SELECT pg_drop_replication_slot('" + slot + "') FROM pg_replication_slots WHERE slot_name = '" + slot + "'",
		} {
			_ = exec.Command("psql", db.args("postgres", "-c", q)...).Run()
		}
	})
}

// Config is the connector config every run shares: Debezium's keys for
// the run's database, topic prefix and slot, the Publication (not created
// by the connector), TableIncludeList, and JsonConverter with schemas for
// key and value. A test adds connector.class and the keys under test.
func (db *Database) Config(prefix string) map[string]string {
	return map[string]string{
		"tasks.max":         "1",
		"database.hostname": db.Host, "database.port": db.Port, "database.user": "postgres",
		"database.password": "unused", "database.dbname": db.Name,
		"topic.prefix": prefix, "plugin.name": "pgoutput",
		"slot.name": prefix, "publication.name": Publication, "publication.autocreate.mode": "disabled",
		"table.include.list":             TableIncludeList,
		"key.converter":                  "org.apache.kafka.connect.json.JsonConverter",
		"key.converter.schemas.enable":   "true",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "true",
	}
}

// Connector is one connector of a run, created in a cluster.
type Connector struct {
	t  *testing.T
	c  *sluicetest.Cluster
	db *Database
	// Name is the connector's name.
	Name string
	// Prefix is its topic.prefix and slot name: the database's name and
	// the tag Connector was given, unique to the run.
	Prefix string
}

// Connector creates connector name in cluster c with Config(prefix) plus
// extra (connector.class at least), its prefix the database's name plus
// "_" + tag; its slot is dropped at cleanup.
func (db *Database) Connector(c *sluicetest.Cluster, name, tag string, extra map[string]string) *Connector {
	db.t.Helper()
	conn := &Connector{t: db.t, c: c, db: db, Name: name, Prefix: db.Name + "_" + tag}
	cfg := db.Config(conn.Prefix)
	maps.Copy(cfg, extra)
	db.dropSlotAtCleanup(conn.Prefix)
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": name, "config": cfg})
	return conn
}

// Topics are the connector's topics that exist now, in name order: those
// of its prefix, and its heartbeat topic.
func (conn *Connector) Topics() []string {
	conn.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listed, err := conn.c.Admin().ListTopics(ctx)
	if err != nil {
		conn.t.Fatalf("list topics: %v", err)
	}
	var out []string
	for _, name := range listed.Names() {
		if strings.HasPrefix(name, conn.Prefix+".") || name == "__debezium-heartbeat."+conn.Prefix {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Records are every committed record of the connector's topics, topic by
// topic in name order, each in offset order, headers included. A topic
// must have one partition: the order within it is what is compared.
func (conn *Connector) Records() []cdccompare.Record {
	conn.t.Helper()
	var out []cdccompare.Record
	for _, topic := range conn.Topics() {
		for _, kr := range sluicetest.ReadLog(conn.t, conn.c.Brokers, "cdcrun-reader", topic, true) {
			if kr.Attrs.IsControl() {
				continue
			}
			if kr.Partition != 0 {
				conn.t.Fatalf("%s has a record in partition %d: want one partition, whose order is the connector's", topic, kr.Partition)
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

// Normalized are Records in the golden files' form (cdccompare.Normalizer).
func (conn *Connector) Normalized() []cdccompare.Record {
	conn.t.Helper()
	out, err := cdccompare.Normalizer{Prefix: conn.Prefix, Database: conn.db.Name}.Normalize(conn.Records())
	if err != nil {
		conn.t.Fatalf("%s: %v", conn.Name, err)
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

// WaitSnapshot waits until the connector's snapshot has ended: a table
// topic holds the record marked as the snapshot's last (source.snapshot
// "last"). Changes made after it are streamed.
func (conn *Connector) WaitSnapshot(timeout time.Duration) {
	conn.t.Helper()
	sluicetest.Eventually(conn.t, timeout, func() (bool, string) {
		n := 0
		for _, topic := range conn.Topics() {
			if !strings.HasPrefix(topic, conn.Prefix+".cdc.") {
				continue
			}
			for _, rec := range conn.c.ReadTopic(topic) {
				n++
				if src, _ := payload(rec.Value)["source"].(map[string]any); src["snapshot"] == "last" {
					return true, ""
				}
			}
		}
		st, _ := conn.c.Status(conn.Name)
		return false, fmt.Sprintf("%s: %d snapshot records, none marked last; status %+v", conn.Name, n, st)
	})
}

// WaitDelivered waits until the connector has delivered changes.sql's end
// marker (its message topic holds it) and committed an offset at or past
// end, the marker's LSN: Kafka Connect commits a source offset only once
// every record before it is written, so every topic is then complete.
func (conn *Connector) WaitDelivered(end uint64, timeout time.Duration) {
	conn.t.Helper()
	sluicetest.Eventually(conn.t, timeout, func() (bool, string) {
		marked := false
		for _, rec := range conn.c.ReadTopic(conn.Prefix + ".message") {
			if m, _ := payload(rec.Value)["message"].(map[string]any); m["prefix"] == EndPrefix {
				marked = true
			}
		}
		if !marked {
			return false, conn.Name + ": no end marker in " + conn.Prefix + ".message"
		}
		lsn, body := conn.committedLSN()
		return lsn >= end, fmt.Sprintf("%s: offsets %s, want lsn ≥ %d", conn.Name, body, end)
	})
}

// committedLSN is the lsn of the connector's one committed offset as GET
// …/offsets shows it (0 while there is none), and the answer's body.
func (conn *Connector) committedLSN() (uint64, string) {
	r := conn.c.Do(http.MethodGet, "/connectors/"+conn.Name+"/offsets", nil)
	var body struct {
		Offsets []struct {
			Offset map[string]any `json:"offset"`
		} `json:"offsets"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber() // an LSN is past float64's exact integers
	if r.Status != http.StatusOK || dec.Decode(&body) != nil || len(body.Offsets) != 1 {
		return 0, r.String()
	}
	n, _ := body.Offsets[0].Offset["lsn"].(json.Number)
	lsn, err := strconv.ParseUint(string(n), 10, 64)
	if err != nil {
		return 0, string(r.Body)
	}
	return lsn, string(r.Body)
}

// ParseLSN parses PostgreSQL's text form of an LSN, "16/B374D848".
func ParseLSN(s string) (uint64, error) {
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
