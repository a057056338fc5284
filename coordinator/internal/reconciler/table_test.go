package reconciler

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/planner"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// The Table on its own: every method takes its time as an argument, so
// these tests need no clock, no loop and no port.

var at = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func desired(ids ...api.TaskID) map[api.TaskID]planner.Desired {
	out := map[api.TaskID]planner.Desired{}
	for _, id := range ids {
		out[id] = planner.Desired{ID: id, Hash: "h"}
	}
	return out
}

// TestTablePresume: a new term presumes the status topic's owners, and
// starts its generations from the topic's highest.
func TestTablePresume(t *testing.T) {
	tb := NewTable(10*time.Second, 0)
	tb.Presume(map[api.TaskID]Owner{tid("c", 0): {Agent: "a", Generation: 4}, tid("c", 1): {Agent: "b", Generation: 7}}, nil, 9, at)
	if !tb.Known("a") || !tb.Known("b") || tb.Generation() != 9 {
		t.Fatalf("known a %v, b %v, generation %d", tb.Known("a"), tb.Known("b"), tb.Generation())
	}
	if p, ok := tb.Placement(tid("c", 1)); !ok || p.Agent != "b" || p.Generation != 7 {
		t.Fatalf("placement %+v, %v", p, ok)
	}
	if !tb.Issued(9) || tb.Issued(10) || tb.Issued(0) {
		t.Fatal("issued generations wrong")
	}
	// Presumed agents are not registered: no heartbeat is accepted from
	// them before they register.
	if got := tb.Registered(); len(got) != 0 {
		t.Fatalf("registered %v", got)
	}
	if o := tb.observe(&wire.HeartbeatRequest{AgentID: "a"}, false, at); o.known {
		t.Fatal("a heartbeat from a presumed agent was taken")
	}
}

// TestOwners: only running, paused and failed tasks have an owner to
// presume; the agent that last ran an unassigned task of a connector that
// still wants it may come back.
func TestOwners(t *testing.T) {
	stopped := conn("s", 2)
	stopped.TargetState = records.TargetStopped
	conns := map[string]store.Connector{"c": conn("c", 6), "s": stopped}
	get := func(name string) (store.Connector, bool) { c, ok := conns[name]; return c, ok }
	got, returning := owners(map[string]map[int]store.InstanceStatus{"c": {
		0: {State: api.StateRunning, WorkerID: "a", Generation: 1},
		1: {State: api.StatePaused, WorkerID: "a", Generation: 2},
		2: {State: api.StateFailed, WorkerID: "b", Generation: 3},
		3: {State: api.StateUnassigned, Generation: 4},
		4: {State: api.StateRestarting, WorkerID: "b", Generation: 5},
		5: {State: api.StateUnassigned, WorkerID: "d", Generation: 6},
		// beyond the connector's tasks: not wanted
		9: {State: api.StateUnassigned, WorkerID: "e", Generation: 7},
	}, "s": {0: {State: api.StateUnassigned, WorkerID: "f", Generation: 8}},
		"gone": {0: {State: api.StateUnassigned, WorkerID: "g", Generation: 9}}}, get)
	if len(got) != 3 || got[tid("c", 2)] != (Owner{Agent: "b", Generation: 3}) {
		t.Fatalf("owners %v", got)
	}
	if !slices.Equal(returning, []string{"d"}) {
		t.Fatalf("returning %v, want [d]", returning)
	}
}

// TestTableLeaseEdges: the table's plan expires an agent a lease and a
// nanosecond after it was last heard, not a moment before.
func TestTableLeaseEdges(t *testing.T) {
	tb := NewTable(10*time.Second, 0)
	tb.observe(&wire.RegisterRequest{AgentID: "a"}, true, at)
	if next, ok := tb.nextWake(); !ok || !next.Equal(at.Add(10*time.Second+time.Nanosecond)) {
		t.Fatalf("next expiry %v, %v", next, ok)
	}
	if _, lost := tb.plan(nil, nil, at.Add(10*time.Second)); len(lost) != 0 {
		t.Fatal("lost at exactly the lease")
	}
	tb.Touch([]string{"a"}, at.Add(5*time.Second))
	if _, lost := tb.plan(nil, nil, at.Add(10*time.Second+time.Nanosecond)); len(lost) != 0 {
		t.Fatal("a beat did not keep the lease")
	}
	if _, lost := tb.plan(nil, nil, at.Add(15*time.Second+time.Nanosecond)); len(lost) != 1 || lost[0].ID != "a" {
		t.Fatalf("lost %v, want a", lost)
	}
	if _, ok := tb.nextWake(); ok {
		t.Fatal("an expiry with no agent")
	}
}

// TestTablePlanCordoned: a cordoned agent takes no new task; a moved task
// leaves its agent for another.
func TestTablePlanCordoned(t *testing.T) {
	tb := NewTable(time.Minute, 0)
	tb.observe(&wire.RegisterRequest{AgentID: "a"}, true, at)
	tb.observe(&wire.RegisterRequest{AgentID: "b"}, true, at)
	out, _ := tb.plan(desired(tid("c", 0), tid("c", 1)), map[string]bool{"a": true}, at)
	for id, p := range out.Placements {
		if p.Agent != "b" {
			t.Fatalf("%v placed on cordoned %s", id, p.Agent)
		}
	}
	if err := tb.startMove(tid("c", 0), activeMove{Move: scheduler.Move{From: "b", To: "a"}, owner: OwnerRebalance, since: at}); err != nil {
		t.Fatal(err)
	}
	out, _ = tb.plan(desired(tid("c", 0), tid("c", 1)), nil, at)
	if !slices.Contains(out.Revokes["b"], tid("c", 0)) {
		t.Fatalf("the move revoked %v, want c/0 off b", out.Revokes)
	}
}

// TestTableObserveAdopts: a restarted leader learns where tasks run from
// the agents' reports, at generations it may have issued.
func TestTableObserveAdopts(t *testing.T) {
	tb := NewTable(time.Minute, 0)
	tb.Presume(nil, nil, 5, at)
	o := tb.observe(&wire.RegisterRequest{AgentID: "a", Tasks: []wire.RunningTask{
		{ID: tid("c", 0), Generation: 5, State: api.StateRunning},
		{ID: tid("c", 1), Generation: 6, State: api.StateRunning},
	}}, true, at)
	if !o.known || !o.changed || len(o.forged) != 1 || o.forged[0].ID != tid("c", 1) {
		t.Fatalf("observation %+v", o)
	}
	if p, ok := tb.Placement(tid("c", 0)); !ok || p.Agent != "a" {
		t.Fatal("a reported task at an issued generation was not adopted")
	}
	agents, tasks := tb.Holders("c")
	if !slices.Equal(agents, []string{"a"}) || len(tasks) < 2 {
		t.Fatalf("holders %v, %v", agents, tasks)
	}
	tb.ForgetReported("a", []api.TaskID{tid("c", 1)})
	if _, tasks := tb.Holders("c"); slices.Contains(tasks, tid("c", 1)) {
		t.Fatal("a forgotten report is still held")
	}
}

// TestTableRestartAndForget: a restart gives a task a new generation; a
// refusal drops a placement only while it is the one refused.
func TestTableRestartAndForget(t *testing.T) {
	tb := NewTable(time.Minute, 0)
	tb.observe(&wire.RegisterRequest{AgentID: "a"}, true, at)
	out, _ := tb.plan(desired(tid("c", 0)), nil, at)
	gen := out.Placements[tid("c", 0)].Generation
	tb.forgetIf("a", []api.TaskID{tid("c", 0)}, map[api.TaskID]int64{tid("c", 0): gen - 1})
	if _, ok := tb.Placement(tid("c", 0)); !ok {
		t.Fatal("a refusal of an older generation dropped the placement")
	}
	tb.Restart([]api.TaskID{tid("c", 0)})
	out, _ = tb.plan(desired(tid("c", 0)), nil, at)
	if out.Placements[tid("c", 0)].Generation <= gen {
		t.Fatalf("a restarted task kept generation %d", gen)
	}
	tb.forgetIf("a", []api.TaskID{tid("c", 0)}, map[api.TaskID]int64{tid("c", 0): out.Placements[tid("c", 0)].Generation})
	if _, ok := tb.Placement(tid("c", 0)); ok {
		t.Fatal("a refused placement stayed")
	}
}

// TestTableViewRetires: a view retires the moves done and reports those
// given up at the timeout's edge.
func TestTableViewRetires(t *testing.T) {
	tb := NewTable(time.Hour, 0)
	tb.observe(&wire.RegisterRequest{AgentID: "a"}, true, at)
	tb.observe(&wire.RegisterRequest{AgentID: "b"}, true, at)
	out, _ := tb.plan(desired(tid("c", 0)), map[string]bool{"b": true}, at)
	gen := out.Placements[tid("c", 0)].Generation
	tb.observe(&wire.RegisterRequest{AgentID: "a", Tasks: []wire.RunningTask{{ID: tid("c", 0), Generation: gen, State: api.StateRunning}}}, false, at)
	if err := tb.startMove(tid("c", 0), activeMove{Move: scheduler.Move{From: "a"}, owner: OwnerDrain, since: at}); err != nil {
		t.Fatal(err)
	}
	v, timedOut := tb.view(at.Add(MoveTimeout))
	if len(v.moves) != 1 || len(timedOut) != 0 {
		t.Fatalf("at MoveTimeout: moves %v, timed out %v", v.moves, timedOut)
	}
	v, timedOut = tb.view(at.Add(MoveTimeout + time.Nanosecond))
	if len(v.moves) != 0 || len(timedOut) != 1 || timedOut[0].Task != tid("c", 0) || v.drained["a"].Moved != 1 {
		t.Fatalf("past MoveTimeout: moves %v, timed out %v, drained %v", v.moves, timedOut, v.drained)
	}
}

// TestTableHostPluginsOutliveTerms: the Java plugins a host announced stay
// known after the term (and the host) are gone, but are no longer live.
func TestTableHostPluginsOutliveTerms(t *testing.T) {
	tb := NewTable(time.Minute, 0)
	tb.observe(&wire.RegisterRequest{AgentID: "a", HostPlugins: []api.PluginInfo{{Class: "J", Version: "2"}}, Plugins: []api.PluginInfo{{Class: "G"}}}, true, at)
	if len(tb.HostPlugins()) != 1 || len(tb.Plugins()) != 1 {
		t.Fatal("live plugins not seen")
	}
	tb.Reset()
	if len(tb.HostPlugins()) != 0 || len(tb.Plugins()) != 0 || len(tb.KnownHostPlugins()) != 1 {
		t.Fatalf("after the term: live %v, known %v", tb.HostPlugins(), tb.KnownHostPlugins())
	}
}
