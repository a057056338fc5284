package plugins

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/tests/cdccompare"
	"github.com/sluice-io/sluice/tests/cdcrun"
)

// TestNativePostgresGolden: the native PostgreSQL connector, in the agent,
// under each of goldenConfigs on the same fixtures — the snapshot of
// schema.sql's tables, then changes.sql streamed — writes what Debezium
// 3.6.1 wrote: every record of every topic, normalized by cdccompare, is
// the golden files', key by key (docs/cdc-postgres-compat.md).
func TestNativePostgresGolden(t *testing.T) {
	began := time.Now()
	host, port := postgres(t)
	db := cdcrun.NewDatabase(t, host, port)
	c := sluicetest.Start(t, sluicetest.Options{})
	conns := make([]*cdcrun.Connector, len(goldenConfigs))
	for i, gc := range goldenConfigs {
		extra := maps.Clone(gc.config)
		extra["connector.class"] = nativeClass
		conns[i] = db.Connector(c, "native-"+gc.tag, gc.tag, extra)
	}
	for _, conn := range conns {
		conn.WaitSnapshot(60 * time.Second)
	}
	end := db.ApplyChanges()
	for _, conn := range conns {
		conn.WaitDelivered(end, 60*time.Second)
	}
	t.Logf("snapshot and changes delivered after %v", time.Since(began).Round(time.Millisecond))
	for i, gc := range goldenConfigs {
		want, err := cdccompare.ReadDir(filepath.Join(cdcrun.FixturesDir(), gc.dir))
		if err != nil {
			t.Fatal(err)
		}
		if diffs := cdccompare.Diff(want, conns[i].Normalized()); len(diffs) > 0 {
			lines := make([]string, len(diffs))
			for j, d := range diffs {
				lines[j] = "  " + d.String()
			}
			t.Errorf("%s: the native connector's output differs from Debezium's in %d topics (the first difference of each):\n%s",
				gc.dir, len(diffs), strings.Join(lines, "\n"))
		}
	}
}
