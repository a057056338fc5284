package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
)

// Fleet is Sluice's fleet operations (docs/operations.md): the agents,
// their cordons and drains, rebalances, actions on many connectors at
// once, maintenance windows and config rollouts. Sluice only. Get one
// from Client.Fleet.
type Fleet struct{ c *Client }

// Agents is GET /sluice/agents.
func (g *Fleet) Agents(ctx context.Context) (AgentList, error) {
	var out AgentList
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: "/sluice/agents", safe: true}, &out)
	return out, err
}

// Agent is GET /sluice/agents/{id}.
func (g *Fleet) Agent(ctx context.Context, id string) (AgentInfo, error) {
	var out AgentInfo
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/sluice/agents/%s", id), safe: true}, &out)
	return out, err
}

// Cordon is PUT /sluice/agents/{id}/cordon: the agent takes no new task
// and keeps those it runs.
func (g *Fleet) Cordon(ctx context.Context, id string) (AgentInfo, error) {
	return g.agentPut(ctx, id, "cordon")
}

// Uncordon is PUT /sluice/agents/{id}/uncordon: the agent takes tasks
// again (a drain ends).
func (g *Fleet) Uncordon(ctx context.Context, id string) (AgentInfo, error) {
	return g.agentPut(ctx, id, "uncordon")
}

func (g *Fleet) agentPut(ctx context.Context, id, verb string) (AgentInfo, error) {
	var out AgentInfo
	_, err := g.c.do(ctx, call{method: http.MethodPut, path: pathf("/sluice/agents/%s/", id) + verb, safe: true}, &out)
	return out, err
}

// Drain is PUT /sluice/agents/{id}/drain: the agent is cordoned and its
// tasks move to other agents, a few at a time; force unassigns the tasks
// no other agent may run. It returns the drain's progress as it starts
// (follow it with DrainStatus).
func (g *Fleet) Drain(ctx context.Context, id string, force bool) (DrainStatus, error) {
	return g.DrainWith(ctx, id, DrainOptions{Force: force})
}

// DrainOptions are the query parameters of a drain.
type DrainOptions struct {
	// Force unassigns the tasks no other agent may run.
	Force bool
	// Origin is who drains: CordonOperator (empty: the server's default,
	// the same) or CordonPreStop, the agent's own pre-stop hook, whose
	// drain the leader lifts once the agent registers again as a new
	// process.
	Origin string
}

// DrainWith is PUT /sluice/agents/{id}/drain with opts, as Drain.
func (g *Fleet) DrainWith(ctx context.Context, id string, opts DrainOptions) (DrainStatus, error) {
	q := url.Values{}
	if opts.Force {
		q.Set("force", "true")
	}
	if opts.Origin != "" {
		q.Set("origin", opts.Origin)
	}
	var out DrainStatus
	_, err := g.c.do(ctx, call{method: http.MethodPut, path: pathf("/sluice/agents/%s/drain", id), query: q, safe: true}, &out)
	return out, err
}

// DrainStatus is GET /sluice/agents/{id}/drain.
func (g *Fleet) DrainStatus(ctx context.Context, id string) (DrainStatus, error) {
	var out DrainStatus
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/sluice/agents/%s/drain", id), safe: true}, &out)
	return out, err
}

// RebalanceOptions are the query parameters of a rebalance.
type RebalanceOptions struct {
	// MaxMoves bounds how many tasks move at a time (0: the server's
	// default).
	MaxMoves int
	// DryRun returns the plan without moving anything.
	DryRun bool
}

// Rebalance is POST /sluice/rebalance: tasks moved so that the eligible
// agents run about as many each. It returns the plan, or the rebalance as
// it starts (follow it with RebalanceStatus).
func (g *Fleet) Rebalance(ctx context.Context, opts RebalanceOptions) (Rebalance, error) {
	q := url.Values{}
	if opts.MaxMoves > 0 {
		q.Set("max_moves", strconv.Itoa(opts.MaxMoves))
	}
	if opts.DryRun {
		q.Set("dry_run", "true")
	}
	var out Rebalance
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: "/sluice/rebalance", query: q, safe: opts.DryRun}, &out)
	return out, err
}

// RebalanceStatus is GET /sluice/rebalance: the last rebalance.
func (g *Fleet) RebalanceStatus(ctx context.Context) (Rebalance, error) {
	var out Rebalance
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: "/sluice/rebalance", safe: true}, &out)
	return out, err
}

// PauseConnectors is POST /sluice/connectors/pause: every connector sel
// selects paused, each with the answer PUT …/pause would have given.
func (g *Fleet) PauseConnectors(ctx context.Context, sel Selector) (BulkResults, error) {
	return g.bulk(ctx, "pause", sel, nil, true)
}

// ResumeConnectors is POST /sluice/connectors/resume.
func (g *Fleet) ResumeConnectors(ctx context.Context, sel Selector) (BulkResults, error) {
	return g.bulk(ctx, "resume", sel, nil, true)
}

// StopConnectors is POST /sluice/connectors/stop.
func (g *Fleet) StopConnectors(ctx context.Context, sel Selector) (BulkResults, error) {
	return g.bulk(ctx, "stop", sel, nil, true)
}

// RestartConnectors is POST /sluice/connectors/restart, with a restart's
// options.
func (g *Fleet) RestartConnectors(ctx context.Context, sel Selector, opts RestartOptions) (BulkResults, error) {
	return g.bulk(ctx, "restart", sel, opts.query(), false)
}

func (g *Fleet) bulk(ctx context.Context, action string, sel Selector, q url.Values, safe bool) (BulkResults, error) {
	var out BulkResults
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: "/sluice/connectors/" + action, query: q, body: BulkRequest{Selector: sel}, safe: safe}, &out)
	return out, err
}

// OpenMaintenance is POST /sluice/maintenance: the connectors req selects
// held in req.State (STOPPED or PAUSED) until the window closes.
func (g *Fleet) OpenMaintenance(ctx context.Context, req MaintenanceRequest) (MaintenanceWindow, error) {
	var out MaintenanceWindow
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: "/sluice/maintenance", body: req}, &out)
	return out, err
}

// MaintenanceWindows is GET /sluice/maintenance: the open windows.
func (g *Fleet) MaintenanceWindows(ctx context.Context) (MaintenanceList, error) {
	var out MaintenanceList
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: "/sluice/maintenance", safe: true}, &out)
	return out, err
}

// MaintenanceWindow is GET /sluice/maintenance/{id}.
func (g *Fleet) MaintenanceWindow(ctx context.Context, id string) (MaintenanceWindow, error) {
	var out MaintenanceWindow
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/sluice/maintenance/%s", id), safe: true}, &out)
	return out, err
}

// CloseMaintenance is DELETE /sluice/maintenance/{id}: each connector of
// the window back in the state it had, unless changed by hand meanwhile.
func (g *Fleet) CloseMaintenance(ctx context.Context, id string) (MaintenanceWindow, error) {
	var out MaintenanceWindow
	_, err := g.c.do(ctx, call{method: http.MethodDelete, path: pathf("/sluice/maintenance/%s", id)}, &out)
	return out, err
}

// CreateRollout is POST /sluice/rollouts: req.Patch applied to the
// connectors req selects, batch by batch, each held to the health gate.
// Fields left zero are left out, for the server's defaults (one batch of
// all, its default running_for, pause on failure).
func (g *Fleet) CreateRollout(ctx context.Context, req RolloutRequest) (Rollout, error) {
	var out Rollout
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: "/sluice/rollouts", body: newRolloutBody(req)}, &out)
	return out, err
}

// PlanRollout is POST /sluice/rollouts?dry_run=true: the rollout
// CreateRollout would start — its batches, each connector's config before
// and after the patch, every one validated — with the same refusals, and
// nothing recorded. Its State is RolloutPlanned and it has no ID.
func (g *Fleet) PlanRollout(ctx context.Context, req RolloutRequest) (Rollout, error) {
	var out Rollout
	// A dry run changes nothing: it may be sent again.
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: "/sluice/rollouts", query: url.Values{"dry_run": {"true"}}, body: newRolloutBody(req), safe: true}, &out)
	return out, err
}

// rolloutBody is POST /sluice/rollouts's body as the client sends it:
// RolloutRequest without the members a request leaves out.
type rolloutBody struct {
	Selector
	Patch     map[string]*string `json:"patch"`
	Batches   []json.RawMessage  `json:"batches,omitempty"`
	Health    *RolloutHealth     `json:"health,omitempty"`
	OnFailure string             `json:"on_failure,omitempty"`
}

// newRolloutBody is req as sent: fields left zero are left out, for the
// server's defaults.
func newRolloutBody(req RolloutRequest) rolloutBody {
	body := rolloutBody{Selector: req.Selector, Patch: req.Patch, Batches: req.Batches, OnFailure: req.OnFailure}
	if req.Health != (RolloutHealth{}) {
		body.Health = &req.Health
	}
	return body
}

// Rollouts is GET /sluice/rollouts.
func (g *Fleet) Rollouts(ctx context.Context) (RolloutList, error) {
	var out RolloutList
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: "/sluice/rollouts", safe: true}, &out)
	return out, err
}

// Rollout is GET /sluice/rollouts/{id}.
func (g *Fleet) Rollout(ctx context.Context, id string) (Rollout, error) {
	var out Rollout
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/sluice/rollouts/%s", id), safe: true}, &out)
	return out, err
}

// PauseRollout is PUT /sluice/rollouts/{id}/pause: no next batch starts.
func (g *Fleet) PauseRollout(ctx context.Context, id string) (Rollout, error) {
	return g.rolloutPut(ctx, id, "pause")
}

// ResumeRollout is PUT /sluice/rollouts/{id}/resume.
func (g *Fleet) ResumeRollout(ctx context.Context, id string) (Rollout, error) {
	return g.rolloutPut(ctx, id, "resume")
}

// AbortRollout is PUT /sluice/rollouts/{id}/abort: it ends, leaving the
// connectors as they are.
func (g *Fleet) AbortRollout(ctx context.Context, id string) (Rollout, error) {
	return g.rolloutPut(ctx, id, "abort")
}

// rolloutPut sends a rollout's state change. Not retried once sent: a
// second attempt after an applied first answers 409 (already paused).
func (g *Fleet) rolloutPut(ctx context.Context, id, verb string) (Rollout, error) {
	var out Rollout
	_, err := g.c.do(ctx, call{method: http.MethodPut, path: pathf("/sluice/rollouts/%s/", id) + verb}, &out)
	return out, err
}

// Connectors is GET /sluice/fleet/connectors: the connectors the caller
// may view, each with its derived health, as q filters, sorts and pages
// them, and the counts of the whole fleet by health, state and type.
func (g *Fleet) Connectors(ctx context.Context, q FleetQuery) (FleetConnectors, error) {
	var out FleetConnectors
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: "/sluice/fleet/connectors", query: q.values(), safe: true}, &out)
	return out, err
}

// Migrate is POST /sluice/migrations: the coordinator reads the Kafka
// Connect cluster of req.URL (one its --migrate-allow-url allows) and
// moves the connectors req selects into Sluice with their positions;
// dryRun (or req.DryRun) answers the plan and changes nothing. Only a dry run is sent
// again after an unknown outcome: a migration stops connectors on Kafka
// Connect and creates them in Sluice.
func (g *Fleet) Migrate(ctx context.Context, req MigrationRequest, dryRun bool) (MigrationResult, error) {
	dryRun = dryRun || req.DryRun
	q := url.Values{}
	if dryRun {
		q.Set("dry_run", "true")
	}
	var out MigrationResult
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: "/sluice/migrations", query: q, body: req, safe: dryRun}, &out)
	return out, err
}
