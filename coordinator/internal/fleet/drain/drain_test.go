package drain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler/reconcilertest"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func id(conn string, n int) api.TaskID { return api.TaskID{Connector: conn, Task: n} }

func task(conn string, n int) scheduler.Task { return scheduler.Task{ID: id(conn, n)} }

// pinned is a task only agents labelled zone=z may run.
func pinned(conn string, n int, z string) scheduler.Task {
	return scheduler.Task{ID: id(conn, n), Selector: map[string]string{"zone": z}}
}

func draining(force bool) store.AgentMark {
	return store.AgentMark{State: api.AgentDraining, Force: force, StartedAt: t0}
}

// threeOnA is agents a (zone x), b and c, with tasks s/0..s/2 on a.
func threeOnA() *reconcilertest.World {
	w := reconcilertest.New(t0).Agent("a", map[string]string{"zone": "x"}).Agent("b", nil).Agent("c", nil)
	for n := range 3 {
		w.Place(task("s", n), "a")
	}
	return w
}

// TestDecide is the table of a drain's decisions: which tasks move next.
func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name  string
		world func() *reconcilertest.World
		marks map[string]store.AgentMark
		want  []Start
	}{
		{"nothing draining", threeOnA, nil, nil},
		{"cordoned only: nothing moves", threeOnA, map[string]store.AgentMark{"a": {State: api.AgentCordoned}}, nil},
		{"start: Parallel tasks, in order", func() *reconcilertest.World { return threeOnA().Cordon("a") },
			map[string]store.AgentMark{"a": draining(false)}, []Start{{id("s", 0), "a", t0}, {id("s", 1), "a", t0}}},
		{"tasks moving hold their slots", func() *reconcilertest.World {
			w := threeOnA().Cordon("a")
			_ = w.DrainMove(id("s", 0), "a", t0)
			return w
		}, map[string]store.AgentMark{"a": draining(false)}, []Start{{id("s", 1), "a", t0}}},
		{"every slot taken", func() *reconcilertest.World {
			w := threeOnA().Cordon("a")
			_ = w.DrainMove(id("s", 0), "a", t0)
			_ = w.DrainMove(id("s", 1), "a", t0)
			return w
		}, map[string]store.AgentMark{"a": draining(false)}, nil},
		{"a task a rebalance moves is not moved again, and takes a slot", func() *reconcilertest.World {
			w := threeOnA().Cordon("a")
			_ = w.Move(id("s", 2), "a", "b", reconciler.OwnerRebalance)
			return w
		}, map[string]store.AgentMark{"a": draining(false)}, []Start{{id("s", 0), "a", t0}}},
		{"blocked tasks stay", func() *reconcilertest.World {
			return reconcilertest.New(t0).Agent("a", map[string]string{"zone": "x"}).Agent("b", nil).Cordon("a").
				Place(pinned("p", 0, "x"), "a").Place(task("s", 0), "a")
		}, map[string]store.AgentMark{"a": draining(false)}, []Start{{id("s", 0), "a", t0}}},
		{"force moves blocked tasks off to nowhere", func() *reconcilertest.World {
			return reconcilertest.New(t0).Agent("a", map[string]string{"zone": "x"}).Agent("b", nil).Cordon("a").
				Place(pinned("p", 0, "x"), "a").Place(task("s", 0), "a")
		}, map[string]store.AgentMark{"a": draining(true)}, []Start{{id("p", 0), "a", t0}, {id("s", 0), "a", t0}}},
		{"a blocked task is not blocked once another agent may run it", func() *reconcilertest.World {
			return reconcilertest.New(t0).Agent("a", map[string]string{"zone": "x"}).Agent("b", map[string]string{"zone": "x"}).Cordon("a").
				Place(pinned("p", 0, "x"), "a")
		}, map[string]store.AgentMark{"a": draining(false)}, []Start{{id("p", 0), "a", t0}}},
		{"two drains, each Parallel, by agent id", func() *reconcilertest.World {
			w := reconcilertest.New(t0).Agent("a", nil).Agent("b", nil).Agent("c", nil).Cordon("a").Cordon("b")
			for n := range 3 {
				w.Place(task("x", n), "b").Place(task("y", n), "a")
			}
			return w
		}, map[string]store.AgentMark{"b": draining(false), "a": draining(false)},
			[]Start{{id("y", 0), "a", t0}, {id("y", 1), "a", t0}, {id("x", 0), "b", t0}, {id("x", 1), "b", t0}}},
		{"finished: nothing left on the agent", func() *reconcilertest.World {
			return reconcilertest.New(t0).Agent("a", nil).Agent("b", nil).Cordon("a").Place(task("s", 0), "b")
		}, map[string]store.AgentMark{"a": draining(false)}, nil},
		{"agent gone: its tasks were unplaced, nothing to move", func() *reconcilertest.World {
			w := threeOnA()
			w.Lose("a")
			return w
		}, map[string]store.AgentMark{"a": draining(false)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.world().Snapshot(), tc.marks)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Decide = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStatus is the table of a drain's states as GET …/drain shows them.
func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		name      string
		world     func() *reconcilertest.World
		mark      store.AgentMark
		state     string
		remaining int
		moving    []api.TaskID
		moved     int
		blocked   int
	}{
		{"start: every task remains", func() *reconcilertest.World { return threeOnA().Cordon("a") }, draining(false), api.DrainRunning, 3, nil, 0, 0},
		{"tasks moving", func() *reconcilertest.World {
			w := threeOnA().Cordon("a")
			_ = w.DrainMove(id("s", 1), "a", t0)
			_ = w.DrainMove(id("s", 0), "a", t0)
			return w
		}, draining(false), api.DrainRunning, 3, []api.TaskID{id("s", 0), id("s", 1)}, 0, 0},
		{"one moved, one moving", func() *reconcilertest.World {
			w := threeOnA().Cordon("a")
			_ = w.DrainMove(id("s", 0), "a", t0)
			_ = w.DrainMove(id("s", 1), "a", t0)
			w.Finish(id("s", 0), "b")
			return w
		}, draining(false), api.DrainRunning, 2, []api.TaskID{id("s", 1)}, 1, 0},
		{"blocked: only blocked tasks remain", func() *reconcilertest.World {
			return reconcilertest.New(t0).Agent("a", map[string]string{"zone": "x"}).Agent("b", nil).Cordon("a").Place(pinned("p", 0, "x"), "a")
		}, draining(false), api.DrainBlocked, 1, nil, 0, 1},
		{"blocked but a move runs: running", func() *reconcilertest.World {
			w := reconcilertest.New(t0).Agent("a", map[string]string{"zone": "x"}).Agent("b", nil).Cordon("a").
				Place(pinned("p", 0, "x"), "a").Place(task("s", 0), "a")
			_ = w.DrainMove(id("s", 0), "a", t0)
			return w
		}, draining(false), api.DrainRunning, 2, []api.TaskID{id("s", 0)}, 0, 1},
		{"force shows nothing blocked", func() *reconcilertest.World {
			return reconcilertest.New(t0).Agent("a", map[string]string{"zone": "x"}).Agent("b", nil).Cordon("a").Place(pinned("p", 0, "x"), "a")
		}, draining(true), api.DrainRunning, 1, nil, 0, 0},
		{"finished", func() *reconcilertest.World {
			w := threeOnA().Cordon("a")
			for n := range 3 {
				_ = w.DrainMove(id("s", n), "a", t0)
				w.Finish(id("s", n), "b")
			}
			return w
		}, draining(false), api.DrainDone, 0, nil, 3, 0},
		{"forced to nowhere: finished once the task left", func() *reconcilertest.World {
			w := reconcilertest.New(t0).Agent("a", map[string]string{"zone": "x"}).Agent("b", nil).Cordon("a").Place(pinned("p", 0, "x"), "a")
			_ = w.DrainMove(id("p", 0), "a", t0)
			w.Finish(id("p", 0), "")
			return w
		}, draining(true), api.DrainDone, 0, nil, 1, 0},
		{"agent gone: done, nothing remains", func() *reconcilertest.World {
			w := threeOnA().Cordon("a")
			w.Lose("a")
			return w
		}, draining(false), api.DrainDone, 0, nil, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := Status(tc.world().Snapshot(), "a", tc.mark)
			if st.State != tc.state || len(st.Remaining) != tc.remaining || !slices.Equal(st.Moving, append([]api.TaskID{}, tc.moving...)) ||
				st.Moved != tc.moved || len(st.Blocked) != tc.blocked {
				t.Fatalf("Status = %+v, want state %s, %d remaining, moving %v, %d moved, %d blocked", st, tc.state, tc.remaining, tc.moving, tc.moved, tc.blocked)
			}
			if st.Agent != "a" || st.Force != tc.mark.Force || !st.StartedAt.Equal(t0) {
				t.Fatalf("Status = %+v: not the mark's", st)
			}
		})
	}
}

func TestBlockedReason(t *testing.T) {
	for _, tc := range []struct {
		t    scheduler.Task
		want string
	}{
		{scheduler.Task{}, "no other live, uncordoned agent"},
		{scheduler.Task{Selector: map[string]string{"zone": "x"}}, "no other live, uncordoned agent has sluice.agent.selector zone=x"},
		{scheduler.Task{Plugin: "P"}, "no other live, uncordoned agent has plugin P"},
		{scheduler.Task{Selector: map[string]string{"zone": "x"}, Plugin: "P"}, "no other live, uncordoned agent has sluice.agent.selector zone=x and plugin P"},
	} {
		if got := blockedReason(tc.t); got != tc.want {
			t.Errorf("blockedReason(%+v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}

// marks is a fleet topic's agent marks.
type marks map[string]store.AgentMark

func (m marks) Agents() map[string]store.AgentMark { return m }

func newController(w *reconcilertest.World, m marks) *Controller {
	return New(w, m, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// TestControllerDrainsToTheEnd steps a drain from its start to its end, the
// planner finishing each move between steps.
func TestControllerDrainsToTheEnd(t *testing.T) {
	ctx := context.Background()
	w := threeOnA().Cordon("a")
	m := marks{"a": draining(false)}
	c := newController(w, m)
	if n := c.Step(ctx); n != 2 {
		t.Fatalf("first step started %d moves, want 2", n)
	}
	if n := c.Step(ctx); n != 0 {
		t.Fatalf("a step with every slot taken started %d", n)
	}
	w.Finish(id("s", 0), "b")
	if n := c.Step(ctx); n != 1 {
		t.Fatalf("a step after a move ended started %d, want 1", n)
	}
	w.Finish(id("s", 1), "c")
	w.Finish(id("s", 2), "b")
	if n := c.Step(ctx); n != 0 {
		t.Fatalf("a finished drain started %d", n)
	}
	if st := Status(w.Snapshot(), "a", m["a"]); st.State != api.DrainDone || st.Moved != 3 {
		t.Fatalf("status = %+v, want done with 3 moved", st)
	}
	for _, s := range w.StartedMoves() {
		if s.Owner != reconciler.OwnerDrain || s.From != "a" || s.To != "" {
			t.Fatalf("started %+v, want a drain's move off a to anywhere", s)
		}
	}
}

// TestMovedCountsThisDrainOnly: an agent drained, uncordoned and drained
// again counts only the second drain's moves, however many the first made;
// a move of the first drain that ends late (it was in flight at the
// uncordon) is not the second's; and an agent never drained this term
// shows none.
func TestMovedCountsThisDrainOnly(t *testing.T) {
	ctx := context.Background()
	w := threeOnA().Cordon("a")
	first := marks{"a": draining(false)}
	c := newController(w, first)
	for range 3 {
		c.Step(ctx)
		for id := range w.Snapshot().Moves {
			w.Finish(id, "b")
		}
	}
	if st := Status(w.Snapshot(), "a", first["a"]); st.State != api.DrainDone || st.Moved != 3 {
		t.Fatalf("the first drain: %+v, want done with 3 moved", st)
	}
	if st := Status(w.Snapshot(), "b", draining(false)); st.Moved != 0 {
		t.Fatalf("b, never drained, shows %d moved", st.Moved)
	}

	// The tasks come back to a (a rebalance), one more arrives, and one
	// move of an earlier drain of a is still in flight.
	for n := range 3 {
		w.Place(task("s", n), "a")
	}
	w.Place(task("t", 0), "a").Place(task("late", 0), "a")
	_ = w.DrainMove(id("late", 0), "a", t0.Add(-time.Hour))
	second := marks{"a": store.AgentMark{State: api.AgentDraining, StartedAt: t0.Add(time.Minute)}}
	if st := Status(w.Snapshot(), "a", second["a"]); st.Moved != 0 {
		t.Fatalf("the second drain, before any move: %d moved, want 0 (not the first drain's 3)", st.Moved)
	}
	c = newController(w, second)
	c.Step(ctx)
	for id := range w.Snapshot().Moves {
		if id.Connector != "late" {
			w.Finish(id, "c")
		}
	}
	w.Finish(id("late", 0), "c")
	if st := Status(w.Snapshot(), "a", second["a"]); st.Moved != 1 {
		t.Fatalf("the second drain after one of its moves and the earlier drain's late one: %+v, want 1 moved", st)
	}
	for range 4 {
		c.Step(ctx)
		for id := range w.Snapshot().Moves {
			w.Finish(id, "c")
		}
	}
	if st := Status(w.Snapshot(), "a", second["a"]); st.State != api.DrainDone || st.Moved != 4 {
		t.Fatalf("the second drain: %+v, want done with 4 moved", st)
	}
}

// TestControllerRefusedMove: a move the reconciler refuses (the task moved
// or went since the snapshot) is not counted, and the next step decides
// again.
func TestControllerRefusedMove(t *testing.T) {
	w := threeOnA().Cordon("a")
	w.Refuse[id("s", 0)] = errors.New("refused")
	c := newController(w, marks{"a": draining(false)})
	if n := c.Step(context.Background()); n != 1 {
		t.Fatalf("started %d, want 1 (one refused)", n)
	}
	delete(w.Refuse, id("s", 0))
	if n := c.Step(context.Background()); n != 1 {
		t.Fatalf("the next step started %d, want the refused one", n)
	}
}

// TestControllerNothingDraining does not even look at the placements.
func TestControllerNothingDraining(t *testing.T) {
	c := New(panicMover{}, marks{"a": {State: api.AgentCordoned}}, nil)
	if n := c.Step(context.Background()); n != 0 {
		t.Fatal(n)
	}
}

type panicMover struct{}

func (panicMover) Snapshot() reconciler.Snapshot { panic("snapshot taken with nothing draining") }
func (panicMover) DrainMove(api.TaskID, string, time.Time) error {
	panic("move with nothing draining")
}

// TestFailoverMidDrain: a new leader's controller, started from the
// persisted marks alone, takes the drain up where the old one stopped —
// after each step of the drain.
func TestFailoverMidDrain(t *testing.T) {
	for stopAfter := range 4 {
		t.Run(fmt.Sprintf("after step %d", stopAfter), func(t *testing.T) {
			ctx := context.Background()
			w := threeOnA().Cordon("a")
			m := marks{"a": draining(false)}
			old := newController(w, m)
			for range stopAfter {
				old.Step(ctx)
				// The planner finishes the first move in flight.
				for _, s := range w.StartedMoves() {
					if _, moving := w.Moves[s.Task]; moving {
						w.Finish(s.Task, "b")
						break
					}
				}
			}
			// Failover: the moves in flight were the old term's; the tasks
			// are where they were.
			nw := w.Failover()
			c := newController(nw, m)
			for range 4 {
				c.Step(ctx)
				for id := range nw.Snapshot().Moves {
					nw.Finish(id, "c")
				}
			}
			st := Status(nw.Snapshot(), "a", m["a"])
			if st.State != api.DrainDone || len(st.Remaining) != 0 {
				t.Fatalf("after failover the drain is %+v, want done", st)
			}
		})
	}
}

// TestDecideAtTheSnapshotsTime: the moves Decide holds for itself are
// stamped with the snapshot's time, never the wall clock's.
func TestDecideAtTheSnapshotsTime(t *testing.T) {
	w := threeOnA().Cordon("a")
	w.Now = time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	c := newController(w, marks{"a": draining(false)})
	c.Step(context.Background())
	for _, mv := range w.Snapshot().Moves {
		if !mv.Since.Equal(w.Now) {
			t.Fatalf("a move started at %v, want the world's %v", mv.Since, w.Now)
		}
	}
}

// TestMarkCommand is the table of marks: what each request writes given
// the mark the agent has, who ends up owning it, and when nothing is
// written at all.
func TestMarkCommand(t *testing.T) {
	now := t0.Add(time.Hour)
	proc := t0.Add(-time.Hour)
	op := func(state string) store.AgentMark {
		return store.AgentMark{State: state, StartedAt: t0, Principal: "ops", Origin: api.CordonOperator}
	}
	preStop := store.AgentMark{State: api.AgentDraining, StartedAt: t0, Origin: api.CordonPreStop, AgentStartedAt: proc}
	roll := store.AgentMark{State: api.AgentDraining, StartedAt: t0, Principal: "rel", Origin: api.CordonAgentRoll}
	for _, tc := range []struct {
		name string
		cur  *store.AgentMark
		want Mark
		out  *store.AgentMark // nil: no command
	}{
		{"uncordon of an active agent: nothing", nil, Mark{State: api.AgentActive}, nil},
		{"uncordon lifts any mark", &preStop, Mark{State: api.AgentActive}, &store.AgentMark{State: api.AgentActive}},
		{"a new cordon", nil, Mark{State: api.AgentCordoned, Origin: api.CordonOperator, Principal: "ops"},
			&store.AgentMark{State: api.AgentCordoned, StartedAt: now, Principal: "ops", Origin: api.CordonOperator}},
		{"a new pre-stop drain keeps the process's start", nil, Mark{State: api.AgentDraining, Origin: api.CordonPreStop, AgentStartedAt: proc},
			&store.AgentMark{State: api.AgentDraining, StartedAt: now, Origin: api.CordonPreStop, AgentStartedAt: proc}},
		{"an operator's drain records no process", nil, Mark{State: api.AgentDraining, Origin: api.CordonOperator, AgentStartedAt: proc},
			&store.AgentMark{State: api.AgentDraining, StartedAt: now, Origin: api.CordonOperator}},
		{"the same again: nothing", &preStop, Mark{State: api.AgentDraining, Origin: api.CordonPreStop, AgentStartedAt: proc}, nil},
		{"a newer process's pre-stop drain is its own, from now", &preStop, Mark{State: api.AgentDraining, Origin: api.CordonPreStop, AgentStartedAt: now},
			&store.AgentMark{State: api.AgentDraining, StartedAt: now, Origin: api.CordonPreStop, AgentStartedAt: now}},
		{"an old cordon (no origin) is an operator's: cordon again, nothing", &store.AgentMark{State: api.AgentCordoned, StartedAt: t0},
			Mark{State: api.AgentCordoned, Origin: api.CordonOperator}, nil},
		{"an operator takes a pre-stop drain over, since it started", &preStop, Mark{State: api.AgentDraining, Origin: api.CordonOperator, Principal: "ops"},
			&store.AgentMark{State: api.AgentDraining, StartedAt: t0, Principal: "ops", Origin: api.CordonOperator}},
		{"an operator takes a roll's drain over", &roll, Mark{State: api.AgentDraining, Origin: api.CordonOperator, Principal: "ops"},
			&store.AgentMark{State: api.AgentDraining, StartedAt: t0, Principal: "ops", Origin: api.CordonOperator}},
		{"a pre-stop drain of an operator's cordon stays the operator's", ptr(op(api.AgentCordoned)),
			Mark{State: api.AgentDraining, Origin: api.CordonPreStop, AgentStartedAt: proc},
			&store.AgentMark{State: api.AgentDraining, StartedAt: now, Principal: "ops", Origin: api.CordonOperator}},
		{"a pre-stop drain of a roll's drain: nothing", &roll, Mark{State: api.AgentDraining, Origin: api.CordonPreStop, AgentStartedAt: proc}, nil},
		{"a roll's drain of a pre-stop drain takes it over", &preStop, Mark{State: api.AgentDraining, Origin: api.CordonAgentRoll, Principal: "rel"},
			&store.AgentMark{State: api.AgentDraining, StartedAt: t0, Principal: "rel", Origin: api.CordonAgentRoll}},
		{"force changes: a new drain, same owner", ptr(op(api.AgentDraining)), Mark{State: api.AgentDraining, Force: true, Origin: api.CordonOperator, Principal: "eve"},
			&store.AgentMark{State: api.AgentDraining, Force: true, StartedAt: now, Principal: "eve", Origin: api.CordonOperator}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cur store.AgentMark
			if tc.cur != nil {
				cur = *tc.cur
			}
			cmd := MarkCommand("a", cur, tc.cur != nil, tc.want, now)
			switch {
			case tc.out == nil && cmd != nil:
				t.Fatalf("wrote %+v, want nothing", cmd)
			case tc.out != nil && cmd != (store.MarkAgent{ID: "a", Mark: *tc.out}):
				t.Fatalf("wrote %+v, want %+v", cmd, store.MarkAgent{ID: "a", Mark: *tc.out})
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
