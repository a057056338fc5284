// Package rebalance is the leader controller that evens tasks out across
// agents when asked: it plans the moves (scheduler.Rebalance) from a
// snapshot of the placements, records the rebalance in the fleet topic,
// and moves the tasks through the reconciler at most max_moves at a time.
// Placement is otherwise sticky (a joining agent gets only new tasks), so
// after a rolling restart the last agents up run little. The rebalance
// lives in the fleet topic: a new leader's controller finishes it.
//
//	POST /sluice/rebalance ─► Start: Plan, record ─► Step: Advance ─► reconciler.Move ─► record progress
package rebalance

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// DefaultParallel is max_moves when a request gives none.
const DefaultParallel = 2

// The states of a rebalance's move: planned, moving and done, and skipped for a move whose task is gone or no longer where the
// plan found it, or whose target is no longer live.
const (
	MovePlanned = "planned"
	MoveMoving  = "moving"
	MoveDone    = "done"
	MoveSkipped = "skipped"
)

// Mover is the reconciler as a rebalance uses it.
type Mover interface {
	Snapshot() reconciler.Snapshot
	Move(task api.TaskID, from, to, owner string) error
}

// Store is where the rebalance lives (the fleet topic).
type Store interface {
	// Rebalance is the rebalance in progress or the last one; nil: none.
	Rebalance() *store.Rebalance
	// Put records r.
	Put(ctx context.Context, r *store.Rebalance) error
}

// Clock tells the time a rebalance starts at (its id).
type Clock interface{ Now() time.Time }

// Plan is the rebalance of s: the moves that even out tasks across the
// live, uncordoned agents, each planned, with the agents' loads before and
// after. maxMoves ≤ 0 means DefaultParallel.
func Plan(s reconciler.Snapshot, maxMoves int, dryRun bool) store.Rebalance {
	if maxMoves <= 0 {
		maxMoves = DefaultParallel
	}
	moves := scheduler.Rebalance(s.Tasks, s.Agents, s.Current, 0)
	before := scheduler.Loads(s.Agents, s.Current)
	after := make(map[string]int, len(before))
	for id, n := range before {
		after[id] = n
	}
	r := store.Rebalance{DryRun: dryRun, State: MovePlanned, MaxMoves: maxMoves, Moves: []store.RebalanceMove{}, Before: before, After: after}
	for _, m := range moves {
		r.Moves = append(r.Moves, store.RebalanceMove{Connector: m.Task.Connector, Task: m.Task.Task, From: m.From, To: m.To, State: MovePlanned})
		after[m.From]--
		after[m.To]++
	}
	return r
}

// Start is a move Advance starts: index Move of the rebalance's moves.
// Resumed: the move was recorded moving already (a new leader, or a move
// the planner has not made yet); otherwise it was planned, and is skipped
// should the reconciler refuse it.
type Start struct {
	Move    int
	Resumed bool
}

// Advance moves running rebalance r on, as s shows the world: a moving
// task that runs where it was sent is done; a planned one starts while
// fewer than max_moves move; one whose task is gone, or no longer where
// the plan found it, or whose target is no longer live, is skipped. It
// updates r in place and returns the moves to start and whether r
// changed; r is done once no move is left.
func Advance(r *store.Rebalance, s reconciler.Snapshot) (starts []Start, changed bool) {
	live := map[string]bool{}
	for _, a := range s.Agents {
		live[a.ID] = !a.Cordoned
	}
	inflight, left := 0, 0
	for i := range r.Moves {
		m := &r.Moves[i]
		if m.State != MoveMoving {
			continue
		}
		id := api.TaskID{Connector: m.Connector, Task: m.Task}
		switch _, moving := s.Moves[id]; {
		case s.Current[id] == m.To && !moving:
			m.State, changed = MoveDone, true
		case moving:
			inflight++
		case s.Current[id] == m.From && live[m.To]:
			// A new leader, or a move the planner has not made yet.
			starts = append(starts, Start{Move: i, Resumed: true})
			inflight++
		default:
			m.State, changed = MoveSkipped, true
		}
	}
	for i := range r.Moves {
		m := &r.Moves[i]
		if m.State != MovePlanned {
			continue
		}
		if inflight >= r.MaxMoves {
			left++
			continue
		}
		id := api.TaskID{Connector: m.Connector, Task: m.Task}
		am, moving := s.Moves[id]
		if moving && am.Owner == reconciler.OwnerRebalance && am.From == m.From && am.To == m.To {
			// Started on an earlier step whose record did not reach the
			// topic: it is moving.
			m.State, changed = MoveMoving, true
			inflight++
			continue
		}
		if moving || s.Current[id] != m.From || !live[m.To] {
			m.State, changed = MoveSkipped, true
			continue
		}
		starts = append(starts, Start{Move: i})
		m.State, changed = MoveMoving, true
		inflight++
	}
	if inflight == 0 && left == 0 {
		r.State, changed = api.DrainDone, true
	}
	return starts, changed
}

// RunningError refuses a rebalance while another runs.
type RunningError struct{ ID string }

// Error implements error.
func (e *RunningError) Error() string { return fmt.Sprintf("rebalance %s is still running", e.ID) }

// Controller starts rebalances and drives the running one while this
// coordinator leads.
type Controller struct {
	mover Mover
	store Store
	clock Clock
	newID func(now time.Time) string
	log   *slog.Logger
	// mu makes starting a rebalance one step: the check that none runs
	// and the write of the new one. Lock order: mu, then the store's own
	// locks (the fleet state's, the writer's); the snapshot is taken
	// before mu, so the reconciler's lock never nests inside it.
	mu sync.Mutex
}

// New makes a rebalance controller; newID names a rebalance started at now.
func New(mover Mover, store Store, clock Clock, newID func(now time.Time) string, log *slog.Logger) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{mover: mover, store: store, clock: clock, newID: newID, log: log}
}

// Start plans a rebalance; with dryRun it returns only the plan, else it
// records it running (done at once when there is nothing to move). It
// refuses with *RunningError while another runs; an error of the write is
// returned as the store gave it, for the caller to answer with.
func (c *Controller) Start(ctx context.Context, maxMoves int, dryRun bool) (store.Rebalance, error) {
	r := Plan(c.mover.Snapshot(), maxMoves, dryRun)
	if dryRun {
		return r, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur := c.store.Rebalance(); cur != nil && cur.State == api.DrainRunning {
		return store.Rebalance{}, &RunningError{ID: cur.ID}
	}
	r.ID, r.State = c.newID(c.clock.Now()), api.DrainRunning
	if len(r.Moves) == 0 {
		r.State = api.DrainDone
	}
	if err := c.store.Put(ctx, &r); err != nil {
		return store.Rebalance{}, err
	}
	c.log.Info("rebalance started", "id", r.ID, "moves", len(r.Moves), "max_moves", r.MaxMoves)
	return r, nil
}

// Step moves the running rebalance on (Advance), starts its moves and
// records a change; it returns how many moves it started. After a
// failover the new leader's controller takes the moves up where the
// record has them.
func (c *Controller) Step(ctx context.Context) int {
	r := c.store.Rebalance()
	if r == nil || r.State != api.DrainRunning {
		return 0
	}
	starts, changed := Advance(r, c.mover.Snapshot())
	started := 0
	for _, s := range starts {
		m := &r.Moves[s.Move]
		id := api.TaskID{Connector: m.Connector, Task: m.Task}
		if err := c.mover.Move(id, m.From, m.To, reconciler.OwnerRebalance); err != nil {
			// The task moved or went since the snapshot: a planned move is
			// skipped, as Advance would have had it seen that; a resumed
			// one is judged again on the next step.
			if !s.Resumed {
				m.State, changed = MoveSkipped, true
			}
			continue
		}
		started++
	}
	if changed {
		if err := c.store.Put(ctx, r); err != nil {
			c.log.Warn("recording the rebalance's progress failed; retrying", "id", r.ID, "err", err)
		}
	}
	return started
}
