package reconciler

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/placements"
	"github.com/sluice-io/sluice/coordinator/internal/planner"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/wire"
)

// Placement at a start (startup.go), on the reconciler's fakes: the time is
// the fake clock's, agents are registrations, and an agent "runs" what is
// placed on it when it reports (runPlaced).

const settle = 2 * time.Second

// withSettle gives the world a start settle window.
func withSettle(cfg *Config, _ *fakeStatuses) { cfg.PlacementSettle = settle }

// runPlaced has every registered agent report the tasks placed on it
// running, as agents do once assigned: their statuses then name them.
func (w *world) runPlaced() {
	on := map[string][]wire.RunningTask{}
	for id, p := range w.r.table.Placements() {
		on[p.Agent] = append(on[p.Agent], wire.RunningTask{ID: id, Generation: p.Generation, State: api.StateRunning})
	}
	for _, a := range w.r.table.Registered() {
		w.register(a, on[a]...)
	}
}

// placedOnAgents is every task's agent ("" for none).
func (w *world) placedOnAgents() map[api.TaskID]string {
	out := map[api.TaskID]string{}
	for id, p := range w.r.table.Placements() {
		out[id] = p.Agent
	}
	return out
}

// counts are how many tasks each agent holds.
func counts(placed map[api.TaskID]string) map[string]int {
	out := map[string]int{}
	for _, a := range placed {
		out[a]++
	}
	return out
}

func (w *world) deregister(t *testing.T, id string) {
	t.Helper()
	if _, err := w.ep().deregisterEndpoint(context.Background(), &wire.RegisterRequest{AgentID: id}); err != nil {
		t.Fatal(err)
	}
}

// wantTrace checks that task id is UNASSIGNED with a trace starting prefix.
func (w *world) wantTrace(t *testing.T, id api.TaskID, prefix string) {
	t.Helper()
	st, _ := w.r.status.Task(id.Connector, id.Task)
	if st.State != api.StateUnassigned || !strings.HasPrefix(st.Trace, prefix) {
		t.Fatalf("status of %v: %+v, want UNASSIGNED, %q…", id, st, prefix)
	}
}

// TestStartSettlesTheBacklog: tasks no agent ever ran, waiting when the
// first agent registers, are held for the settle window so that the agents
// starting together share them; a task created meanwhile is placed at once.
func TestStartSettlesTheBacklog(t *testing.T) {
	w := newWorldWith(t, withSettle, conn("c", 10))
	w.register("a")
	w.pass(t)
	if got := w.placedOnAgents(); len(got) != 0 {
		t.Fatalf("placed %v in the settle window, want nothing", got)
	}
	w.wantTrace(t, tid("c", 0), "Waiting for the agents that start together")

	w.conns.mu.Lock()
	w.conns.conns["late"] = conn("late", 1)
	w.conns.mu.Unlock()
	w.clock.Add(300 * time.Millisecond)
	w.register("b")
	w.pass(t)
	if got := w.placedOnAgents(); len(got) != 1 || got[tid("late", 0)] == "" {
		t.Fatalf("placed %v, want only the task created in the window", got)
	}
	if end, ok := w.r.table.nextWake(); !ok || !end.Equal(w.clock.Now().Add(settle-300*time.Millisecond)) {
		t.Fatalf("next wake %v, %v: want the settle window's end", end, ok)
	}

	w.clock.Add(settle)
	w.pass(t)
	got := counts(w.placedOnAgents())
	if got["a"]+got["b"] != 11 || got["a"]-got["b"] > 1 || got["b"]-got["a"] > 1 {
		t.Fatalf("after the window: %v tasks per agent, want 11 split within one", got)
	}
}

// TestStartAfterLeaderRestart: a new term places every task back on the
// agent that last ran it — running tasks (presumed) and unassigned ones
// whose status names their agent — while the other agent is registered
// already, and places at once a task whose agent does not come back within
// its lease.
func TestStartAfterLeaderRestart(t *testing.T) {
	statuses := map[int]store.InstanceStatus{
		0: {State: api.StateRunning, WorkerID: "a", Generation: 3},
		1: {State: api.StateRunning, WorkerID: "b", Generation: 4},
		2: {State: api.StateUnassigned, WorkerID: "a", Generation: 5},
		3: {State: api.StateUnassigned, WorkerID: "b", Generation: 6},
		4: {State: api.StateUnassigned, WorkerID: "gone", Generation: 7},
	}
	w := newWorldWith(t, func(cfg *Config, s *fakeStatuses) {
		withSettle(cfg, s)
		for n, st := range statuses {
			s.setTask("c", n, st)
		}
	}, conn("c", 5))

	w.register("b") // restarted: it runs nothing
	w.pass(t)
	got := w.placedOnAgents()
	want := map[api.TaskID]string{tid("c", 0): "a", tid("c", 1): "b", tid("c", 3): "b"}
	if !maps.Equal(got, want) {
		t.Fatalf("placed %v, want %v (task 0 presumed on a; 2 and 4 waiting)", got, want)
	}
	w.wantTrace(t, tid("c", 2), "Waiting for agent a")
	w.wantTrace(t, tid("c", 4), "Waiting for agent gone")
	if st, _ := w.r.status.Task("c", 2); st.WorkerID != "a" {
		t.Fatalf("a waiting task's status %+v: want the agent it waits for as its worker", st)
	}

	w.clock.Add(time.Second)
	w.register("a")
	w.pass(t)
	got = w.placedOnAgents()
	want = map[api.TaskID]string{tid("c", 0): "a", tid("c", 1): "b", tid("c", 2): "a", tid("c", 3): "b"}
	if !maps.Equal(got, want) {
		t.Fatalf("placed %v, want %v", got, want)
	}

	// "gone" never comes back: its task is placed once its lease (from the
	// term's start) runs out.
	w.runPlaced()
	w.clock.Add(10 * time.Second)
	w.runPlaced()
	w.pass(t)
	if p := w.placedOn(tid("c", 4)); p != "a" && p != "b" {
		t.Fatalf("task 4 placed on %q after its agent's lease ran out", p)
	}
	for _, id := range []api.TaskID{tid("c", 0), tid("c", 1), tid("c", 2), tid("c", 3)} {
		if w.placedOn(id) != want[id] {
			t.Fatalf("task %v moved to %s", id, w.placedOn(id))
		}
	}
}

// TestStartAfterFleetRestart: every agent leaves gracefully (sluice dev
// stopping, all agents restarting) under a leader that stays; the tasks
// wait for the agents that ran them and go back to them, whichever agent
// registers first.
func TestStartAfterFleetRestart(t *testing.T) {
	w := newWorldWith(t, withSettle, conn("c", 10))
	w.register("a")
	w.register("b")
	w.pass(t)
	w.clock.Add(settle)
	w.pass(t)
	w.runPlaced()
	before := w.placedOnAgents()
	if c := counts(before); c["a"] != 5 || c["b"] != 5 {
		t.Fatalf("before: %v", c)
	}

	// a leaves first: its tasks go to b, which is stopping too and never
	// runs them; then b leaves.
	w.deregister(t, "a")
	w.pass(t)
	w.deregister(t, "b")
	w.pass(t)
	if got := w.placedOnAgents(); len(got) != 0 {
		t.Fatalf("placed %v with every agent gone", got)
	}
	for id, a := range before {
		w.wantTrace(t, id, "Waiting for agent "+a)
	}

	w.clock.Add(3 * time.Second)
	w.register("b")
	w.pass(t)
	w.clock.Add(100 * time.Millisecond)
	w.register("a")
	w.pass(t)
	if got := w.placedOnAgents(); !maps.Equal(got, before) {
		t.Fatalf("after the restart: %v, want every task back where it ran: %v", got, before)
	}
}

// TestStartLostAgentsTasksMoveAtOnce: within a start's settle window, the
// tasks of an agent taken for lost (its connection closed) are placed at
// once: only tasks whose agent may come back wait.
func TestStartLostAgentsTasksMoveAtOnce(t *testing.T) {
	w := newWorldWith(t, withSettle, conn("c", 4))
	w.register("a")
	w.register("b")
	w.pass(t) // the backlog is held
	w.conns.mu.Lock()
	w.conns.conns["d"] = conn("d", 2)
	w.conns.mu.Unlock()
	w.pass(t)
	w.runPlaced()
	var onA []api.TaskID
	for id, a := range w.placedOnAgents() {
		if a == "a" {
			onA = append(onA, id)
		}
	}
	if len(onA) != 1 {
		t.Fatalf("placed %v: want one of d's tasks on a", w.placedOnAgents())
	}
	if v, _ := w.r.table.judgeAbsent("a", w.clock.Now().Add(time.Millisecond), w.clock.Now().Add(time.Millisecond), false); v != absentLost {
		t.Fatalf("judged %v", v)
	}
	w.pass(t)
	if p := w.placedOn(onA[0]); p != "b" {
		t.Fatalf("the lost agent's task is on %q, want b at once (the window is still open)", p)
	}
	if got := counts(w.placedOnAgents()); got["b"] != 2 {
		t.Fatalf("placed %v: the backlog is still held", w.placedOnAgents())
	}
}

// TestStartJoinMovesNothing: an agent that joins a running cluster moves
// no task, not even one it ran before.
func TestStartJoinMovesNothing(t *testing.T) {
	w := newWorld(t, conn("c", 6))
	w.register("a")
	w.register("b")
	w.pass(t)
	w.runPlaced()
	before := w.placedOnAgents()
	w.register("c")
	w.pass(t)
	if got := w.placedOnAgents(); !maps.Equal(got, before) {
		t.Fatalf("a join moved tasks: %v -> %v", before, got)
	}
	if len(w.rpc.assignedTo("c")) != 0 || len(w.rpc.revokedOn("a"))+len(w.rpc.revokedOn("b")) != 0 {
		t.Fatal("a join sent commands")
	}
}

// TestStartupHolds is the start's own table: when it takes its backlog,
// and when it closes.
func TestStartupHolds(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	x, y := tid("c", 0), tid("c", 1)
	desired := map[api.TaskID]planner.Desired{x: {ID: x}, y: {ID: y, LastAgent: "a"}}
	reg := func(ids ...string) []registry.Agent {
		var out []registry.Agent
		for _, id := range ids {
			out = append(out, registry.Agent{ID: id, Registered: true})
		}
		return out
	}
	presumed := registry.Agent{ID: "p"}

	s := startup{settle: settle}
	s.begin()
	if got := s.holds(t0, nil, desired, nil); got != nil {
		t.Fatalf("no agent: %v", got)
	}
	// The first registration takes the backlog: the task that never ran.
	if got := s.holds(t0, reg("a"), desired, nil); !maps.Equal(got, map[api.TaskID]bool{x: true}) {
		t.Fatalf("first registration: %v", got)
	}
	if got := s.holds(t0.Add(settle-time.Nanosecond), reg("a", "b"), desired, nil); len(got) != 1 {
		t.Fatalf("in the window: %v", got)
	}
	if got := s.holds(t0.Add(settle), reg("a", "b"), desired, nil); got != nil || s.open {
		t.Fatalf("at the window's end: %v, open %v", got, s.open)
	}
	// Every agent gone: a new start, whose backlog is taken again.
	s.holds(t0.Add(time.Minute), nil, desired, nil)
	if !s.open {
		t.Fatal("no start after every agent left")
	}
	// With agents presumed, it closes once they are all back.
	if got := s.holds(t0.Add(time.Minute), append(reg("a"), presumed), desired, nil); len(got) != 1 {
		t.Fatalf("presumed agent outstanding: %v", got)
	}
	if got := s.holds(t0.Add(time.Minute+time.Second), reg("a", "p"), desired, nil); got != nil || s.open {
		t.Fatalf("every presumed agent back: %v, open %v", got, s.open)
	}
	// No backlog, or no window: nothing is held.
	s.holds(t0, nil, desired, nil)
	placedX := map[api.TaskID]placements.Placement{x: {Agent: "a"}}
	if got := s.holds(t0, reg("a"), desired, placedX); got != nil || s.open {
		t.Fatalf("no backlog: %v, open %v", got, s.open)
	}
	off := startup{}
	off.begin()
	if got := off.holds(t0, reg("a"), desired, nil); got != nil {
		t.Fatalf("no settle window: %v", got)
	}
	// A task whose last agent nobody waits for (lost: the whole fleet
	// crashed) is in the backlog as well, shared by the agents starting
	// together rather than all given to the first one.
	lost := startup{settle: settle}
	lost.begin()
	if got := lost.holds(t0, reg("b"), desired, nil); !maps.Equal(got, map[api.TaskID]bool{x: true, y: true}) {
		t.Fatalf("first registration after the fleet was lost: %v, want both tasks held", got)
	}
}

// TestTableLeave: an agent leaving while others are registered is
// forgotten; the last one leaving has every agent that left within a lease
// presumed again — not one that came back since, nor one that left longer
// ago than a lease.
func TestTableLeave(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tb := NewTable(10*time.Second, 0)
	for _, id := range []string{"old", "back", "a", "b"} {
		tb.observe(&wire.RegisterRequest{AgentID: id}, true, t0)
	}
	tb.leave("old", t0)
	tb.leave("back", t0.Add(5*time.Second))
	tb.observe(&wire.RegisterRequest{AgentID: "back"}, true, t0.Add(6*time.Second))
	if tb.Known("old") {
		t.Fatal("an agent that left while others ran is still known")
	}
	// "back" is lost (its connection closed): not presumed later.
	if v, _ := tb.judgeAbsent("back", t0.Add(7*time.Second), t0.Add(7*time.Second), false); v != absentLost {
		t.Fatalf("judged %v", v)
	}
	tb.leave("a", t0.Add(12*time.Second))
	tb.leave("b", t0.Add(13*time.Second))
	var presumedIDs []string
	for _, a := range tb.Agents() {
		if a.Registered {
			t.Fatalf("%s is registered", a.ID)
		}
		presumedIDs = append(presumedIDs, a.ID)
	}
	if want := []string{"a", "b"}; !slices.Equal(presumedIDs, want) {
		t.Fatalf("presumed %v, want %v", presumedIDs, want)
	}
	if next, ok := tb.nextWake(); !ok || !next.Equal(t0.Add(22*time.Second+time.Nanosecond)) {
		t.Fatalf("next wake %v, %v: want a's lease from when it left", next, ok)
	}
}
