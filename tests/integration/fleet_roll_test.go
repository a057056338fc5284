package integration

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/sluicetest"
)

// getRoll is GET /sluice/fleet/rolls/{id}.
func getRoll(c *sluicetest.Cluster, id string) api.AgentRoll {
	c.T.Helper()
	var r api.AgentRoll
	c.Must(http.StatusOK, "GET", "/sluice/fleet/rolls/"+id, nil).JSON(c.T, &r)
	return r
}

// rolledAgent is agent id of roll r.
func rolledAgent(t testing.TB, r api.AgentRoll, id string) api.RolledAgent {
	t.Helper()
	for _, a := range r.Agents {
		if a.ID == id {
			return a
		}
	}
	t.Fatalf("roll %s has no agent %s", r.ID, id)
	return api.RolledAgent{}
}

// waitRollStep waits until agent of roll id is at step, and returns the
// roll then; a roll that ends first fails the test.
func waitRollStep(c *sluicetest.Cluster, id, agent, step string) api.AgentRoll {
	c.T.Helper()
	var r api.AgentRoll
	sluicetest.Eventually(c.T, 90*time.Second, func() (bool, string) {
		r = getRoll(c, id)
		if r.State == api.AgentRollFailed || r.State == api.AgentRollAborted {
			c.T.Fatalf("roll %s is %s: %s", id, r.State, r.Error)
		}
		return rolledAgent(c.T, r, agent).Step == step, fmt.Sprintf("roll %s: %+v", r.State, r.Progress)
	})
	return r
}

// checkDrainedAway checks that agent runs no task and every task of name
// runs, on another agent.
func checkDrainedAway(c *sluicetest.Cluster, name, agent string, tasks int) {
	c.T.Helper()
	st := c.WaitState(name, "RUNNING", tasks, "RUNNING")
	for _, ts := range st.Tasks {
		if ts.WorkerID == agent {
			c.T.Fatalf("task %s-%d runs on %s, which the roll drained", name, ts.ID, agent)
		}
	}
	if n := len(agentsOf(c)[agent].Tasks); n != 0 {
		c.T.Fatalf("the drained %s still has %d task(s)", agent, n)
	}
}

// TestRollAgents is a server-side rolling restart of two agents of three:
// the coordinator drains each in turn, the test restarts it when the roll
// waits for it (the coordinator runs no command), and the coordinator
// sees it back (a later started_at) and uncordons it. Every task runs
// elsewhere while its agent is away, and the roll shows its progress.
func TestRollAgents(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 3})
	name := c.Name("rolled")
	mustCreate(c, name, generatorCfg(c.Name("roll-data"), "streams", "6", "tasks.max", "6"), "")
	c.WaitState(name, "RUNNING", 6, "RUNNING")
	before := agentsOf(c)

	wantError(t, c.Do("POST", "/sluice/fleet/rolls", map[string]any{"agents": []string{"agent-1", "nope"}}), http.StatusNotFound, "Agent nope not found")
	var r api.AgentRoll
	created := c.Must(http.StatusCreated, "POST", "/sluice/fleet/rolls", map[string]any{"agents": []string{"agent-2", "agent-1"}, "timeout": "90s"})
	created.JSON(t, &r)
	if r.State != api.AgentRollRunning || r.Progress.Total != 2 || r.Request.BatchSize != 1 || len(r.Agents) != 2 || r.Agents[0].ID != "agent-2" {
		t.Fatalf("roll %+v", r)
	}
	wantError(t, c.Do("POST", "/sluice/fleet/rolls", map[string]any{"agents": []string{"agent-1"}}), http.StatusConflict,
		"Agent agent-1 is already in roll "+r.ID+" (running): wait for it to end or abort it")

	for i, id := range []string{"agent-2", "agent-1"} {
		got := waitRollStep(c, r.ID, id, api.RollWaitingRestart)
		if got.Progress.Done != i || len(got.Progress.Current) != 1 || got.Progress.Current[0].Agent != id {
			t.Fatalf("progress while %s waits: %+v", id, got.Progress)
		}
		if a := agentsOf(c)[id]; a.State != api.AgentDraining {
			t.Fatalf("%s waits for its restart %s", id, a.State)
		}
		checkDrainedAway(c, name, id, 6)
		n := map[string]int{"agent-1": 0, "agent-2": 1}[id]
		c.StopAgent(n)
		c.StartAgent(n)
		waitRollStep(c, r.ID, id, api.RollDone)
		c.WaitState(name, "RUNNING", 6, "RUNNING")
	}
	r = getRoll(c, r.ID)
	if r.State != api.AgentRollDone || r.Progress.Done != 2 || len(r.Progress.Current) != 0 {
		t.Fatalf("roll at the end: %+v", r)
	}
	after := agentsOf(c)
	for _, id := range []string{"agent-1", "agent-2"} {
		a, ra := after[id], rolledAgent(t, r, id)
		if a.State != api.AgentActive || !a.Registered || !a.StartedAt.After(before[id].StartedAt) ||
			!ra.RestartedAt.Equal(a.StartedAt) || !ra.StartedAt.Equal(before[id].StartedAt) || ra.Moved == 0 {
			t.Fatalf("%s after the roll: %+v, in the roll %+v (before: started %s)", id, a, ra, before[id].StartedAt)
		}
	}
	if a := after["agent-3"]; a.State != api.AgentActive || !a.StartedAt.Equal(before["agent-3"].StartedAt) {
		t.Fatalf("agent-3, not rolled: %+v", a)
	}
	var list api.AgentRollList
	c.Must(http.StatusOK, "GET", "/sluice/fleet/rolls", nil).JSON(t, &list)
	if len(list.Rolls) != 1 || list.Rolls[0].ID != r.ID {
		t.Fatalf("rolls %+v", list)
	}
	// The start is in the audit trail, as every fleet write.
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		var log api.AuditLog
		c.Must(http.StatusOK, "GET", "/sluice/audit", nil).JSON(t, &log)
		for _, rec := range log.Records {
			if rec.Operation == "fleet.roll" && rec.Path == "/sluice/fleet/rolls" && rec.Status == http.StatusCreated {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no fleet.roll record in %d audit records", len(log.Records))
	})
}

// TestRollAgentsAcrossFailover: the leader stops while the roll waits for
// its second agent; the agent restarts meanwhile, and the next leader
// carries the roll on from the fleet topic: it uncordons the second agent
// and leaves the first, done before, as it was.
func TestRollAgentsAcrossFailover(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 3})
	name := c.Name("failover")
	mustCreate(c, name, generatorCfg(c.Name("roll-data"), "streams", "4", "tasks.max", "4"), "")
	c.WaitState(name, "RUNNING", 4, "RUNNING")

	var r api.AgentRoll
	c.Must(http.StatusCreated, "POST", "/sluice/fleet/rolls", map[string]any{"agents": []string{"agent-1", "agent-2"}, "timeout": "2m"}).JSON(t, &r)
	waitRollStep(c, r.ID, "agent-1", api.RollWaitingRestart)
	c.StopAgent(0)
	c.StartAgent(0)
	mid := waitRollStep(c, r.ID, "agent-2", api.RollWaitingRestart)
	first := rolledAgent(t, mid, "agent-1")
	if first.Step != api.RollDone {
		t.Fatalf("agent-1 before the failover: %+v", first)
	}
	checkDrainedAway(c, name, "agent-2", 4)

	c.StopCoordinator()
	c.StopAgent(1)
	c.StartAgent(1)
	c.StartCoordinator()
	waitLeader(t, c)
	sluicetest.Eventually(t, 90*time.Second, func() (bool, string) {
		r = getRoll(c, r.ID)
		return r.State == api.AgentRollDone, fmt.Sprintf("roll %s: %+v, error %q", r.State, r.Progress, r.Error)
	})
	if got := rolledAgent(t, r, "agent-1"); !got.FinishedAt.Equal(first.FinishedAt) || !got.RestartedAt.Equal(first.RestartedAt) {
		t.Fatalf("the new leader rolled agent-1 again: %+v, was %+v", got, first)
	}
	// The agents register with the new leader at their own pace.
	var agents map[string]api.AgentInfo
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		agents = agentsOf(c)
		a1, a2 := agents["agent-1"], agents["agent-2"]
		return a1.Registered && a2.Registered, fmt.Sprintf("agents %+v", agents)
	})
	for _, id := range []string{"agent-1", "agent-2"} {
		if a := agents[id]; a.State != api.AgentActive {
			t.Fatalf("%s after the roll: %+v", id, a)
		}
	}
	if second := rolledAgent(t, r, "agent-2"); !second.RestartedAt.Equal(agents["agent-2"].StartedAt) {
		t.Fatalf("agent-2 in the roll %+v, registered %+v", second, agents["agent-2"])
	}
	c.WaitState(name, "RUNNING", 4, "RUNNING")
}
