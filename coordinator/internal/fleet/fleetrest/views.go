package fleetrest

import (
	v1 "github.com/sluice-io/sluice/api/v1"
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
