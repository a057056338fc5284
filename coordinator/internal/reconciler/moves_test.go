package reconciler

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/placements"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/wire"
)

// runningOn places c's tasks on agent a (b and c registered too), and
// has a report them running.
func runningOn(t *testing.T, n int) *world {
	t.Helper()
	w := newWorld(t, conn("c", n))
	w.register("a")
	w.pass(t)
	w.register("a", w.running("a")...)
	w.register("b")
	w.register("c")
	return w
}

// TestMoveRefusals: a task moves only from where it is, and once at a time.
func TestMoveRefusals(t *testing.T) {
	w := runningOn(t, 2)
	if err := w.r.Move(tid("c", 0), "b", "", OwnerDrain); !errors.Is(err, ErrNotOnAgent) {
		t.Fatalf("a move from the wrong agent: %v", err)
	}
	if err := w.r.Move(tid("nope", 0), "a", "", OwnerDrain); !errors.Is(err, ErrNotOnAgent) {
		t.Fatalf("a move of an unplaced task: %v", err)
	}
	if err := w.r.Move(tid("c", 0), "a", "b", OwnerRebalance); err != nil {
		t.Fatal(err)
	}
	if err := w.r.Move(tid("c", 0), "a", "", OwnerDrain); !errors.Is(err, ErrMoving) {
		t.Fatalf("a second move of a moving task: %v", err)
	}
	s := w.r.Snapshot()
	if m := s.Moves[tid("c", 0)]; m.From != "a" || m.To != "b" || m.Owner != OwnerRebalance || !m.Since.Equal(w.clock.Now()) {
		t.Fatalf("move in the snapshot %+v", m)
	}
}

// TestMoveLifecycle: a move is made by the next pass (revoke on From,
// assign on To), confirmed by the new agent's status report, counted for a
// drain, and wakes the watchers.
func TestMoveLifecycle(t *testing.T) {
	w := runningOn(t, 1)
	wake := w.r.Watch()
	if err := w.r.Move(tid("c", 0), "a", "b", OwnerDrain); err != nil {
		t.Fatal(err)
	}
	w.pass(t)
	if got := w.rpc.revokedOn("a"); len(got) != 1 {
		t.Fatalf("revoked on a: %v", got)
	}
	w.pass(t) // the task stopped on a: placed on b now
	if w.placedOn(tid("c", 0)) != "b" {
		t.Fatalf("the moved task is on %q, want b", w.placedOn(tid("c", 0)))
	}
	if len(w.r.Snapshot().Moves) != 1 {
		t.Fatal("the move ended before the new agent reported the task")
	}
	gen := w.rpc.assignedTo("b")[0].Generation
	// A report from a, or at another generation, does not confirm it.
	_, _ = w.ep().statusEndpoint(context.Background(), &wire.StatusReport{AgentID: "b", ID: tid("c", 0), Generation: gen, State: api.StateUnassigned})
	if len(w.r.Snapshot().Moves) != 1 {
		t.Fatal("an UNASSIGNED report confirmed the move")
	}
	_, _ = w.ep().statusEndpoint(context.Background(), &wire.StatusReport{AgentID: "b", ID: tid("c", 0), Generation: gen, State: api.StateRunning})
	s := w.r.Snapshot()
	if len(s.Moves) != 0 || s.Drained["a"].Moved != 1 {
		t.Fatalf("after b's report: moves %v, drained %v", s.Moves, s.Drained)
	}
	select {
	case <-wake:
	default:
		t.Fatal("the watcher was not woken")
	}
}

// TestJudgeMove is the table of a move's verdicts, the timeout's edge
// included.
func TestJudgeMove(t *testing.T) {
	since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := activeMove{owner: OwnerDrain, since: since}
	m.From = "a"
	for _, tc := range []struct {
		name       string
		p          placements.Placement
		placed     bool
		onNew      wire.RunningTask
		newReports bool
		fromRuns   bool
		at         time.Duration
		want       moveVerdict
	}{
		{"still on From", placements.Placement{Agent: "a", Generation: 1}, true, wire.RunningTask{}, true, true, 0, moveGoesOn},
		{"placed elsewhere, not reported yet", placements.Placement{Agent: "b", Generation: 2}, true, wire.RunningTask{}, true, false, 0, moveGoesOn},
		{"placed elsewhere, reported at an older generation", placements.Placement{Agent: "b", Generation: 2}, true, wire.RunningTask{Generation: 1}, true, false, 0, moveGoesOn},
		{"runs where it went", placements.Placement{Agent: "b", Generation: 2}, true, wire.RunningTask{Generation: 2}, true, false, 0, moveDone},
		{"the new agent is gone", placements.Placement{Agent: "b", Generation: 2}, true, wire.RunningTask{}, false, false, 0, moveGoesOn},
		{"unplaced, From still runs it", placements.Placement{}, false, wire.RunningTask{}, false, true, 0, moveGoesOn},
		{"unplaced and left From (forced, or gone)", placements.Placement{}, false, wire.RunningTask{}, false, false, 0, moveDone},
		{"exactly MoveTimeout: goes on", placements.Placement{Agent: "b", Generation: 2}, true, wire.RunningTask{}, true, false, MoveTimeout, moveGoesOn},
		{"a nanosecond past MoveTimeout: given up", placements.Placement{Agent: "b", Generation: 2}, true, wire.RunningTask{}, true, false, MoveTimeout + time.Nanosecond, moveTimedOut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := judgeMove(m, tc.p, tc.placed, tc.onNew, tc.newReports, tc.fromRuns, since.Add(tc.at)); got != tc.want {
				t.Fatalf("judgeMove = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMoveTimesOut: a move whose task is never reported elsewhere is
// given up on the fake clock's MoveTimeout, freeing its slot; a drain's
// counts.
func TestMoveTimesOut(t *testing.T) {
	w := runningOn(t, 1)
	if err := w.r.Move(tid("c", 0), "a", "b", OwnerDrain); err != nil {
		t.Fatal(err)
	}
	w.pass(t)
	w.pass(t)
	w.clock.Add(MoveTimeout)
	if len(w.r.Snapshot().Moves) != 1 {
		t.Fatal("the move was given up at exactly MoveTimeout")
	}
	w.clock.Add(time.Nanosecond)
	s := w.r.Snapshot()
	if len(s.Moves) != 0 || s.Drained["a"].Moved != 1 {
		t.Fatalf("past MoveTimeout: moves %v, drained %v", s.Moves, s.Drained)
	}
}

// TestDrainTally: a drain's move that is done counts in its own drain's
// tally; a later drain's starts a new one; an earlier drain's, ending late,
// counts in none; and DrainMove names the drain in the snapshot's moves.
func TestDrainTally(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	for _, tc := range []struct {
		name  string
		drain time.Time
		tally DrainTally
		want  DrainTally
	}{
		{"first of the term", t0, DrainTally{}, DrainTally{Started: t0, Moved: 1}},
		{"same drain", t0, DrainTally{Started: t0, Moved: 2}, DrainTally{Started: t0, Moved: 3}},
		{"a new drain starts from zero", t1, DrainTally{Started: t0, Moved: 5}, DrainTally{Started: t1, Moved: 1}},
		{"an earlier drain's late move", t0, DrainTally{Started: t1, Moved: 2}, DrainTally{Started: t1, Moved: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (activeMove{owner: OwnerDrain, drain: tc.drain}).tallied(tc.tally); got != tc.want {
				t.Fatalf("tallied = %+v, want %+v", got, tc.want)
			}
		})
	}
	w := runningOn(t, 1)
	if err := w.r.DrainMove(tid("c", 0), "a", t1); err != nil {
		t.Fatal(err)
	}
	if m := w.r.Snapshot().Moves[tid("c", 0)]; m.Owner != OwnerDrain || !m.Drain.Equal(t1) || m.From != "a" || m.To != "" {
		t.Fatalf("the drain's move in the snapshot: %+v", m)
	}
}

// TestSnapshot: the placement world as the fleet controllers see it.
func TestSnapshot(t *testing.T) {
	w := runningOn(t, 2)
	w.fleet.marks["b"] = store.AgentMark{State: api.AgentCordoned}
	s := w.r.Snapshot()
	if len(s.Tasks) != 2 || s.Tasks[0].ID != tid("c", 0) || s.Current[tid("c", 1)] != "a" {
		t.Fatalf("tasks %v, current %v", s.Tasks, s.Current)
	}
	cordoned := map[string]bool{}
	for _, a := range s.Agents {
		cordoned[a.ID] = a.Cordoned
	}
	if len(s.Agents) != 3 || !cordoned["b"] || cordoned["a"] {
		t.Fatalf("agents %+v", s.Agents)
	}
	if got := s.TasksOn("a"); len(got) != 2 || got[0] != tid("c", 0) {
		t.Fatalf("tasks on a: %v", got)
	}
	// A task whose selector does not parse is placed nowhere-able: out of
	// the scheduler's view, still in Placed.
	w.conns.conns["c"].Config["sluice.agent.selector"] = "=="
	s = w.r.Snapshot()
	if len(s.Tasks) != 0 || len(s.Placed) != 2 {
		t.Fatalf("with a bad selector: tasks %v, placed %v", s.Tasks, s.Placed)
	}
}

// TestFailoverMidMove: the moves in flight are the term's memory; a new
// term starts with none, and the controllers start them again from the
// fleet topic.
func TestFailoverMidMove(t *testing.T) {
	w := runningOn(t, 1)
	if err := w.r.Move(tid("c", 0), "a", "b", OwnerRebalance); err != nil {
		t.Fatal(err)
	}
	w.r.Revoke()
	w.r.Establish()
	if s := w.r.Snapshot(); len(s.Moves) != 0 || len(s.Drained) != 0 {
		t.Fatalf("a new term kept moves %v, drained %v", s.Moves, s.Drained)
	}
}
