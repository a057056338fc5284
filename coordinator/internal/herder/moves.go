package herder

import (
	"context"
	"sort"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/shared/labels"
)

// Fleet operations move tasks between agents on purpose — a drain off an
// agent, a rebalance across agents — a few at a time. A move in flight is
// handed to the planner (planner.Input.Moves), which revokes the task from
// its agent, waits for it to stop, and assigns it elsewhere with a new
// generation, as it moves any task; it is done once the task runs (or, for
// a task with nowhere to go in a forced drain, once it left).
//
//	drain / rebalance ─► startMove ─► plan: revoke on From, assign on To ─► reported running ─► done

// activeMove is one move in flight.
type activeMove struct {
	scheduler.Move
	// owner is what asked for it: "drain" or "rebalance".
	owner string
	since time.Time
}

// moveTimeout bounds a move: one whose task is not reported running
// elsewhere by then is given up, so that a stuck agent does not hold a
// drain's or a rebalance's slot for ever.
const moveTimeout = 2 * time.Minute

// fleetTick is how often the fleet loop looks at drains and rebalances,
// besides whenever the fleet topic changes.
const fleetTick = 500 * time.Millisecond

// fleetLoop drives drains and rebalances while this coordinator leads.
func (h *Herder) fleetLoop(ctx context.Context) {
	tick := time.NewTicker(fleetTick)
	defer tick.Stop()
	for {
		changed := h.fleet.State.Changed()
		h.driveDrains(ctx)
		h.driveRebalance(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-changed:
		case <-h.fleetKick:
		}
	}
}

// confirmMove ends the move of task id once the agent it went to reports
// it under the generation it was placed there with (a status report comes
// at once; a heartbeat only every lease/3), and wakes the fleet loop to
// start the next move.
func (h *Herder) confirmMove(agent string, id v1.TaskID, gen int64) {
	h.mu.Lock()
	m, moving := h.moves[id]
	p, placed := h.placed.Get(id)
	done := moving && placed && agent != m.From && p.Agent == agent && p.Generation == gen
	if done {
		if m.owner == ownerDrain {
			h.drained[m.From]++
		}
		delete(h.moves, id)
	}
	h.mu.Unlock()
	if done {
		select {
		case h.fleetKick <- struct{}{}:
		default:
		}
	}
}

// planMoves are the moves the planner must make now; the caller holds h.mu.
func (h *Herder) planMoves() map[v1.TaskID]scheduler.Move {
	if len(h.moves) == 0 {
		return nil
	}
	out := make(map[v1.TaskID]scheduler.Move, len(h.moves))
	for id, m := range h.moves {
		out[id] = m.Move
	}
	return out
}

// cordoned are the agents that take no new task: cordoned or draining.
func (h *Herder) cordoned() map[string]bool {
	out := map[string]bool{}
	for id := range h.fleet.State.Agents() {
		out[id] = true
	}
	return out
}

// retireMoves drops the moves that are done: the task left From and runs
// where it went, or runs nowhere (it was unassigned, or its connector is
// gone), counting a drain's in h.drained. It returns them; the caller
// holds h.mu.
func (h *Herder) retireMoves() []v1.TaskID {
	var done []v1.TaskID
	for id, m := range h.moves {
		p, placed := h.placed.Get(id)
		switch {
		case time.Since(m.since) > moveTimeout:
			// The new agent never reported the task: give its slot to the
			// next move; the planner goes on placing the task as usual.
			h.log.Warn("a moved task was not reported running in time; the move is given up", "task", id, "from", m.From, "owner", m.owner)
			done = append(done, id)
		case !placed:
			// Not placed anywhere: unassigned, or no longer desired.
			if !h.reportedBy(m.From, id) {
				done = append(done, id)
			}
		case p.Agent != m.From:
			if a, ok := h.agents.Get(p.Agent); ok && a.Reported[id].Generation == p.Generation {
				done = append(done, id)
			}
		}
	}
	for _, id := range done {
		if m := h.moves[id]; m.owner == ownerDrain {
			h.drained[m.From]++
		}
		delete(h.moves, id)
	}
	return done
}

// reportedBy reports whether agent still reports running task id.
func (h *Herder) reportedBy(agent string, id v1.TaskID) bool {
	a, ok := h.agents.Get(agent)
	if !ok {
		return false
	}
	_, runs := a.Reported[id]
	return runs
}

// schedulerView is the placement world as the scheduler sees it: every
// placed task with its selector and plugin, and the registered agents
// with their cordons. The caller holds h.mu.
func (h *Herder) schedulerView() ([]scheduler.Task, []scheduler.Agent, map[v1.TaskID]string) {
	cordoned := h.cordoned()
	var agents []scheduler.Agent
	for _, a := range h.agents.Agents() {
		if a.Registered {
			agents = append(agents, schedulerAgent(a, cordoned[a.ID]))
		}
	}
	current := map[v1.TaskID]string{}
	var tasks []scheduler.Task
	for id, p := range h.placed.All() {
		t, ok := h.schedulerTask(id)
		if !ok {
			continue // runs nowhere: the planner revokes it, nothing moves it
		}
		current[id] = p.Agent
		tasks = append(tasks, t)
	}
	sort.Slice(tasks, func(i, j int) bool { return taskLess(tasks[i].ID, tasks[j].ID) })
	return tasks, agents, current
}

// schedulerAgent is a registered agent as the scheduler sees it.
func schedulerAgent(a registry.Agent, cordoned bool) scheduler.Agent {
	return scheduler.Agent{ID: a.ID, Labels: a.Labels, Plugins: a.PlacementPlugins(), Cordoned: cordoned}
}

// schedulerTask is task id with its connector's selector and plugin; ok is
// false for a task of a connector whose selector does not parse, which the
// planner places nowhere (so no drain or rebalance may move it).
func (h *Herder) schedulerTask(id v1.TaskID) (scheduler.Task, bool) {
	t := scheduler.Task{ID: id}
	c, ok := h.configs.State.Get(id.Connector)
	if !ok {
		return t, true
	}
	sel, err := labels.Parse(c.Config[labels.SelectorKey])
	if err != nil {
		return t, false
	}
	t.Selector = sel
	if p, ok := h.choosePluginLocked(c.Config); ok {
		t.Plugin = p.placement()
	}
	return t, true
}

func taskLess(a, b v1.TaskID) bool {
	if a.Connector != b.Connector {
		return a.Connector < b.Connector
	}
	return a.Task < b.Task
}
