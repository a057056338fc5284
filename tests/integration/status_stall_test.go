package integration

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/sluicetest"
)

// TestStalledStatusWriterCostsNoLease holds the leader's status writer for
// three agent leases, as a stalled broker would (issue 12 §6): heartbeats
// must still be answered from memory, so no agent is declared lost and no
// task moves or restarts; once the writer runs again, the statuses catch up.
func TestStalledStatusWriterCostsNoLease(t *testing.T) {
	t.Parallel()
	const lease = time.Second
	var held atomic.Bool
	release := make(chan struct{})
	var holds atomic.Int32
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, Lease: lease, Faults: faults.Func(func(ctx context.Context, at faults.Point, _ any) error {
		if at != faults.StatusWrite || !held.Load() {
			return nil
		}
		holds.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	})})
	name := c.Name("stall")
	mustCreate(c, name, generatorCfg(c.Name("stall-data"), "streams", "4", "tasks.max", "4"), "")
	before := c.WaitState(name, "RUNNING", 4, "RUNNING")
	gens := fmt.Sprint(taskGenerations(c, name))

	held.Store(true)
	// A restart asks for status writes, so the writer is surely held.
	c.Must(204, "POST", "/connectors/"+name+"/restart", nil)
	sluicetest.Eventually(t, 5*time.Second, func() (bool, string) {
		return holds.Load() > 0, "the status writer was never held"
	})
	sluicetest.Consistently(t, 3*lease, func() (bool, string) {
		n := c.Coordinator.RegisteredAgents()
		return n == 2, fmt.Sprintf("%d agents registered while the status writer was held, want 2", n)
	})
	held.Store(false)
	close(release)

	after := c.WaitState(name, "RUNNING", 4, "RUNNING")
	for i, ts := range after.Tasks {
		if ts.WorkerID != before.Tasks[i].WorkerID {
			t.Errorf("task %d moved from %s to %s", ts.ID, before.Tasks[i].WorkerID, ts.WorkerID)
		}
	}
	if now := fmt.Sprint(taskGenerations(c, name)); now != gens {
		t.Errorf("task generations went from %v to %v: a task was restarted or moved", gens, now)
	}
}
