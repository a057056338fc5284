package reconciler

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/placements"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/shared/wire"
)

// Fleet operations move tasks between agents on purpose — a drain off an
// agent, a rebalance across agents — a few at a time. A move in flight is
// handed to the planner (planner.Input.Moves), which revokes the task from
// its agent, waits for it to stop, and assigns it elsewhere with a new
// generation, as it moves any task; it is done once the task runs (or, for
// a task with nowhere to go in a forced drain, once it left).
//
//	drain / rebalance ─► Move ─► plan: revoke on From, assign on To ─► reported running ─► done

// The owners of a move.
const (
	OwnerDrain     = "drain"
	OwnerRebalance = "rebalance"
)

// MoveTimeout bounds a move: one whose task is not reported running
// elsewhere by then is given up, so that a stuck agent does not hold a
// drain's or a rebalance's slot for ever.
const MoveTimeout = 2 * time.Minute

// activeMove is one move in flight.
type activeMove struct {
	scheduler.Move
	// owner is what asked for it: OwnerDrain or OwnerRebalance.
	owner string
	since time.Time
	// drain names the drain a drain's move serves: when it started (its
	// mark's StartedAt). Zero for any other move.
	drain time.Time
}

// MoveInfo is a move in flight as a Snapshot shows it.
type MoveInfo struct {
	From, To string // To empty: wherever the planner places it
	Owner    string
	Since    time.Time
	// Drain is when the drain the move serves started (zero: no drain's).
	Drain time.Time
}

// DrainTally is what the latest drain of an agent moved off it this term:
// Moved tasks, for the drain that started at Started. A drain is named by
// its start, as the fleet topic records it, so that a new drain of the
// same agent counts from zero rather than on top of the one before.
type DrainTally struct {
	Started time.Time
	Moved   int
}

// ErrMoving refuses a move of a task that is already moving.
var ErrMoving = errors.New("the task is already moving")

// ErrNotOnAgent refuses a move of a task that is not placed where the
// mover thought.
var ErrNotOnAgent = errors.New("the task is not placed on the agent")

// Move starts moving task from agent from to agent to (empty: wherever the
// planner places it, or nowhere for a task no other agent may run), on
// behalf of owner. The task must be placed on from and not already moving.
func (r *Reconciler) Move(task api.TaskID, from, to, owner string) error {
	return r.move(activeMove{Move: scheduler.Move{From: from, To: to}, owner: owner}, task)
}

// DrainMove starts moving task off agent from, wherever the planner places
// it (or nowhere), for the drain of from that started at drain: the
// drain's tally counts it once the task runs elsewhere.
func (r *Reconciler) DrainMove(task api.TaskID, from string, drain time.Time) error {
	return r.move(activeMove{Move: scheduler.Move{From: from}, owner: OwnerDrain, drain: drain}, task)
}

// move starts m, a move of task, now.
func (r *Reconciler) move(m activeMove, task api.TaskID) error {
	m.since = r.now()
	if err := r.table.startMove(task, m); err != nil {
		return fmt.Errorf("move task %s from %s: %w", task, m.From, err)
	}
	r.Trigger()
	return nil
}

// startMove records m, a move of task off m.From: the task must be placed
// there and not already moving.
func (t *Table) startMove(task api.TaskID, m activeMove) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, moving := t.moves[task]; moving {
		return ErrMoving
	}
	if p, ok := t.placed.Get(task); !ok || p.Agent != m.From {
		return ErrNotOnAgent
	}
	t.moves[task] = m
	return nil
}

// Watch returns a channel woken whenever a move ends (and the next may
// start).
func (r *Reconciler) Watch() <-chan struct{} {
	c := make(chan struct{}, 1)
	r.watchMu.Lock()
	r.watchers = append(r.watchers, c)
	r.watchMu.Unlock()
	return c
}

func (r *Reconciler) wakeWatchers() {
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	for _, c := range r.watchers {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// confirmMove ends the move of task id once the agent it went to reports
// it under the generation it was placed there with (a status report comes
// at once; a heartbeat only every lease/3), and wakes the watchers to start
// the next move.
func (r *Reconciler) confirmMove(agent string, id api.TaskID, gen int64) {
	if r.table.confirmMove(agent, id, gen) {
		r.wakeWatchers()
	}
}

// confirmMove ends the move of id if agent, where it went, reports it at
// the generation it was placed there with; it reports whether it did.
func (t *Table) confirmMove(agent string, id api.TaskID, gen int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, moving := t.moves[id]
	p, placed := t.placed.Get(id)
	done := moving && placed && agent != m.From && p.Agent == agent && p.Generation == gen
	if done {
		t.endMoveLocked(id)
	}
	return done
}

// endMoveLocked drops the move of id, counting a drain's in its drain's
// tally; the caller holds t.mu.
func (t *Table) endMoveLocked(id api.TaskID) {
	if m := t.moves[id]; m.owner == OwnerDrain {
		t.drained[m.From] = m.tallied(t.drained[m.From])
	}
	delete(t.moves, id)
}

// tallied is tally, a drain's of m.From, with m, a drain's move that is
// done, counted: a move of a later drain starts a new tally, and the late
// end of a move of an earlier drain (given up, then uncordoned and
// drained again) is not this drain's.
func (m activeMove) tallied(tally DrainTally) DrainTally {
	switch {
	case m.drain.Equal(tally.Started):
		tally.Moved++
	case m.drain.After(tally.Started):
		tally = DrainTally{Started: m.drain, Moved: 1}
	}
	return tally
}

// moveVerdict is what becomes of a move in flight.
type moveVerdict int

const (
	moveGoesOn   moveVerdict = iota
	moveDone                 // the task left From and runs where it went, or nowhere
	moveTimedOut             // not reported running elsewhere within MoveTimeout
)

// judgeMove decides a move in flight: p is the task's placement (placed
// false: none), onNew what the agent it is placed on reports of it, and
// fromRuns whether From still reports running it.
func judgeMove(m activeMove, p placements.Placement, placed bool, onNew wire.RunningTask, newReports bool, fromRuns bool, now time.Time) moveVerdict {
	switch {
	case now.Sub(m.since) > MoveTimeout:
		return moveTimedOut
	case !placed:
		// Not placed anywhere: unassigned, or no longer desired.
		if !fromRuns {
			return moveDone
		}
	case p.Agent != m.From:
		if newReports && onNew.Generation == p.Generation {
			return moveDone
		}
	}
	return moveGoesOn
}

// retireMovesLocked drops the moves that are done by now, counting a
// drain's in t.drained, and returns those given up (MoveTimeout); the
// caller holds t.mu.
func (t *Table) retireMovesLocked(now time.Time) (timedOut []activeMove) {
	for id, m := range t.moves {
		p, placed := t.placed.Get(id)
		var onNew wire.RunningTask
		newReports := false
		if placed {
			if a, ok := t.agents.Get(p.Agent); ok {
				onNew, newReports = a.Reported[id], true
			}
		}
		fromRuns := false
		if a, ok := t.agents.Get(m.From); ok {
			_, fromRuns = a.Reported[id]
		}
		switch judgeMove(m, p, placed, onNew, newReports, fromRuns, now) {
		case moveTimedOut:
			// The new agent never reported the task: give its slot to the
			// next move; the planner goes on placing the task as usual.
			m.Task = id
			timedOut = append(timedOut, m)
			t.endMoveLocked(id)
		case moveDone:
			t.endMoveLocked(id)
		}
	}
	return timedOut
}

// planMovesLocked are the moves the planner must make now; the caller
// holds t.mu.
func (t *Table) planMovesLocked() map[api.TaskID]scheduler.Move {
	if len(t.moves) == 0 {
		return nil
	}
	out := make(map[api.TaskID]scheduler.Move, len(t.moves))
	for id, m := range t.moves {
		out[id] = m.Move
	}
	return out
}

// Snapshot is the placement world at one instant, as fleet controllers
// decide from it.
type Snapshot struct {
	// At is when it was taken.
	At time.Time
	// Tasks are the placed tasks as the scheduler sees them, sorted; a task
	// placed nowhere-able (a selector that does not parse) is left out.
	Tasks []scheduler.Task
	// Agents are the registered agents, with their cordons.
	Agents []scheduler.Agent
	// Current is the agent each of Tasks is placed on.
	Current map[api.TaskID]string
	// Placed is every placement's agent; Reported what each agent reports
	// running.
	Placed   map[api.TaskID]string
	Reported map[string][]api.TaskID
	// Moves are the moves in flight; Drained is, by agent, what its latest
	// drain moved off it this term.
	Moves   map[api.TaskID]MoveInfo
	Drained map[string]DrainTally
}

// Snapshot retires the moves that are done and returns the placement world
// as it stands.
func (r *Reconciler) Snapshot() Snapshot {
	now := r.now()
	v, timedOut := r.table.view(now)
	for _, m := range timedOut {
		r.log.Warn("a moved task was not reported running in time; the move is given up", "task", m.Task, "from", m.From, "owner", m.owner)
	}
	s := Snapshot{At: now, Placed: make(map[api.TaskID]string, len(v.placed)), Reported: map[string][]api.TaskID{}, Moves: v.moves, Drained: v.drained,
		Current: map[api.TaskID]string{}}
	for id, p := range v.placed {
		s.Placed[id] = p.Agent
	}
	// Outside the table's lock: the connectors' side reads the host
	// plugins (the table) to name a task's plugin.
	cordoned := r.cordoned()
	for _, a := range v.agents {
		for id := range a.Reported {
			s.Reported[a.ID] = append(s.Reported[a.ID], id)
		}
		if a.Registered {
			s.Agents = append(s.Agents, SchedulerAgent(a, cordoned[a.ID]))
		}
	}
	for id, agent := range s.Placed {
		t, ok := r.cfg.Connectors.SchedulerTask(id)
		if !ok {
			continue // runs nowhere: the planner revokes it, nothing moves it
		}
		s.Current[id] = agent
		s.Tasks = append(s.Tasks, t)
	}
	sort.Slice(s.Tasks, func(i, j int) bool { return TaskLess(s.Tasks[i].ID, s.Tasks[j].ID) })
	return s
}

// TasksOn are the tasks placed on agent or that it reports, sorted.
func (s Snapshot) TasksOn(agent string) []api.TaskID {
	ids := map[api.TaskID]bool{}
	for id, a := range s.Placed {
		if a == agent {
			ids[id] = true
		}
	}
	for _, id := range s.Reported[agent] {
		ids[id] = true
	}
	out := make([]api.TaskID, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return TaskLess(out[i], out[j]) })
	return out
}

// cordoned are the agents that take no new task: cordoned or draining.
func (r *Reconciler) cordoned() map[string]bool {
	out := map[string]bool{}
	for id := range r.cfg.Fleet.Agents() {
		out[id] = true
	}
	return out
}

// TaskLess orders task ids by connector, then task number.
func TaskLess(a, b api.TaskID) bool {
	if a.Connector != b.Connector {
		return a.Connector < b.Connector
	}
	return a.Task < b.Task
}
