package herder

import (
	"context"
	"fmt"
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/auth"
	"github.com/sluice-io/sluice/coordinator/internal/connectors"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/agentroll"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/fleetrest"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/maintenance"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/rollout"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// startFleetControllers makes the one write path over the config, status
// and fleet stores and the maintenance, rollout and agent roll controllers
// on it;
// Start calls it once the stores are read.
func (h *Herder) startFleetControllers() {
	h.all = store.NewStores(h.configs, h.statuses, h.fleet)
	h.all.SetFaults(h.faults)
	h.maint = maintenance.New(maintenance.Config{Configs: h.configs.State, Windows: h.fleet.State, Store: h.all, Locks: h.locks,
		Clock: time.Now, NewID: operationID, Changed: h.trigger, WriteFailed: connectors.WriteFailed})
	h.rollouts = rollout.New(rollout.Config{Configs: h.configs.State, Statuses: h.statuses.State, Rollouts: h.fleet.State,
		Store: pinningStore{h}, Locks: h.locks, Clock: time.Now, NewID: operationID, Generation: h.currentGeneration,
		Validate: h.admit.Validate,
		CheckSize: func(ctx context.Context, name string, config map[string]string) error {
			return h.admit.CheckConfigSize(ctx, store.PutConnectorConfig{Name: name, Config: config})
		},
		WriteFailed: connectors.WriteFailed, Logger: h.log})
	h.agentRolls = agentroll.New(agentroll.Config{Agents: h.agents, Fleet: h.fleet.State, Store: h.all, Snapshot: h.rec.Snapshot,
		Clock: time.Now, NewID: operationID, Changed: h.trigger, WriteFailed: connectors.WriteFailed, Logger: h.log})
	h.fleetAPI.Configure(fleetrest.Config{Fleet: h.fleet.State, Agents: h.agents, Snapshot: h.rec.Snapshot, Apply: h.all.Apply,
		Leading: func() bool { return h.term.Load() != 0 }, CatchUp: h.fleet.ReadToEnd, Select: h.conns.Select,
		Exists:      func(name string) bool { _, ok := h.configs.State.Get(name); return ok },
		Maintenance: h.maint, Rollouts: h.rollouts, Rebalances: h.rebalances, AgentRolls: h.agentRolls, AgentLease: h.cfg.AgentLease,
		Clock: time.Now, Principal: principalOf, Changed: h.trigger, WriteFailed: connectors.WriteFailed, Logger: h.log})
}

// Fleet is the fleet's REST face (fleetrest): agents, maintenance
// windows, rollouts and the rebalance; it works once Start has run.
func (h *Herder) Fleet() *fleetrest.Service { return h.fleetAPI }

// operationID names a maintenance window, a rollout or a rebalance: its
// creation time first, so ids sort as they were made, then a random part.
func operationID(now time.Time) string {
	return fmt.Sprintf("%s-%s", now.UTC().Format("20060102-150405.000"), randomID())
}

// principalOf names the caller of ctx, as the audit trail does.
func principalOf(ctx context.Context) string {
	if p, ok := auth.PrincipalFrom(ctx); ok && p != "" {
		return p
	}
	return "anonymous"
}

// startRollouts runs the rollout controller while ctx lasts (the leader
// only) and returns what waits for it to stop.
func (h *Herder) startRollouts(ctx context.Context) (wait func()) {
	done := make(chan struct{})
	go func() { defer close(done); h.rollouts.Run(ctx) }()
	return func() { <-done }
}

// startAgentRolls runs the agent roll controller while ctx lasts (the
// leader only) and returns what waits for it to stop.
func (h *Herder) startAgentRolls(ctx context.Context) (wait func()) {
	done := make(chan struct{})
	go func() { defer close(done); h.agentRolls.Run(ctx) }()
	return func() { <-done }
}

// currentGeneration is the highest task generation issued so far.
func (h *Herder) currentGeneration() int64 {
	return max(h.agents.Generation(), h.statuses.State.MaxGeneration())
}
