package herder

import (
	"context"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// Placement is sticky: a joining agent gets only new tasks, so after a
// rolling restart the last agents up run little. A rebalance, asked for,
// evens the tasks out: scheduler.Rebalance plans the moves, and the fleet
// loop makes them, at most max_moves at a time, each as a drain moves a
// task. The rebalance lives in the fleet topic, so a new leader finishes it.

// defaultRebalanceParallel is max_moves when a request gives none.
const defaultRebalanceParallel = 2

// The states of a rebalance's move, besides v1.TaskMove's planned, moving
// and done.
const moveSkipped = "skipped"

// Rebalance answers POST /sluice/rebalance: the moves that even out tasks
// across the live, uncordoned agents; with dryRun only the plan, else the
// rebalance starts (202) and GET /sluice/rebalance follows it.
func (h *Herder) Rebalance(ctx context.Context, maxMoves int, dryRun bool) (v1.Rebalance, error) {
	if err := h.mustLead(); err != nil {
		return v1.Rebalance{}, err
	}
	if maxMoves <= 0 {
		maxMoves = defaultRebalanceParallel
	}
	h.mu.Lock()
	tasks, agents, current := h.schedulerView()
	moves := scheduler.Rebalance(tasks, agents, current, 0)
	before := scheduler.Loads(agents, current)
	h.mu.Unlock()
	after := make(map[string]int, len(before))
	for id, n := range before {
		after[id] = n
	}
	r := v1.Rebalance{DryRun: dryRun, State: "planned", MaxMoves: maxMoves, Moves: []v1.TaskMove{}, Before: before, After: after}
	for _, m := range moves {
		r.Moves = append(r.Moves, v1.TaskMove{Connector: m.Task.Connector, Task: m.Task.Task, From: m.From, To: m.To, State: "planned"})
		after[m.From]--
		after[m.To]++
	}
	if dryRun {
		return r, nil
	}
	// One rebalance at a time: the check and the write are one step.
	h.rebalanceMu.Lock()
	defer h.rebalanceMu.Unlock()
	if cur := h.fleet.State.Rebalance(); cur != nil && cur.State == v1.DrainRunning {
		return v1.Rebalance{}, v1.Errorf(v1.CodeConflict, "Rebalance %s is still running: follow it with GET /sluice/rebalance", cur.ID)
	}
	r.ID, r.State = operationID(time.Now()), v1.DrainRunning
	if len(r.Moves) == 0 {
		r.State = v1.DrainDone
	}
	if err := h.fleet.Apply(ctx, store.PutRebalance{Rebalance: rebalanceRecord(r)}); err != nil {
		return v1.Rebalance{}, writeFailed(err, "Failed to start a rebalance")
	}
	h.log.Info("rebalance started", "id", r.ID, "moves", len(r.Moves), "max_moves", maxMoves)
	return r, nil
}

// RebalanceStatus answers GET /sluice/rebalance: the rebalance in
// progress, or the last one.
func (h *Herder) RebalanceStatus(ctx context.Context) (v1.Rebalance, error) {
	r := h.fleet.State.Rebalance()
	if r == nil {
		return v1.Rebalance{}, v1.Errorf(v1.CodeNotFound, "No rebalance was started")
	}
	return rebalanceView(*r), nil
}

// driveRebalance moves the running rebalance on: a moving task that runs
// where it was sent is done; a planned one starts while fewer than
// max_moves move; one whose task is gone, or no longer where the plan
// found it, is skipped. A change is written to the fleet topic, the
// rebalance done once no move is left. After a failover the new leader
// takes the moves up where they are.
func (h *Herder) driveRebalance(ctx context.Context) {
	r := h.fleet.State.Rebalance()
	if r == nil || r.State != v1.DrainRunning {
		return
	}
	changed, started := false, false
	h.mu.Lock()
	h.retireMoves()
	_, agents, current := h.schedulerView()
	live := map[string]bool{}
	for _, a := range agents {
		live[a.ID] = !a.Cordoned
	}
	inflight, left := 0, 0
	for i := range r.Moves {
		m := &r.Moves[i]
		id := v1.TaskID{Connector: m.Connector, Task: m.Task}
		if m.State != "moving" {
			continue
		}
		switch _, moving := h.moves[id]; {
		case current[id] == m.To && !moving:
			m.State, changed = "done", true
		case moving:
			inflight++
		case current[id] == m.From && live[m.To]:
			// A new leader, or a move the planner has not made yet.
			h.moves[id] = activeMove{Move: scheduler.Move{From: m.From, To: m.To}, owner: ownerRebalance, since: time.Now()}
			inflight, started = inflight+1, true
		default:
			m.State, changed = moveSkipped, true
		}
	}
	for i := range r.Moves {
		m := &r.Moves[i]
		if m.State != "planned" {
			continue
		}
		if inflight >= r.MaxMoves {
			left++
			continue
		}
		id := v1.TaskID{Connector: m.Connector, Task: m.Task}
		if am, moving := h.moves[id]; moving && am.owner == ownerRebalance && am.From == m.From && am.To == m.To {
			// Started on an earlier pass whose record did not reach the
			// topic: it is moving.
			m.State, changed = "moving", true
			inflight++
			continue
		}
		if _, moving := h.moves[id]; moving || current[id] != m.From || !live[m.To] {
			m.State, changed = moveSkipped, true
			continue
		}
		h.moves[id] = activeMove{Move: scheduler.Move{From: m.From, To: m.To}, owner: ownerRebalance, since: time.Now()}
		m.State, changed, started = "moving", true, true
		inflight++
	}
	h.mu.Unlock()
	if inflight == 0 && left == 0 {
		r.State, changed = v1.DrainDone, true
	}
	if started {
		h.trigger()
	}
	if changed {
		if err := h.fleet.Apply(ctx, store.PutRebalance{Rebalance: r}); err != nil {
			h.log.Warn("recording the rebalance's progress failed; retrying", "id", r.ID, "err", err)
		}
	}
}
