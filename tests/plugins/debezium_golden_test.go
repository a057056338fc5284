package plugins

import (
	"flag"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/tests/cdccompare"
	"github.com/sluice-io/sluice/tests/cdcrun"
)

var update = flag.Bool("update", false, "rewrite the golden files of connect/postgres/testdata/debezium with Debezium's output")

// goldenConfigs are the Debezium configurations whose output the golden
// files hold, each in the directory of its name under cdcrun.FixturesDir,
// on top of cdcrun's shared config; tag names the connector and its
// topic prefix.
var goldenConfigs = []struct {
	dir, tag string
	config   map[string]string
}{
	// Debezium's defaults, with every optional topic on: transaction
	// metadata, truncate events, heartbeats.
	{"a-defaults", "a", map[string]string{
		"provide.transaction.metadata": "true",
		"skipped.operations":           "none",
		"heartbeat.interval.ms":        "200",
	}},
	{"b-double-adaptive-micros", "b", map[string]string{
		"decimal.handling.mode":  "double",
		"time.precision.mode":    "adaptive_time_microseconds",
		"interval.handling.mode": "string",
		"binary.handling.mode":   "base64",
	}},
	{"c-string-connect-hex", "c", map[string]string{
		"decimal.handling.mode": "string",
		"time.precision.mode":   "connect",
		"binary.handling.mode":  "hex",
	}},
}

// TestDebeziumGolden: Debezium 3.6.1's PostgreSQL connector, through the
// connector host with JsonConverter (schemas on for key and value), under
// each of goldenConfigs at once on one database: the snapshot of
// schema.sql's tables, then changes.sql streamed. Every record of every
// topic the connectors write — table changes, tombstones, heartbeats,
// transaction metadata, logical messages — normalized by cdccompare, is
// the same as in the golden files, key by key; with -update they are
// written as the golden files instead (docs/cdc-postgres-compat.md).
func TestDebeziumGolden(t *testing.T) {
	began := time.Now()
	host, port := postgres(t)
	db := cdcrun.NewDatabase(t, host, port) // before the cluster: dropped after it
	c := start(t, 1)
	conns := make([]*cdcrun.Connector, len(goldenConfigs))
	for i, gc := range goldenConfigs {
		extra := maps.Clone(gc.config)
		extra["connector.class"] = debeziumClass
		conns[i] = db.Connector(c, "golden-"+gc.tag, gc.tag, extra)
	}
	for _, conn := range conns {
		conn.WaitSnapshot(120 * time.Second)
	}
	t.Logf("snapshots done after %v", time.Since(began).Round(time.Millisecond))
	end := db.ApplyChanges()
	for _, conn := range conns {
		conn.WaitDelivered(end, 60*time.Second)
	}
	t.Logf("changes delivered after %v", time.Since(began).Round(time.Millisecond))

	for i, gc := range goldenConfigs {
		got := conns[i].Normalized()
		dir := filepath.Join(cdcrun.FixturesDir(), gc.dir)
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
			lines := make([]string, len(diffs))
			for j, d := range diffs {
				lines[j] = "  " + d.String()
			}
			t.Errorf("%s: Debezium's output differs from the golden files in %d topics (the first difference of each):\n%s",
				gc.dir, len(diffs), strings.Join(lines, "\n"))
		}
	}
	t.Logf("done after %v", time.Since(began).Round(time.Millisecond))
}
