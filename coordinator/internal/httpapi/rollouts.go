package httpapi

// Health-gated config rollouts, under /sluice/rollouts
// (docs/operations.md, "Health-gated config rollouts"). The request body is bound as
// strictly as Kafka Connect's (decode.go): an unknown field is a 400
// naming it.

import (
	"context"
	"encoding/json"
	"math"
	"net/http"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
)

// rolloutIDRequest names one rollout.
type rolloutIDRequest struct{ id string }

// decodeRolloutRequest binds POST /sluice/rollouts's body.
// rolloutCreate is POST /sluice/rollouts as decoded: the request, and
// whether it is a dry run.
type rolloutCreate struct {
	req    api.RolloutRequest
	dryRun bool
}

func decodeRolloutRequest(_ context.Context, r *http.Request) (any, error) {
	q := r.URL.Query()
	if err := onlyParams(q, "POST /sluice/rollouts", "dry_run"); err != nil {
		return nil, err
	}
	dryRun, err := strictBool(q, "dry_run")
	if err != nil {
		return nil, err
	}
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	var req api.RolloutRequest
	err = fieldSet{
		"names": stringList("names", &req.Names),
		"match": stringField("match", &req.Match),
		"patch": func(v any) error {
			if _, ok := v.(jsonObject); !ok {
				return errWrongType("patch", "object")
			}
			m, err := patchMap(v)
			req.Patch = m
			return err
		},
		"batches": func(v any) error {
			specs, err := batchSpecs(v)
			req.Batches = specs
			return err
		},
		"health": func(v any) error {
			return fieldSet{
				"running_for": stringField("health.running_for", &req.Health.RunningFor),
				"max_failed_tasks": func(v any) error {
					n, err := integer("health.max_failed_tasks", v, math.MinInt32, math.MaxInt32)
					req.Health.MaxFailedTasks = int(n)
					return err
				},
			}.bind("health", v)
		},
		"on_failure": stringField("on_failure", &req.OnFailure),
	}.bind("", body)
	if err != nil {
		return nil, err
	}
	return rolloutCreate{req: req, dryRun: dryRun}, nil
}

// batchSpecs binds "batches": an array of numbers and strings, kept as
// their JSON for the herder, which knows what each means.
func batchSpecs(v any) ([]json.RawMessage, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, errWrongType("batches", "an array of numbers and strings")
	}
	out := make([]json.RawMessage, 0, len(arr))
	for _, el := range arr {
		switch t := el.(type) {
		case json.Number:
			out = append(out, json.RawMessage(t.String()))
		case string:
			b, _ := json.Marshal(t)
			out = append(out, b)
		default:
			return nil, errWrongType("batches", "an array of numbers and strings")
		}
	}
	return out, nil
}

func decodeRolloutID(_ context.Context, r *http.Request) (any, error) {
	if err := onlyParams(r.URL.Query(), r.Method+" /sluice/rollouts/{id}"); err != nil {
		return nil, err
	}
	return rolloutIDRequest{id: r.PathValue("id")}, nil
}

func makeCreateRollout(svc Fleet) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		c := request.(rolloutCreate)
		if c.dryRun {
			return svc.PlanRollout(ctx, c.req, grantCheck(ctx, operator))
		}
		return svc.CreateRollout(ctx, c.req, grantCheck(ctx, operator))
	}
}

// makeListRollouts lists the rollouts whose every connector the caller's
// grants cover: a rollout holds its connectors' configs.
func makeListRollouts(svc Fleet) endpoint.Endpoint {
	return func(ctx context.Context, _ any) (any, error) {
		list, err := svc.Rollouts(ctx)
		if err != nil {
			return nil, err
		}
		check := grantCheck(ctx, viewer)
		out := api.RolloutList{Rollouts: []api.Rollout{}}
		for _, r := range list.Rollouts {
			if rolloutAllowed(r, check) == nil {
				out.Rollouts = append(out.Rollouts, r)
			}
		}
		return out, nil
	}
}

// makeGetRollout answers one rollout, 403 when the caller's grants miss one
// of its connectors.
func makeGetRollout(svc Fleet) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		r, err := svc.Rollout(ctx, request.(rolloutIDRequest).id)
		if err != nil {
			return nil, err
		}
		if err := rolloutAllowed(r, grantCheck(ctx, viewer)); err != nil {
			return nil, forbidden(err.Error())
		}
		return r, nil
	}
}

// rolloutAllowed is the first refusal of check among r's connectors.
func rolloutAllowed(r api.Rollout, check func(string) error) error {
	for _, b := range r.Batches {
		for _, c := range b.Connectors {
			if err := check(c.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// makeRolloutAction is an endpoint calling one of the Fleet calls on a
// rollout by id. The caller's grants must cover every connector of the
// rollout as an operator; a refusal names the rollout's path, not the
// action's (PUT /sluice/rollouts/{id}), as it always has.
func makeRolloutAction(call func(Fleet, context.Context, string, func(string) error) (api.Rollout, error)) func(Fleet) endpoint.Endpoint {
	return func(svc Fleet) endpoint.Endpoint {
		return func(ctx context.Context, request any) (any, error) {
			id := request.(rolloutIDRequest).id
			return call(svc, ctx, id, grantCheckOn(ctx, operator, http.MethodPut, "/sluice/rollouts/"+id))
		}
	}
}

// encodeRolloutCreated answers a rollout made 201 with its Location, and a
// dry run's plan 200.
func encodeRolloutCreated(_ context.Context, w http.ResponseWriter, response any) error {
	r := response.(api.Rollout)
	if r.State == api.RolloutPlanned {
		return writeJSON(w, http.StatusOK, r)
	}
	w.Header().Set("Location", "/sluice/rollouts/"+r.ID)
	return writeJSON(w, http.StatusCreated, r)
}
