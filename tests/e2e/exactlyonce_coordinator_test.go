package e2e

import (
	"fmt"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestExactlyOnceCoordinatorRestartRestartsNoTask kills the coordinator
// (SIGKILL) in the middle of an exactly-once generator run and restarts it:
// the agents keep producing while it is down, the restarted coordinator
// adopts their tasks where they run, no task stops or starts again, and the
// topic ends up with every seq of every stream exactly once.
func TestExactlyOnceCoordinatorRestartRestartsNoTask(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	since := func() time.Duration { return time.Since(begin).Round(time.Millisecond) }
	c := procs.Start(t, procs.Options{Agents: 3, Lease: 3 * time.Second,
		CoordinatorArgs: eosArgs(true), AgentArgs: eosArgs(true)})
	g := procs.Generator{Topic: c.Name("gen"), Streams: 6, Tasks: 3, Count: 1500, Rate: 300, RecordBytes: 100}
	c.CreateTopic(g.Topic, 3)
	name := c.Name("src")
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": name, "config": g.Config()})
	placed := placement(c.WaitRunning(name, g.Tasks))
	c.WaitCommittedRecords(g.Topic, 300, 30*time.Second)
	t.Logf("%v: streaming, tasks on %v", since(), placed)

	marks := c.Marks()
	c.Coordinator.Kill()
	downAt := c.CommittedRecords(g.Topic)
	if total := int64(g.Streams) * g.Count; downAt >= total/2 {
		t.Fatalf("%d of %d records before the coordinator crash: raise the count", downAt, total)
	}
	c.WaitCommittedRecords(g.Topic, downAt+300, 30*time.Second)
	t.Logf("%v: coordinator down; agents went on from %d to %d committed records", since(), downAt, c.CommittedRecords(g.Topic))
	cmark := c.Coordinator.Mark()
	c.Coordinator.Restart()
	c.WaitHealthy()
	c.WaitRegistered(cmark, "agent-1", "agent-2", "agent-3")
	if got := placement(c.WaitRunning(name, g.Tasks)); !maps.Equal(got, placed) {
		t.Errorf("after the coordinator restart tasks run on %v, want %v (unmoved)", got, placed)
	}
	t.Logf("%v: coordinator restarted", since())

	c.WaitComplete(name, g.Streams, g.Count, 2*time.Minute)
	if starts := c.TaskStarts(marks); len(starts) > 0 {
		t.Errorf("tasks restarted after the coordinator crash: %v\n%s", starts, c.StartLines(marks))
	}
	for _, a := range c.Agents {
		for _, msg := range []string{`msg="task stopped"`, `msg="task stopped with errors"`, `msg="task failed"`} {
			if lines := a.LogLinesSince(marks[a.Name()], msg); len(lines) > 0 {
				t.Errorf("%s after the coordinator crash:\n%s", a.Name(), strings.Join(lines, "\n"))
			}
		}
	}
	seqs := checkPrefix(t, c, name, g, true, "at the end")
	if want := int(int64(g.Streams) * g.Count); seqs.Records != want || seqs.Duplicates() != 0 {
		t.Errorf("topic holds %d records (%d duplicates), want %d exactly once", seqs.Records, seqs.Duplicates(), want)
	}
	t.Logf("%v: %s", since(), fmt.Sprintf("%d records exactly once; no task restarted", seqs.Records))
}
