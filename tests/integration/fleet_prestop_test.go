package integration

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/wait"
)

// TestPreStopDrainIsLiftedWhenTheAgentIsBack walks the Kubernetes hook's
// cycle (deploy/k8s, issue 37): the agent's pre-stop hook drains it, the
// drain shows who made it and counts its own moves; the same process
// registering again (with a new leader) leaves it drained; a new process
// of the agent is uncordoned by the leader and takes tasks again. An
// operator's cordon is never lifted so: not when the hook drains the
// agent too, nor when the agent comes back. And a second drain of an
// agent counts only its own moves.
func TestPreStopDrainIsLiftedWhenTheAgentIsBack(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2})
	topic := c.Name("prestop-data")
	gen := c.Name("gen")
	mustCreate(c, gen, generatorCfg(topic, "streams", "4", "tasks.max", "4"), "")
	c.WaitState(gen, "RUNNING", 4, "RUNNING")
	onAgent1 := loadsOf(settledWorkers(c, gen))["agent-1"]
	if onAgent1 == 0 {
		t.Fatalf("agent-1 runs none of %s's tasks: nothing to drain", gen)
	}

	// The hook: PUT …/drain?origin=pre-stop.
	var st api.DrainStatus
	c.Must(http.StatusAccepted, "PUT", "/sluice/agents/agent-1/drain?origin=pre-stop", nil).JSON(t, &st)
	if st.Origin != api.CordonPreStop {
		t.Fatalf("the pre-stop drain's status: %+v", st)
	}
	if st = waitDrained(c, "agent-1"); st.Moved != onAgent1 || st.Origin != api.CordonPreStop {
		t.Fatalf("the pre-stop drain ended %+v, want %d moved", st, onAgent1)
	}
	a := agentsOf(c)["agent-1"]
	if a.State != api.AgentDraining || a.Cordon == nil || a.Cordon.Origin != api.CordonPreStop || !a.Cordon.Since.Equal(st.StartedAt) {
		t.Fatalf("agent-1 after its pre-stop drain: %s", markOf(a))
	}

	// A new leader: the same process registers again, mid-hook as far as
	// anyone knows. It stays drained.
	c.StopCoordinator()
	c.StartCoordinator()
	c.WaitAgents(2)
	wait.Consistently(t, 2*time.Second, func() (bool, string) {
		a := agentsOf(c)["agent-1"]
		return a.State == api.AgentDraining, "agent-1, the same process registered again: " + markOf(a)
	})

	// The pod restarts: a new process of agent-1 registers, and the leader
	// lifts the drain its hook made.
	c.StopAgent(0)
	c.StartAgent(0)
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		a := agentsOf(c)["agent-1"]
		return a.Registered && a.State == api.AgentActive && a.Cordon == nil, "agent-1 back: " + markOf(a)
	})

	// A rebalance gives agent-1 tasks again; an operator's second drain of
	// it counts only its own moves.
	c.Must(http.StatusAccepted, "POST", "/sluice/rebalance", nil)
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		loads := loadsOf(workersOf(c, gen))
		return loads["agent-1"] >= 1 && loads["agent-2"] >= 1, fmt.Sprintf("after the rebalance: %v", loads)
	})
	onAgent1 = loadsOf(settledWorkers(c, gen))["agent-1"]
	c.Must(http.StatusAccepted, "PUT", "/sluice/agents/agent-1/drain", nil)
	if st = waitDrained(c, "agent-1"); st.Moved != onAgent1 || st.Origin != api.CordonOperator {
		t.Fatalf("the second drain of agent-1 ended %+v, want %d moved (this drain's only) by the operator", st, onAgent1)
	}
	c.Must(http.StatusOK, "PUT", "/sluice/agents/agent-1/uncordon", nil)

	// agent-2: an operator cordons it, then its hook drains it (the
	// drain must wait for agent-1 to take the tasks). It comes back
	// cordoned: the mark is the operator's.
	c.Must(http.StatusOK, "PUT", "/sluice/agents/agent-2/cordon", nil)
	c.Must(http.StatusAccepted, "PUT", "/sluice/agents/agent-2/drain?origin=pre-stop", nil)
	if st = waitDrained(c, "agent-2"); st.Origin != api.CordonOperator {
		t.Fatalf("a pre-stop drain of an operator's cordon: %+v, want it the operator's", st)
	}
	c.StopAgent(1)
	c.StartAgent(1)
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		a := agentsOf(c)["agent-2"]
		return a.Registered, "agent-2 back: " + markOf(a)
	})
	wait.Consistently(t, 2*time.Second, func() (bool, string) {
		a := agentsOf(c)["agent-2"]
		return a.State == api.AgentDraining && a.Cordon != nil && a.Cordon.Origin == api.CordonOperator,
			"agent-2, an operator's, after its restart: " + markOf(a)
	})
}

// markOf is an agent's state and mark, for a message.
func markOf(a api.AgentInfo) string {
	s := fmt.Sprintf("state %s, registered %v, started %s", a.State, a.Registered, a.StartedAt.Format(time.RFC3339Nano))
	if a.Cordon != nil {
		s += fmt.Sprintf(", cordon %+v", *a.Cordon)
	}
	return s
}
