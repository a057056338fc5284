package e2e

import (
	"github.com/sluice-io/sluice/sluicetest/procs"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// TestFailoverGracefulHandover stops an agent with SIGTERM while its tasks
// produce: they commit, the agent deregisters, and the tasks are RUNNING on
// the other agents within 5s — long before the 30s lease would have
// expired. Exactly-once support is off: the final commit alone must make the
// handover lose and repeat nothing.
func TestFailoverGracefulHandover(t *testing.T) {
	t.Parallel()
	const lease = 30 * time.Second
	begin := time.Now()
	since := func() time.Duration { return time.Since(begin).Round(time.Millisecond) }
	c := procs.Start(t, procs.Options{Agents: 3, Lease: lease, CoordinatorArgs: eosArgs(false), AgentArgs: eosArgs(false)})
	g := procs.Generator{Topic: c.Name("gen"), Streams: 4, Tasks: 2, Count: 2000, Rate: 200, RecordBytes: 100}
	c.CreateTopic(g.Topic, 2)
	name := c.Name("src")
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": name, "config": g.Config()})
	placed := placement(c.WaitRunning(name, g.Tasks))
	c.WaitCommittedRecords(g.Topic, 300, 30*time.Second)
	t.Logf("%v: streaming, tasks on %v", since(), placed)

	victim := c.Agent(placed[0])
	moved := tasksOn(placed, victim.Name(), name)
	stopAt := time.Now()
	took := victim.Terminate(syscall.SIGTERM, 40*time.Second)
	placed = c.WaitMoved(name, g.Tasks, lease, victim.Name())
	handover := time.Since(stopAt)
	t.Logf("%v: %s exited %v after SIGTERM; its tasks %v RUNNING elsewhere after %v: %v", since(), victim.Name(),
		took.Round(time.Millisecond), moved, handover.Round(time.Millisecond), placed)
	if handover >= 5*time.Second {
		t.Errorf("tasks of the stopped %s took %v to run elsewhere, want < 5s (lease %v)", victim.Name(), handover, lease)
	}
	if n := c.CommittedRecords(g.Topic); n >= int64(g.Streams)*g.Count {
		t.Fatalf("the run was over (%d records) before the handover: raise the count", n)
	}

	c.WaitComplete(name, g.Streams, g.Count, 2*time.Minute)
	seqs := checkPrefix(t, c, name, g, false, "at the end")
	if d := seqs.Duplicates(); d != 0 {
		t.Errorf("%d duplicates after a graceful handover, want none: the final commit must cover every record sent", d)
	}
	t.Logf("%v: %d records, every seq present once", since(), seqs.Records)
}
