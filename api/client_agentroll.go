package api

import (
	"context"
	"net/http"
)

// StartAgentRoll is POST /sluice/fleet/rolls: a rolling restart of agents
// that the coordinator drives — each drained, waited for until it comes
// back restarted, and uncordoned. Something else restarts each agent; the
// coordinator runs no command. Follow it with AgentRoll.
func (g *Fleet) StartAgentRoll(ctx context.Context, req AgentRollRequest) (AgentRoll, error) {
	var out AgentRoll
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: "/sluice/fleet/rolls", body: req}, &out)
	return out, err
}

// AgentRolls is GET /sluice/fleet/rolls.
func (g *Fleet) AgentRolls(ctx context.Context) (AgentRollList, error) {
	var out AgentRollList
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: "/sluice/fleet/rolls", safe: true}, &out)
	return out, err
}

// AgentRoll is GET /sluice/fleet/rolls/{id}: the roll with its progress.
func (g *Fleet) AgentRoll(ctx context.Context, id string) (AgentRoll, error) {
	var out AgentRoll
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/sluice/fleet/rolls/%s", id), safe: true}, &out)
	return out, err
}

// PauseAgentRoll is PUT /sluice/fleet/rolls/{id}/pause: no next step.
func (g *Fleet) PauseAgentRoll(ctx context.Context, id string) (AgentRoll, error) {
	return g.agentRollPut(ctx, id, "pause")
}

// ResumeAgentRoll is PUT /sluice/fleet/rolls/{id}/resume.
func (g *Fleet) ResumeAgentRoll(ctx context.Context, id string) (AgentRoll, error) {
	return g.agentRollPut(ctx, id, "resume")
}

// AbortAgentRoll is PUT /sluice/fleet/rolls/{id}/abort: it ends, leaving
// the agents as they are.
func (g *Fleet) AbortAgentRoll(ctx context.Context, id string) (AgentRoll, error) {
	return g.agentRollPut(ctx, id, "abort")
}

// agentRollPut sends a roll's state change. Not retried once sent: a
// second attempt after an applied first answers 409 (already paused).
func (g *Fleet) agentRollPut(ctx context.Context, id, verb string) (AgentRoll, error) {
	var out AgentRoll
	_, err := g.c.do(ctx, call{method: http.MethodPut, path: pathf("/sluice/fleet/rolls/%s/", id) + verb}, &out)
	return out, err
}
