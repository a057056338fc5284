package rollout

import (
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

// TestRolloutLines checks the progress line of each batch, and that a
// terminal's redraw goes back up over the lines drawn before.
func TestRolloutLines(t *testing.T) {
	conns := func(done, pending int) []api.RolloutConnector {
		var out []api.RolloutConnector
		for range done {
			out = append(out, api.RolloutConnector{State: "applied"})
		}
		for range pending {
			out = append(out, api.RolloutConnector{State: api.BatchPending})
		}
		return out
	}
	r := api.Rollout{Batches: []api.RolloutBatch{
		{State: api.BatchDone, Connectors: conns(1, 0)},
		{State: api.BatchVerifying, Connectors: conns(5, 5)},
		{State: api.BatchPending, Connectors: conns(0, 3)},
	}}
	want := []string{
		"batch 1/3 [##########] 1/1 done",
		"batch 2/3 [#####.....] 5/10 verifying",
		"batch 3/3 [..........] 0/3 pending",
	}
	if got := rolloutLines(r); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s", strings.Join(got, "\n"))
	}
	var b strings.Builder
	redraw(&b, want, want[:1])
	if b.String() != "\033[3A\r"+want[0]+"\033[K\n" {
		t.Fatalf("redraw %q", b.String())
	}
}
