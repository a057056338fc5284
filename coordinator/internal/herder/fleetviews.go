package herder

import (
	"context"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/maintenance"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/rollout"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// The fleet topic's records are the store's own types; these convert them
// to and from the REST API's at the edge, so that a REST field never
// changes a stored record.

func selectorRecord(s v1.Selector) store.Selector {
	return store.Selector{Names: s.Names, Match: s.Match}
}

func windowView(w store.Window) v1.MaintenanceWindow {
	out := v1.MaintenanceWindow{ID: w.ID, Selector: v1.Selector{Names: w.Selector.Names, Match: w.Selector.Match}, State: w.State,
		Reason: w.Reason, Principal: w.Principal, OpenedAt: w.OpenedAt, Connectors: make([]v1.MaintenanceConnector, len(w.Connectors))}
	for i, c := range w.Connectors {
		out.Connectors[i] = v1.MaintenanceConnector{Name: c.Name, Previous: c.Previous, Outcome: c.Outcome, State: c.State}
	}
	return out
}

func specRecord(req v1.RolloutRequest) store.RolloutSpec {
	return store.RolloutSpec{Selector: selectorRecord(req.Selector), Patch: req.Patch, Batches: req.Batches,
		Health: store.RolloutHealth{RunningFor: req.Health.RunningFor, MaxFailedTasks: req.Health.MaxFailedTasks}, OnFailure: req.OnFailure}
}

func rolloutView(r store.Rollout) v1.Rollout {
	s := r.Spec
	out := v1.Rollout{ID: r.ID, State: r.State, Principal: r.Principal, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Batch: r.Batch, Error: r.Error,
		Request: v1.RolloutRequest{Selector: v1.Selector{Names: s.Names, Match: s.Match}, Patch: s.Patch, Batches: s.Batches,
			Health: v1.RolloutHealth{RunningFor: s.Health.RunningFor, MaxFailedTasks: s.Health.MaxFailedTasks}, OnFailure: s.OnFailure}}
	for _, b := range r.Batches {
		vb := v1.RolloutBatch{State: b.State, HealthySince: b.HealthySince, VerifyingSince: b.VerifyingSince, StartGeneration: b.StartGeneration,
			Connectors: make([]v1.RolloutConnector, len(b.Connectors))}
		for i, c := range b.Connectors {
			vb.Connectors[i] = v1.RolloutConnector{Name: c.Name, Before: c.Before, After: c.After, WasRunning: c.WasRunning, State: c.State}
		}
		out.Batches = append(out.Batches, vb)
	}
	return out
}

func rebalanceView(r store.Rebalance) v1.Rebalance {
	out := v1.Rebalance{ID: r.ID, DryRun: r.DryRun, State: r.State, MaxMoves: r.MaxMoves, Before: r.Before, After: r.After,
		Moves: make([]v1.TaskMove, len(r.Moves))}
	for i, m := range r.Moves {
		out.Moves[i] = v1.TaskMove{Connector: m.Connector, Task: m.Task, From: m.From, To: m.To, State: m.State}
	}
	return out
}

// startFleetControllers makes the one write path over the config, status
// and fleet stores and the maintenance and rollout controllers on it;
// Start calls it once the stores are read.
func (h *Herder) startFleetControllers() {
	h.all = store.NewStores(h.configs, h.statuses, h.fleet)
	h.all.SetFaults(h.faults)
	h.maint = maintenance.New(maintenance.Config{Configs: h.configs.State, Windows: h.fleet.State, Store: h.all, Locks: h.locks,
		Clock: time.Now, NewID: operationID, Changed: h.trigger, WriteFailed: writeFailed})
	h.rollouts = rollout.New(rollout.Config{Configs: h.configs.State, Statuses: h.statuses.State, Rollouts: h.fleet.State,
		Store: h.all, Locks: h.locks, Clock: time.Now, NewID: operationID, Generation: h.currentGeneration,
		Validate: h.admit.Validate,
		CheckSize: func(ctx context.Context, name string, config map[string]string) error {
			return h.admit.CheckConfigSize(ctx, store.PutConnectorConfig{Name: name, Config: config})
		},
		WriteFailed: writeFailed, Logger: h.log})
}

// startRollouts runs the rollout controller while ctx lasts (the leader
// only) and returns what waits for it to stop.
func (h *Herder) startRollouts(ctx context.Context) (wait func()) {
	done := make(chan struct{})
	go func() { defer close(done); h.rollouts.Run(ctx) }()
	return func() { <-done }
}

// currentGeneration is the highest task generation issued so far.
func (h *Herder) currentGeneration() int64 {
	return max(h.agents.Generation(), h.statuses.State.MaxGeneration())
}
