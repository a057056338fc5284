// Package reconcilertest is a stand-in for the reconciler, for testing the
// fleet controllers (fleet/drain, fleet/rebalance) without Kafka or NATS:
// a placement world kept in maps, moved by hand, that refuses a move as
// the reconciler does.
package reconcilertest

import (
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
)

// World is a placement world: agents, the tasks placed on them and the
// moves in flight. It implements the controllers' Mover.
type World struct {
	mu sync.Mutex
	// Now is the time of the next Snapshot and Move.
	Now time.Time
	// Agents are the registered agents.
	Agents map[string]scheduler.Agent
	// Tasks are the placed tasks (their selectors and plugins), Placed the
	// agent each runs on.
	Tasks  map[api.TaskID]scheduler.Task
	Placed map[api.TaskID]string
	Moves  map[api.TaskID]reconciler.MoveInfo
	// Drained is what the latest drain of each agent moved off it.
	Drained map[string]reconciler.DrainTally
	// Started are the moves started, in order.
	Started []Started
	// Refuse makes Move fail for a task with the error.
	Refuse map[api.TaskID]error
}

// Started is a move Move started.
type Started struct {
	Task            api.TaskID
	From, To, Owner string
}

// New makes an empty world at now.
func New(now time.Time) *World {
	return &World{Now: now, Agents: map[string]scheduler.Agent{}, Tasks: map[api.TaskID]scheduler.Task{}, Placed: map[api.TaskID]string{},
		Moves: map[api.TaskID]reconciler.MoveInfo{}, Drained: map[string]reconciler.DrainTally{}, Refuse: map[api.TaskID]error{}}
}

// Agent registers agents with labels (and no plugin).
func (w *World) Agent(id string, labels map[string]string) *World {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.Agents[id] = scheduler.Agent{ID: id, Labels: labels}
	return w
}

// Cordon marks an agent cordoned (or draining): it takes no new task.
func (w *World) Cordon(id string) *World {
	w.mu.Lock()
	defer w.mu.Unlock()
	a := w.Agents[id]
	a.Cordoned = true
	w.Agents[id] = a
	return w
}

// Lose forgets an agent and every task placed on it, as the planner does
// when an agent is lost.
func (w *World) Lose(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.Agents, id)
	for t, a := range w.Placed {
		if a == id {
			delete(w.Placed, t)
		}
	}
}

// Place places task t on agent.
func (w *World) Place(t scheduler.Task, agent string) *World {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.Tasks[t.ID] = t
	w.Placed[t.ID] = agent
	return w
}

// Finish makes the move of id as the planner would: the task runs on to
// (empty: nowhere), and the move is done.
func (w *World) Finish(id api.TaskID, to string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m, ok := w.Moves[id]
	if !ok {
		return
	}
	if to == "" {
		delete(w.Placed, id)
	} else {
		w.Placed[id] = to
	}
	if t := w.Drained[m.From]; m.Owner == reconciler.OwnerDrain && !m.Drain.Before(t.Started) {
		if !m.Drain.Equal(t.Started) {
			t = reconciler.DrainTally{Started: m.Drain}
		}
		t.Moved++
		w.Drained[m.From] = t
	}
	delete(w.Moves, id)
}

// Failover is the world a new leader sees: the same placements (the
// status topic and the agents' reports say so), no move in flight and no
// drain count (both were the old term's memory).
func (w *World) Failover() *World {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := New(w.Now)
	n.Agents, n.Tasks, n.Placed = maps.Clone(w.Agents), maps.Clone(w.Tasks), maps.Clone(w.Placed)
	return n
}

// Snapshot implements the controllers' Mover.
func (w *World) Snapshot() reconciler.Snapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := reconciler.Snapshot{At: w.Now, Current: map[api.TaskID]string{}, Placed: maps.Clone(w.Placed), Reported: map[string][]api.TaskID{},
		Moves: maps.Clone(w.Moves), Drained: maps.Clone(w.Drained)}
	for _, a := range w.Agents {
		s.Agents = append(s.Agents, a)
	}
	sort.Slice(s.Agents, func(i, j int) bool { return s.Agents[i].ID < s.Agents[j].ID })
	for id, a := range w.Placed {
		s.Current[id] = a
		s.Tasks = append(s.Tasks, w.Tasks[id])
		s.Reported[a] = append(s.Reported[a], id)
	}
	sort.Slice(s.Tasks, func(i, j int) bool { return reconciler.TaskLess(s.Tasks[i].ID, s.Tasks[j].ID) })
	return s
}

// Move implements the controllers' Mover, refusing as the reconciler does.
func (w *World) Move(task api.TaskID, from, to, owner string) error {
	return w.move(task, reconciler.MoveInfo{From: from, To: to, Owner: owner})
}

// DrainMove implements the drain controller's Mover.
func (w *World) DrainMove(task api.TaskID, from string, drain time.Time) error {
	return w.move(task, reconciler.MoveInfo{From: from, Owner: reconciler.OwnerDrain, Drain: drain})
}

// move starts m, a move of task, refusing as the reconciler does.
func (w *World) move(task api.TaskID, m reconciler.MoveInfo) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.Refuse[task]; err != nil {
		return err
	}
	if _, moving := w.Moves[task]; moving {
		return reconciler.ErrMoving
	}
	if w.Placed[task] != m.From {
		return reconciler.ErrNotOnAgent
	}
	m.Since = w.Now
	w.Moves[task] = m
	w.Started = append(w.Started, Started{Task: task, From: m.From, To: m.To, Owner: m.Owner})
	return nil
}

// StartedMoves are the moves started so far.
func (w *World) StartedMoves() []Started {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Started(nil), w.Started...)
}
