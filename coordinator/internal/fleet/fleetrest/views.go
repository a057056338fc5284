package fleetrest

import (
	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// The fleet topic's records are the store's own types; these convert them
// to and from the REST API's at the edge, so that a REST field never
// changes a stored record.

func selectorRecord(s api.Selector) store.Selector {
	return store.Selector{Names: s.Names, Match: s.Match}
}

func windowView(w store.Window) api.MaintenanceWindow {
	out := api.MaintenanceWindow{ID: w.ID, Selector: api.Selector{Names: w.Selector.Names, Match: w.Selector.Match}, State: w.State,
		Reason: w.Reason, Principal: w.Principal, OpenedAt: w.OpenedAt, Connectors: make([]api.MaintenanceConnector, len(w.Connectors))}
	for i, c := range w.Connectors {
		out.Connectors[i] = api.MaintenanceConnector{Name: c.Name, Previous: c.Previous, Outcome: c.Outcome, State: c.State}
	}
	return out
}

func specRecord(req api.RolloutRequest) store.RolloutSpec {
	return store.RolloutSpec{Selector: selectorRecord(req.Selector), Patch: req.Patch, Batches: req.Batches,
		Health: store.RolloutHealth{RunningFor: req.Health.RunningFor, MaxFailedTasks: req.Health.MaxFailedTasks}, OnFailure: req.OnFailure}
}

func rolloutView(r store.Rollout) api.Rollout {
	s := r.Spec
	out := api.Rollout{ID: r.ID, State: r.State, Principal: r.Principal, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Batch: r.Batch, Error: r.Error,
		Request: api.RolloutRequest{Selector: api.Selector{Names: s.Names, Match: s.Match}, Patch: s.Patch, Batches: s.Batches,
			Health: api.RolloutHealth{RunningFor: s.Health.RunningFor, MaxFailedTasks: s.Health.MaxFailedTasks}, OnFailure: s.OnFailure}}
	for _, b := range r.Batches {
		vb := api.RolloutBatch{State: b.State, HealthySince: b.HealthySince, VerifyingSince: b.VerifyingSince, StartGeneration: b.StartGeneration,
			Connectors: make([]api.RolloutConnector, len(b.Connectors))}
		for i, c := range b.Connectors {
			vb.Connectors[i] = api.RolloutConnector{Name: c.Name, Before: c.Before, After: c.After, WasRunning: c.WasRunning, State: c.State}
		}
		out.Batches = append(out.Batches, vb)
	}
	return out
}

func rebalanceView(r store.Rebalance) api.Rebalance {
	out := api.Rebalance{ID: r.ID, DryRun: r.DryRun, State: r.State, MaxMoves: r.MaxMoves, Before: r.Before, After: r.After,
		Moves: make([]api.TaskMove, len(r.Moves))}
	for i, m := range r.Moves {
		out.Moves[i] = api.TaskMove{Connector: m.Connector, Task: m.Task, From: m.From, To: m.To, State: m.State}
	}
	return out
}
