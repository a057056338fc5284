package placements

import (
	"math"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

var id = api.TaskID{Connector: "c", Task: 0}

func TestAdopt(t *testing.T) {
	tb := New()
	tb.ObserveGeneration(7) // the status topic's highest
	if !tb.Adopt("a", wire.RunningTask{ID: id, Generation: 5, ConfigHash: "h"}) {
		t.Fatal("a recorded generation was not adopted")
	}
	if p, _ := tb.Get(id); p != (Placement{Agent: "a", Generation: 5, Hash: "h"}) || tb.Generation() != 7 {
		t.Fatalf("adopted = %+v, gen %d", p, tb.Generation())
	}
	// Another agent's report of the same task does not move it.
	tb.Adopt("b", wire.RunningTask{ID: id, Generation: 4, ConfigHash: "old"})
	if p, _ := tb.Get(id); p.Agent != "a" {
		t.Fatalf("a report moved the placement: %+v", p)
	}
	// A placement presumed from the status topic learns its hash.
	tb.Presume(id, "b", 7)
	tb.Adopt("b", wire.RunningTask{ID: id, Generation: 7, ConfigHash: "h7"})
	if p, _ := tb.Get(id); p != (Placement{Agent: "b", Generation: 7, Hash: "h7"}) {
		t.Fatalf("presumed then reported = %+v", p)
	}
}

// TestAdoptRefusesGenerationsNeverIssued: a report of a generation beyond
// the highest issued or recorded, or not positive, neither places the task
// nor moves the counter, however large it is.
func TestAdoptRefusesGenerationsNeverIssued(t *testing.T) {
	other := api.TaskID{Connector: "c", Task: 1}
	for _, gen := range []int64{8, 999999, math.MaxInt64 - 1, math.MaxInt64, 0, -1, math.MinInt64} {
		tb := New()
		tb.ObserveGeneration(7)
		if tb.Adopt("a", wire.RunningTask{ID: other, Generation: gen}) {
			t.Errorf("generation %d adopted, with 7 the highest issued", gen)
		}
		if tb.Placed(other) || tb.Generation() != 7 {
			t.Errorf("generation %d: placed %v, counter %d; want unplaced at 7", gen, tb.Placed(other), tb.Generation())
		}
	}
}

func TestRestartAndForget(t *testing.T) {
	tb := New()
	tb.Replace(map[api.TaskID]Placement{id: {Agent: "a", Generation: 3, Hash: "h"}}, 3)
	tb.Restart(id)
	if p, _ := tb.Get(id); p.Hash != "" {
		t.Fatalf("restart kept the hash: %+v", p)
	}
	if tb.ForgetIf(id, "a", 2) || tb.ForgetIf(id, "b", 3) {
		t.Fatal("ForgetIf dropped a placement that changed")
	}
	if !tb.ForgetIf(id, "a", 3) || tb.Placed(id) {
		t.Fatal("ForgetIf kept the refused placement")
	}
}

func TestGenerationsOnlyGrowAndSaturate(t *testing.T) {
	tb := New()
	tb.ObserveGeneration(9)
	tb.ObserveGeneration(4)
	if tb.Generation() != 9 {
		t.Fatalf("generation went down: %d", tb.Generation())
	}
	if NextGeneration(9) != 10 || NextGeneration(math.MaxInt64) != math.MaxInt64 {
		t.Fatal("NextGeneration must count up and saturate")
	}
}
