package integration

import (
	"fmt"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/wait"
)

// Placement at a start (docs/failover.md, "Placement after a restart"):
// after a restart every task goes back to the agent that ran it, agents
// that start together share the tasks no agent ran, and an agent that joins
// a running cluster moves nothing.

// taskAgents waits until every task of the connectors names is RUNNING and
// returns where each runs ("<connector>/<task>" → agent).
func taskAgents(c *sluicetest.Cluster, names map[string]int) map[string]string {
	c.T.Helper()
	out := map[string]string{}
	sluicetest.Eventually(c.T, 60*time.Second, func() (bool, string) {
		clear(out)
		for name, n := range names {
			st, _ := c.Status(name)
			if len(st.Tasks) != n {
				return false, fmt.Sprintf("%s: %+v", name, st)
			}
			for _, ts := range st.Tasks {
				if ts.State != "RUNNING" {
					return false, fmt.Sprintf("%s: %+v", name, st)
				}
				out[fmt.Sprintf("%s/%d", name, ts.ID)] = ts.WorkerID
			}
		}
		return true, ""
	})
	return out
}

// perAgent counts the tasks on each agent.
func perAgent(where map[string]string) map[string]int {
	out := map[string]int{}
	for _, a := range where {
		out[a]++
	}
	return out
}

// lopsided starts a two-agent cluster whose placement no fresh placement
// would make: connector x's 4 tasks all on agent-2 (created while agent-1
// was away), y's 4 all on agent-1.
func lopsided(t *testing.T, opts sluicetest.Options) (*sluicetest.Cluster, map[string]int, map[string]string) {
	t.Helper()
	opts.Agents = 2
	c := sluicetest.Start(t, opts)
	c.StopAgent(0)
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		n := c.Coordinator.RegisteredAgents()
		return n == 1, fmt.Sprintf("%d agents registered", n)
	})
	names := map[string]int{"x": 4, "y": 4}
	mustCreate(c, "x", generatorCfg(c.Name("x"), "streams", "4", "tasks.max", "4"), "")
	taskAgents(c, map[string]int{"x": 4})
	c.StartAgent(0)
	c.WaitAgents(2)
	mustCreate(c, "y", generatorCfg(c.Name("y"), "streams", "4", "tasks.max", "4"), "")
	before := taskAgents(c, names)
	for task, a := range before {
		if want := map[byte]string{'x': "agent-2", 'y': "agent-1"}[task[0]]; a != want {
			t.Fatalf("before the restart: %v, want x on agent-2 and y on agent-1", before)
		}
	}
	return c, names, before
}

// TestPlacementAfterRestart restarts the coordinator alone, every agent
// at once under a running coordinator, and everything at once as `sluice
// dev` stops and starts (agent-1 registering first each time): every task
// goes back to the agent that ran it, lopsided as that is.
func TestPlacementAfterRestart(t *testing.T) {
	t.Parallel()
	t.Run("coordinator", func(t *testing.T) {
		t.Parallel()
		c, names, before := lopsided(t, sluicetest.Options{Lease: 10 * time.Second})
		c.StopCoordinator()
		c.StartCoordinator()
		c.WaitAgents(2)
		if after := taskAgents(c, names); !maps.Equal(after, before) {
			t.Fatalf("after the coordinator's restart: %v, want %v", after, before)
		}
	})
	t.Run("every agent, under a running coordinator", func(t *testing.T) {
		t.Parallel()
		c, names, before := lopsided(t, sluicetest.Options{Lease: 10 * time.Second, PlacementSettle: 2 * time.Second})
		c.StopAgents(0, 1)
		c.StartAgent(0)
		c.StartAgent(1)
		c.WaitAgents(2)
		if after := taskAgents(c, names); !maps.Equal(after, before) {
			t.Fatalf("after the agents' restart: %v, want every task back where it ran: %v", after, before)
		}
	})
	t.Run("everything, as sluice dev", func(t *testing.T) {
		t.Parallel()
		c, names, before := lopsided(t, sluicetest.Options{Lease: 10 * time.Second, PlacementSettle: 2 * time.Second})
		// sluice dev's shutdown: the coordinator stops assigning, the
		// agents stop their own tasks and leave, the coordinator stops.
		c.Coordinator.StopAssigning()
		c.StopAgents(0, 1)
		c.StopCoordinator()
		// Back in the other order: agent-1 registers first, and takes
		// only its own tasks.
		c.StartCoordinator()
		c.StartAgent(0)
		c.StartAgent(1)
		c.WaitAgents(2)
		if after := taskAgents(c, names); !maps.Equal(after, before) {
			t.Fatalf("after the restart: %v, want every task back where it ran: %v", after, before)
		}
	})
}

// TestPlacementAgentsStartTogether: ten tasks that no agent ran wait for
// agents; two agents that start together share them, five each (within
// one), with no rebalance.
func TestPlacementAgentsStartTogether(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, Lease: time.Second, PlacementSettle: 5 * time.Second})
	c.StopAgent(0)
	c.StopAgent(1)
	// The agents that left are no longer expected back (their leases ran
	// out): what follows is the settle window's work alone.
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		r := c.Must(http.StatusOK, "GET", "/sluice/agents", nil)
		var list struct {
			Agents []struct{ ID string } `json:"agents"`
		}
		r.JSON(t, &list)
		return len(list.Agents) == 0, string(r.Body)
	})
	mustCreate(c, "ten", generatorCfg(c.Name("ten"), "streams", "10", "tasks.max", "10"), "")
	c.WaitState("ten", "RUNNING", 10, "UNASSIGNED")

	c.StartAgents(0, 1)
	c.WaitAgents(2)
	where := taskAgents(c, map[string]int{"ten": 10})
	n := perAgent(where)
	if n["agent-1"]+n["agent-2"] != 10 || n["agent-1"] < 4 || n["agent-2"] < 4 {
		t.Fatalf("tasks per agent %v, want 5 each (within one): %v", n, where)
	}
}

// TestPlacementJoinMovesNothing: a third agent that joins a running
// cluster — a start's settle window set, too — moves no task.
func TestPlacementJoinMovesNothing(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 3, PlacementSettle: 2 * time.Second})
	c.StopAgent(2)
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		n := c.Coordinator.RegisteredAgents()
		return n == 2, fmt.Sprintf("%d agents registered", n)
	})
	names := map[string]int{"ten": 10}
	mustCreate(c, "ten", generatorCfg(c.Name("ten"), "streams", "10", "tasks.max", "10"), "")
	before := taskAgents(c, names)
	c.StartAgent(2)
	c.WaitAgents(3)
	wait.Consistently(t, 2*time.Second, func() (bool, string) {
		after := taskAgents(c, names)
		return maps.Equal(after, before), fmt.Sprintf("tasks moved: %v -> %v", before, after)
	})
}
