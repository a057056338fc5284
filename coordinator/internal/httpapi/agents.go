package httpapi

// Sluice's fleet routes for agents (docs/operations.md): the leader's view
// of the agents, cordons, drains and rebalances. Only the leader knows the
// agents, so even their reads are forwarded to it (leaderRead).

import (
	"context"
	"net/http"
	"strconv"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
)

type agentRequest struct {
	id     string
	force  bool
	origin string
}

type rebalanceRequest struct {
	maxMoves int
	dryRun   bool
}

func decodeAgent(_ context.Context, r *http.Request) (any, error) {
	if err := onlyParams(r.URL.Query(), r.Method+" "+r.URL.Path); err != nil {
		return nil, err
	}
	return agentRequest{id: r.PathValue("id")}, nil
}

func decodeDrain(_ context.Context, r *http.Request) (any, error) {
	q := r.URL.Query()
	if err := onlyParams(q, "PUT /sluice/agents/{id}/drain", "force", "origin"); err != nil {
		return nil, err
	}
	force, err := strictBool(q, "force")
	if err != nil {
		return nil, err
	}
	// Only a caller's own origins: a rolling restart's drains are the
	// leader's to make.
	origin := api.CordonOperator
	switch o := q.Get("origin"); {
	case !q.Has("origin") || o == api.CordonOperator:
	case o == api.CordonPreStop:
		origin = o
	default:
		return nil, api.Errorf(api.CodeBadRequest, "Invalid origin '%s': must be %s or %s", o, api.CordonOperator, api.CordonPreStop)
	}
	return agentRequest{id: r.PathValue("id"), force: force, origin: origin}, nil
}

func decodeRebalance(_ context.Context, r *http.Request) (any, error) {
	q := r.URL.Query()
	if err := onlyParams(q, "POST /sluice/rebalance", "max_moves", "dry_run"); err != nil {
		return nil, err
	}
	var req rebalanceRequest
	if q.Has("max_moves") {
		n, err := strconv.Atoi(q.Get("max_moves"))
		if err != nil || n < 1 || n > 1000 {
			return nil, api.Errorf(api.CodeBadRequest, "Invalid max_moves '%s': must be an integer from 1 to 1000 (how many tasks move at a time)", q.Get("max_moves"))
		}
		req.maxMoves = n
	}
	var err error
	req.dryRun, err = strictBool(q, "dry_run")
	return req, err
}

// makeListAgents lists the agents; a caller whose grants cover only some
// connectors sees only their tasks.
func makeListAgents(svc Agents) endpoint.Endpoint {
	return func(ctx context.Context, _ any) (any, error) {
		list, err := svc.ListAgents(ctx)
		check := grantCheck(ctx, viewer)
		for i := range list.Agents {
			list.Agents[i].Tasks = visibleTasks(list.Agents[i].Tasks, check)
		}
		return list, err
	}
}

func makeGetAgent(svc Agents) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		a, err := svc.GetAgent(ctx, request.(agentRequest).id)
		a.Tasks = visibleTasks(a.Tasks, grantCheck(ctx, viewer))
		return a, err
	}
}

// visibleTasks are the tasks of tasks whose connector check allows.
func visibleTasks(tasks []api.AgentTask, check func(string) error) []api.AgentTask {
	out := []api.AgentTask{}
	for _, t := range tasks {
		if check(t.Connector) == nil {
			out = append(out, t)
		}
	}
	return out
}

// makeAgentAction is an endpoint calling one of the Agents calls on an
// agent by id.
func makeAgentAction[T any](call func(Agents, context.Context, string) (T, error)) func(Agents) endpoint.Endpoint {
	return func(svc Agents) endpoint.Endpoint {
		return func(ctx context.Context, request any) (any, error) {
			return call(svc, ctx, request.(agentRequest).id)
		}
	}
}

func makeDrainAgent(svc Agents) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(agentRequest)
		return svc.DrainAgent(ctx, req.id, req.force, req.origin)
	}
}

func makeRebalance(svc Fleet) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(rebalanceRequest)
		return svc.Rebalance(ctx, req.maxMoves, req.dryRun)
	}
}

func makeRebalanceStatus(svc Fleet) endpoint.Endpoint {
	return func(ctx context.Context, _ any) (any, error) { return svc.RebalanceStatus(ctx) }
}

// encodeAccepted answers 202 with the body: an operation that goes on
// after the answer (a drain, a rebalance), except a dry run's plan (200).
func encodeAccepted(_ context.Context, w http.ResponseWriter, response any) error {
	status := http.StatusAccepted
	if r, ok := response.(api.Rebalance); ok && r.DryRun {
		status = http.StatusOK
	}
	return writeJSON(w, status, response)
}
