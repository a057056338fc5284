package plugins

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
)

// TestDebeziumAgentKilledMidStream: the agent running Debezium's task is
// killed (SIGKILL, its connector host with it) while changes stream; the
// task resumes on the other agent from the last committed LSN and every
// change is in the topic — duplicates allowed, as Debezium documents its
// delivery at least once.
func TestDebeziumAgentKilledMidStream(t *testing.T) {
	postgres(t)
	path, hostDir := hostSetup(t)
	sluiceBinary(t)
	c := procs.Start(t, procs.Options{Agents: 2, AgentArgs: []string{
		"--plugin-path", strings.Join(path, ","), "--connect-host-dir", hostDir}})
	d := newDebezium(t, c, nil)
	d.waitOps(90*time.Second, "r,r,r")
	d.killMidStream(c, 120*time.Second)
}

// killMidStream kills the agent that runs connector pg's task while rows
// are inserted — some streamed before, the rest while it is gone — waits
// until the task runs on another agent and every insert is in the topic,
// and returns how many arrived more than once.
func (d *debezium) killMidStream(c *procs.Cluster, timeout time.Duration) (duplicates int) {
	t := d.t
	t.Helper()
	placed := c.WaitRunning("pg", 1).Tasks[0].WorkerID
	const batches, rows = 30, 20
	insert := func(b int) {
		var vals []string
		for i := range rows {
			id := 100 + b*rows + i
			vals = append(vals, fmt.Sprintf("(%d, 'row %d')", id, id))
		}
		d.sql("INSERT INTO " + d.table + " VALUES " + strings.Join(vals, ", "))
	}
	for b := range batches / 3 {
		insert(b)
	}
	// Some of the first batches are streamed (and maybe committed) when
	// the agent dies; the rest are written while it is gone.
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		n := strings.Count(d.ops(), "c")
		return n > 0, fmt.Sprintf("%d inserts streamed", n)
	})
	c.Agent(placed).Kill()
	t.Logf("killed %s, which ran the task", placed)
	for b := batches / 3; b < batches; b++ {
		insert(b)
	}
	c.WaitTask("pg", func(state, worker string) bool { return state == "RUNNING" && worker != placed }, "the task RUNNING on the other agent")

	var seen map[float64]int
	sluicetest.Eventually(t, timeout, func() (bool, string) {
		seen = map[float64]int{}
		for _, ev := range d.events() {
			if after, _ := ev["after"].(map[string]any); ev["op"] == "c" && after != nil {
				if id, ok := after["id"].(float64); ok {
					seen[id]++
				}
			}
		}
		var missing []int
		for id := 100; id < 100+batches*rows; id++ {
			if seen[float64(id)] == 0 {
				missing = append(missing, id)
			}
		}
		return len(missing) == 0, fmt.Sprintf("%d of %d inserts missing (first %v)", len(missing), batches*rows, missing[:min(len(missing), 5)])
	})
	for _, n := range seen {
		duplicates += n - 1
	}
	t.Logf("every one of %d inserts arrived; %d duplicates", batches*rows, duplicates)
	return duplicates
}
