package httpapi

// The fleet listing (GET /sluice/fleet/connectors): its query, checked
// strictly — an unknown parameter, one given twice (label aside) or a
// value out of its set is a 400 naming it — and the caller's view: the
// listing, its counts included, holds only the connectors the caller's
// grants let it view.

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/auth"
)

// fleetRoute names the route in its 400s.
const fleetRoute = "GET /sluice/fleet/connectors"

// fleetParams are the query parameters of the fleet listing; label alone
// may be repeated.
var fleetParams = []string{"q", "state", "health", "type", "agent", "plugin", "label", "sort", "offset", "limit"}

// The values the enumerated parameters take (in any case).
var (
	fleetStates = []string{api.StateRunning, api.StatePaused, api.StateStopped, api.StateFailed, api.StateRestarting, api.StateUnassigned}
	fleetTypes  = []string{api.TypeSource, api.TypeSink, api.TypeUnknown}
	fleetSorts  = []string{api.SortAttention, api.SortName, api.SortChanged}
)

func decodeFleetQuery(_ context.Context, r *http.Request) (any, error) {
	q := r.URL.Query()
	if err := onlyParams(withoutParam(q, "label"), fleetRoute, fleetParams...); err != nil {
		return nil, err
	}
	out := api.FleetQuery{Q: q.Get("q"), Agent: q.Get("agent"), Plugin: q.Get("plugin"), Sort: strings.ToLower(q.Get("sort")), Limit: api.DefaultFleetLimit}
	var err error
	if out.States, err = enumList(q, "state", fleetStates, strings.ToUpper); err != nil {
		return nil, err
	}
	if out.Healths, err = enumList(q, "health", api.Healths, strings.ToLower); err != nil {
		return nil, err
	}
	if out.Types, err = enumList(q, "type", fleetTypes, strings.ToLower); err != nil {
		return nil, err
	}
	if q.Has("sort") && !slices.Contains(fleetSorts, out.Sort) {
		return nil, api.Errorf(api.CodeBadRequest, "Invalid value '%s' for query parameter 'sort': must be one of %s", q.Get("sort"), strings.Join(fleetSorts, ", "))
	}
	if out.Offset, err = intParam(q, "offset", 0, 0, 1<<31-1); err != nil {
		return nil, err
	}
	if out.Limit, err = intParam(q, "limit", api.DefaultFleetLimit, 1, api.MaxFleetLimit); err != nil {
		return nil, err
	}
	for _, l := range q["label"] {
		k, v, ok := strings.Cut(l, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, api.Errorf(api.CodeBadRequest, "Invalid value '%s' for query parameter 'label': must be key=value", l)
		}
		if out.Labels == nil {
			out.Labels = map[string]string{}
		}
		if old, dup := out.Labels[k]; dup && old != v {
			return nil, api.Errorf(api.CodeBadRequest, "Query parameter 'label' gives key '%s' twice, as '%s' and '%s': no connector has both", k, old, v)
		}
		out.Labels[k] = v
	}
	return out, nil
}

// withoutParam is q without name.
func withoutParam(q url.Values, name string) url.Values {
	out := make(url.Values, len(q))
	for k, v := range q {
		if k != name {
			out[k] = v
		}
	}
	return out
}

// enumList reads a parameter whose value is a comma-separated list of
// values of allowed, in any case (norm makes one allowed's case).
func enumList(q url.Values, name string, allowed []string, norm func(string) string) ([]string, error) {
	if !q.Has(name) {
		return nil, nil
	}
	var out []string
	for _, v := range strings.Split(q.Get(name), ",") {
		v = norm(strings.TrimSpace(v))
		if !slices.Contains(allowed, v) {
			return nil, api.Errorf(api.CodeBadRequest, "Invalid value '%s' for query parameter '%s': must be one or more of %s, comma-separated",
				q.Get(name), name, strings.Join(allowed, ", "))
		}
		out = append(out, v)
	}
	return out, nil
}

// intParam reads an integer parameter from lo to hi; def when absent.
func intParam(q url.Values, name string, def, lo, hi int) (int, error) {
	if !q.Has(name) {
		return def, nil
	}
	n, err := strconv.Atoi(q.Get(name))
	if err != nil || n < lo || n > hi {
		return 0, api.Errorf(api.CodeBadRequest, "Invalid value '%s' for query parameter '%s': must be an integer from %d to %d", q.Get(name), name, lo, hi)
	}
	return n, nil
}

// makeFleetConnectors lists the connectors the caller may view.
func makeFleetConnectors(svc Fleet) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		var visible func(string) bool
		if p := auth.Caller(ctx); p != nil {
			visible = func(name string) bool { return p.Allows(auth.RoleViewer, name) }
		}
		return svc.FleetConnectors(ctx, request.(api.FleetQuery), visible)
	}
}
