package rebalance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
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

// lopsided is agents a, b and c with four tasks, all on a: evening them
// out moves two.
func lopsided() *reconcilertest.World {
	w := reconcilertest.New(t0).Agent("a", nil).Agent("b", nil).Agent("c", nil)
	for n := range 4 {
		w.Place(task("s", n), "a")
	}
	return w
}

func TestPlan(t *testing.T) {
	r := Plan(lopsided().Snapshot(), 0, true)
	if !r.DryRun || r.State != MovePlanned || r.MaxMoves != DefaultParallel || r.ID != "" {
		t.Fatalf("plan = %+v", r)
	}
	if len(r.Moves) != 2 {
		t.Fatalf("plan moves %v, want 2", r.Moves)
	}
	for _, m := range r.Moves {
		if m.From != "a" || m.State != MovePlanned {
			t.Fatalf("move %+v", m)
		}
	}
	if !reflect.DeepEqual(r.Before, map[string]int{"a": 4, "b": 0, "c": 0}) {
		t.Fatalf("before = %v", r.Before)
	}
	if r.After["a"] != 2 || r.After["b"]+r.After["c"] != 2 {
		t.Fatalf("after = %v", r.After)
	}
	if r := Plan(lopsided().Snapshot(), 5, false); r.MaxMoves != 5 || r.DryRun {
		t.Fatalf("max moves 5 = %+v", r)
	}
	even := reconcilertest.New(t0).Agent("a", nil).Agent("b", nil).Place(task("s", 0), "a").Place(task("s", 1), "b")
	if r := Plan(even.Snapshot(), 0, false); len(r.Moves) != 0 {
		t.Fatalf("an even world plans %v", r.Moves)
	}
}

// mv is a rebalance's move of s/n from → to in state.
func mv(n int, from, to, state string) store.RebalanceMove {
	return store.RebalanceMove{Connector: "s", Task: n, From: from, To: to, State: state}
}

func running(maxMoves int, moves ...store.RebalanceMove) *store.Rebalance {
	return &store.Rebalance{ID: "r1", State: api.DrainRunning, MaxMoves: maxMoves, Moves: moves}
}

// TestAdvance is the table of a rebalance's transitions.
func TestAdvance(t *testing.T) {
	for _, tc := range []struct {
		name    string
		world   func() *reconcilertest.World
		r       *store.Rebalance
		states  []string // of the moves after
		starts  []Start
		state   string
		changed bool
	}{
		{"planned moves start up to max moves", lopsided, running(1, mv(0, "a", "b", MovePlanned), mv(1, "a", "c", MovePlanned)),
			[]string{MoveMoving, MovePlanned}, []Start{{Move: 0}}, api.DrainRunning, true},
		{"max moves 2", lopsided, running(2, mv(0, "a", "b", MovePlanned), mv(1, "a", "c", MovePlanned)),
			[]string{MoveMoving, MoveMoving}, []Start{{Move: 0}, {Move: 1}}, api.DrainRunning, true},
		{"a move in flight holds its slot", func() *reconcilertest.World {
			w := lopsided()
			_ = w.Move(id("s", 0), "a", "b", reconciler.OwnerRebalance)
			return w
		}, running(1, mv(0, "a", "b", MoveMoving), mv(1, "a", "c", MovePlanned)),
			[]string{MoveMoving, MovePlanned}, nil, api.DrainRunning, false},
		{"move confirmed: done, the next starts", func() *reconcilertest.World {
			w := lopsided()
			_ = w.Move(id("s", 0), "a", "b", reconciler.OwnerRebalance)
			w.Finish(id("s", 0), "b")
			return w
		}, running(1, mv(0, "a", "b", MoveMoving), mv(1, "a", "c", MovePlanned)),
			[]string{MoveDone, MoveMoving}, []Start{{Move: 1}}, api.DrainRunning, true},
		{"move failed: the task went elsewhere, skipped", func() *reconcilertest.World {
			w := lopsided()
			_ = w.Move(id("s", 0), "a", "b", reconciler.OwnerRebalance)
			w.Finish(id("s", 0), "c")
			return w
		}, running(1, mv(0, "a", "b", MoveMoving)), []string{MoveSkipped}, nil, api.DrainDone, true},
		{"move failed: the task is gone, skipped", func() *reconcilertest.World {
			w := lopsided()
			_ = w.Move(id("s", 0), "a", "b", reconciler.OwnerRebalance)
			w.Finish(id("s", 0), "")
			return w
		}, running(1, mv(0, "a", "b", MoveMoving)), []string{MoveSkipped}, nil, api.DrainDone, true},
		{"moving on record, not in flight (new leader): started again", lopsided,
			running(1, mv(0, "a", "b", MoveMoving), mv(1, "a", "c", MovePlanned)),
			[]string{MoveMoving, MovePlanned}, []Start{{Move: 0, Resumed: true}}, api.DrainRunning, false},
		{"moving on record, target cordoned since: skipped", func() *reconcilertest.World { return lopsided().Cordon("b") },
			running(1, mv(0, "a", "b", MoveMoving)), []string{MoveSkipped}, nil, api.DrainDone, true},
		{"planned, task no longer where planned: skipped", func() *reconcilertest.World {
			w := lopsided()
			w.Place(task("s", 0), "c")
			return w
		}, running(1, mv(0, "a", "b", MovePlanned)), []string{MoveSkipped}, nil, api.DrainDone, true},
		{"planned, target gone: skipped", func() *reconcilertest.World {
			w := lopsided()
			w.Lose("b")
			return w
		}, running(1, mv(0, "a", "b", MovePlanned)), []string{MoveSkipped}, nil, api.DrainDone, true},
		{"planned, a drain moves it: skipped", func() *reconcilertest.World {
			w := lopsided()
			_ = w.Move(id("s", 0), "a", "", reconciler.OwnerDrain)
			return w
		}, running(1, mv(0, "a", "b", MovePlanned)), []string{MoveSkipped}, nil, api.DrainDone, true},
		{"planned, already moving by this rebalance (its record was lost): moving", func() *reconcilertest.World {
			w := lopsided()
			_ = w.Move(id("s", 0), "a", "b", reconciler.OwnerRebalance)
			return w
		}, running(1, mv(0, "a", "b", MovePlanned)), []string{MoveMoving}, nil, api.DrainRunning, true},
		{"finished: every move done", func() *reconcilertest.World {
			w := lopsided()
			_ = w.Move(id("s", 0), "a", "b", reconciler.OwnerRebalance)
			w.Finish(id("s", 0), "b")
			return w
		}, running(1, mv(0, "a", "b", MoveMoving), mv(1, "a", "c", MoveDone)), []string{MoveDone, MoveDone}, nil, api.DrainDone, true},
		{"nothing to move: done at once", lopsided, running(1), nil, nil, api.DrainDone, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			starts, changed := Advance(tc.r, tc.world().Snapshot())
			var states []string
			for _, m := range tc.r.Moves {
				states = append(states, m.State)
			}
			if !reflect.DeepEqual(states, tc.states) || !reflect.DeepEqual(starts, tc.starts) || tc.r.State != tc.state || changed != tc.changed {
				t.Fatalf("Advance: states %v, starts %v, state %s, changed %v; want %v, %v, %s, %v", states, starts, tc.r.State, changed,
					tc.states, tc.starts, tc.state, tc.changed)
			}
		})
	}
}

// memStore is the fleet topic's rebalance record.
type memStore struct {
	r      *store.Rebalance
	puts   int
	putErr error
}

func (s *memStore) Rebalance() *store.Rebalance {
	if s.r == nil {
		return nil
	}
	c := *s.r
	c.Moves = append([]store.RebalanceMove(nil), s.r.Moves...)
	return &c
}

func (s *memStore) Put(ctx context.Context, r *store.Rebalance) error {
	if s.putErr != nil {
		return s.putErr
	}
	c := *r
	c.Moves = append([]store.RebalanceMove(nil), r.Moves...)
	s.r, s.puts = &c, s.puts+1
	return nil
}

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func idAt(now time.Time) string { return "rb-" + now.UTC().Format(time.RFC3339Nano) }

func newController(w *reconcilertest.World, s *memStore, c *clock) *Controller {
	return New(w, s, c, idAt, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func TestStart(t *testing.T) {
	ctx := context.Background()
	s, c := &memStore{}, &clock{now: t0}
	ctl := newController(lopsided(), s, c)
	if r, err := ctl.Start(ctx, 1, true); err != nil || r.ID != "" || s.puts != 0 || r.State != MovePlanned {
		t.Fatalf("dry run = %+v, %v (%d puts): want the plan alone", r, err, s.puts)
	}
	r, err := ctl.Start(ctx, 1, false)
	if err != nil || r.State != api.DrainRunning || r.ID != idAt(t0) || s.puts != 1 {
		t.Fatalf("start = %+v, %v", r, err)
	}
	var running *RunningError
	if _, err := ctl.Start(ctx, 1, false); !errors.As(err, &running) || running.ID != r.ID {
		t.Fatalf("a second start while one runs: %v", err)
	}
	// A dry run while one runs is only a plan.
	if _, err := ctl.Start(ctx, 1, true); err != nil {
		t.Fatalf("a dry run while one runs: %v", err)
	}
	s.r.State = api.DrainDone
	c.now = c.now.Add(time.Nanosecond)
	if r2, err := ctl.Start(ctx, 1, false); err != nil || r2.ID == r.ID {
		t.Fatalf("a start a nanosecond later: %+v, %v: want a new id", r2, err)
	}
	even := reconcilertest.New(t0).Agent("a", nil).Place(task("s", 0), "a")
	if r, err := newController(even, &memStore{}, c).Start(ctx, 1, false); err != nil || r.State != api.DrainDone {
		t.Fatalf("nothing to move: %+v, %v; want done at once", r, err)
	}
	boom := errors.New("broker away")
	if _, err := newController(lopsided(), &memStore{putErr: boom}, c).Start(ctx, 1, false); !errors.Is(err, boom) {
		t.Fatalf("a failed write: %v, want it returned", err)
	}
}

// TestStepToTheEnd drives a rebalance from its start to its end, the
// planner finishing each move between steps.
func TestStepToTheEnd(t *testing.T) {
	ctx := context.Background()
	w, s := lopsided(), &memStore{}
	ctl := newController(w, s, &clock{now: t0})
	if _, err := ctl.Start(ctx, 1, false); err != nil {
		t.Fatal(err)
	}
	for i := 0; s.r.State == api.DrainRunning; i++ {
		if i > 10 {
			t.Fatalf("rebalance not done after 10 steps: %+v", s.r)
		}
		ctl.Step(ctx)
		for id, m := range w.Snapshot().Moves {
			w.Finish(id, m.To)
		}
	}
	for _, m := range s.r.Moves {
		if m.State != MoveDone {
			t.Fatalf("move %+v not done", m)
		}
	}
	if loads := scheduler.Loads(w.Snapshot().Agents, w.Snapshot().Current); loads["a"] != 2 {
		t.Fatalf("loads after = %v", loads)
	}
	if n := ctl.Step(ctx); n != 0 {
		t.Fatalf("a done rebalance started %d", n)
	}
}

// TestStepRefused: a planned move the reconciler refuses is skipped; a
// resumed one stays moving, judged again on the next step.
func TestStepRefused(t *testing.T) {
	ctx := context.Background()
	w := lopsided()
	w.Refuse[id("s", 0)] = reconciler.ErrNotOnAgent
	s := &memStore{r: running(2, mv(0, "a", "b", MovePlanned), mv(1, "a", "c", MoveMoving))}
	w.Refuse[id("s", 1)] = reconciler.ErrMoving
	if n := newController(w, s, &clock{now: t0}).Step(ctx); n != 0 {
		t.Fatalf("started %d", n)
	}
	if s.r.Moves[0].State != MoveSkipped || s.r.Moves[1].State != MoveMoving {
		t.Fatalf("after refusals: %+v", s.r.Moves)
	}
}

// TestStepWriteFails: progress that did not reach the topic is derived
// again on the next step (the move in flight is found moving).
func TestStepWriteFails(t *testing.T) {
	ctx := context.Background()
	w := lopsided()
	s := &memStore{r: running(1, mv(0, "a", "b", MovePlanned)), putErr: errors.New("broker away")}
	ctl := newController(w, s, &clock{now: t0})
	if n := ctl.Step(ctx); n != 1 {
		t.Fatalf("started %d", n)
	}
	if s.r.Moves[0].State != MovePlanned {
		t.Fatal("a failed write changed the record")
	}
	s.putErr = nil
	if n := ctl.Step(ctx); n != 0 {
		t.Fatalf("the retry started %d moves again", n)
	}
	if s.r.Moves[0].State != MoveMoving {
		t.Fatalf("after the retry: %+v", s.r.Moves)
	}
}

// TestFailoverMidRebalance: a new leader's controller, started from the
// record in the fleet topic alone, finishes the rebalance — whichever step
// the old leader stopped after.
func TestFailoverMidRebalance(t *testing.T) {
	for stopAfter := range 5 {
		t.Run(fmt.Sprintf("after step %d", stopAfter), func(t *testing.T) {
			ctx := context.Background()
			w, s := lopsided(), &memStore{}
			old := newController(w, s, &clock{now: t0})
			if _, err := old.Start(ctx, 1, false); err != nil {
				t.Fatal(err)
			}
			for range stopAfter {
				old.Step(ctx)
				for id, m := range w.Snapshot().Moves {
					w.Finish(id, m.To)
					break
				}
			}
			nw := w.Failover()
			ctl := newController(nw, s, &clock{now: t0.Add(time.Hour)})
			for i := 0; s.r.State == api.DrainRunning; i++ {
				if i > 10 {
					t.Fatalf("not done after failover: %+v", s.r)
				}
				ctl.Step(ctx)
				for id, m := range nw.Snapshot().Moves {
					nw.Finish(id, m.To)
				}
			}
			for _, m := range s.r.Moves {
				if m.State != MoveDone {
					t.Fatalf("after failover: move %+v", m)
				}
			}
		})
	}
}
