package cdcrun

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/tests/cdccompare"
)

// TestGoldenFilesCover: the golden files hold what the native connector is
// checked against, so a refresh (-update) that lost a kind of event would
// weaken every comparison silently. Each config's files have every table's
// snapshot and streamed events, with tombstones; the defaults' config
// (a-defaults) adds truncates, heartbeats and transaction metadata, the
// others have none; every file is normalized (the run's names and volatile
// values gone).
func TestGoldenFilesCover(t *testing.T) {
	for _, dir := range []string{"a-defaults", "b-double-adaptive-micros", "c-string-connect-hex"} {
		recs, err := cdccompare.ReadDir(filepath.Join(FixturesDir(), dir))
		if err != nil {
			t.Fatal(err)
		}
		ops := map[string][]string{} // topic → ops, "-" a tombstone
		for _, r := range recs {
			var v struct {
				Payload map[string]any `json:"payload"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("%s: %s: %v", dir, r.Topic, err)
			}
			op := "-"
			if v.Payload != nil {
				op, _ = v.Payload["op"].(string)
				if src, ok := v.Payload["source"].(map[string]any); ok && (src["version"] != "" || src["db"] != cdccompare.GoldenDatabase) {
					t.Errorf("%s: %s: source %v is not normalized", dir, r.Topic, src)
				}
			}
			ops[r.Topic] = append(ops[r.Topic], op)
		}
		has := func(topic string, want ...string) {
			t.Helper()
			for _, op := range want {
				if !slices.Contains(ops[topic], op) {
					t.Errorf("%s: %s has no %q event (ops %v)", dir, topic, op, ops[topic])
				}
			}
		}
		has("golden.cdc.all_types", "r", "c", "u", "d", "-")
		has("golden.cdc.ri_default", "r", "c", "u", "d", "-")
		has("golden.cdc.ri_full", "r", "u", "d", "-")
		has("golden.cdc.ri_nothing", "r", "c")
		has("golden.cdc.no_pk", "r", "c", "u", "d", "-")
		has("golden.cdc.measurements", "r", "c", "u", "d", "-")
		has("golden.message", "m")
		defaults := strings.HasPrefix(dir, "a-")
		if slices.Contains(ops["golden.cdc.ri_nothing"], "t") != defaults {
			t.Errorf("%s: truncate events %v, want them only with skipped.operations=none", dir, ops["golden.cdc.ri_nothing"])
		}
		for _, topic := range []string{"golden.transaction", "__debezium-heartbeat.golden"} {
			if _, ok := ops[topic]; ok != defaults {
				t.Errorf("%s: topic %s present %v, want it only in a-defaults", dir, topic, ok)
			}
		}
	}
}
