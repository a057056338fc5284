package offsets

import (
	"encoding/json"
	"testing"

	"github.com/sluice-io/sluice/api"
)

// The line under a change counts the partitions that move: one written
// with the position it has is not one.
func TestSummary(t *testing.T) {
	at := func(n string) map[string]any { return map[string]any{"kafka_offset": json.Number(n)} }
	p := map[string]any{"kafka_topic": "ev", "kafka_partition": json.Number("0")}
	same := api.OffsetChange{Partition: p, From: at("5"), To: at("5")}
	moved := api.OffsetChange{Partition: p, From: at("5"), To: at("0")}
	for _, c := range []struct {
		res  api.OffsetsChanges
		want string
	}{
		{api.OffsetsChanges{Changes: []api.OffsetChange{same}, HistoryID: "h1"}, "nothing changed (1 partition already there); offsets history entry h1"},
		{api.OffsetsChanges{Changes: []api.OffsetChange{same}, DryRun: true}, "dry run: nothing would change (1 partition already there), nothing was written"},
		{api.OffsetsChanges{Changes: []api.OffsetChange{moved, same}, HistoryID: "h2"}, "1 partition changed; offsets history entry h2"},
		{api.OffsetsChanges{Changes: []api.OffsetChange{moved, moved}, DryRun: true}, "dry run: 2 partitions would change, nothing was written"},
		{api.OffsetsChanges{Changes: []api.OffsetChange{}, HistoryID: "h3"}, "nothing changed; offsets history entry h3"},
	} {
		if got := summary(c.res); got != c.want {
			t.Errorf("summary = %q, want %q", got, c.want)
		}
	}
}
