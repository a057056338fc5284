package httpapi

// Rolling restarts of agents, under /sluice/fleet/rolls
// (docs/operations.md). They drain and uncordon agents, so they take the
// agents' writes' role (admin); their reads are the fleet topic's, which
// every coordinator follows. The request body is bound as strictly as
// Kafka Connect's (decode.go): an unknown field is a 400 naming it.

import (
	"context"
	"math"
	"net/http"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
)

// agentRollIDRequest names one roll.
type agentRollIDRequest struct{ id string }

// decodeAgentRollRequest binds POST /sluice/fleet/rolls's body; an empty
// body asks for the defaults.
func decodeAgentRollRequest(_ context.Context, r *http.Request) (any, error) {
	if err := onlyParams(r.URL.Query(), "POST /sluice/fleet/rolls"); err != nil {
		return nil, err
	}
	var req api.AgentRollRequest
	if r.ContentLength == 0 {
		return req, nil
	}
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	err = fieldSet{
		"agents":  stringList("agents", &req.Agents),
		"timeout": stringField("timeout", &req.Timeout),
		"batch_size": func(v any) error {
			n, err := integer("batch_size", v, math.MinInt32, math.MaxInt32)
			req.BatchSize = int(n)
			return err
		},
	}.bind("", body)
	if err != nil {
		return nil, err
	}
	return req, nil
}

func decodeAgentRollID(_ context.Context, r *http.Request) (any, error) {
	if err := onlyParams(r.URL.Query(), r.Method+" /sluice/fleet/rolls/{id}"); err != nil {
		return nil, err
	}
	return agentRollIDRequest{id: r.PathValue("id")}, nil
}

func makeCreateAgentRoll(svc Agents) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		return svc.CreateAgentRoll(ctx, request.(api.AgentRollRequest))
	}
}

func makeListAgentRolls(svc Agents) endpoint.Endpoint {
	return func(ctx context.Context, _ any) (any, error) { return svc.AgentRolls(ctx) }
}

func makeGetAgentRoll(svc Agents) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		return svc.AgentRoll(ctx, request.(agentRollIDRequest).id)
	}
}

// makeAgentRollAction is an endpoint calling one of the Agents calls on a
// roll by id.
func makeAgentRollAction(call func(Agents, context.Context, string) (api.AgentRoll, error)) func(Agents) endpoint.Endpoint {
	return func(svc Agents) endpoint.Endpoint {
		return func(ctx context.Context, request any) (any, error) {
			return call(svc, ctx, request.(agentRollIDRequest).id)
		}
	}
}

func encodeAgentRollCreated(_ context.Context, w http.ResponseWriter, response any) error {
	r := response.(api.AgentRoll)
	w.Header().Set("Location", "/sluice/fleet/rolls/"+r.ID)
	return writeJSON(w, http.StatusCreated, r)
}
