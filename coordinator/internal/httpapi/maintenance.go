package httpapi

// Bulk lifecycle (POST /sluice/connectors/{pause|resume|stop|restart}) and
// maintenance windows (/sluice/maintenance). Their selectors name many
// connectors, so the routes are not connector-scoped: the caller's role is
// checked before the body is read (requireRole), and its grants are
// checked here, per connector, against what the selector resolved to. A
// bulk action answers a refused connector as its own 403 result; a window
// is refused whole (403 naming the connector), as it is one thing to open
// or close.

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/go-kit/kit/endpoint"
	kithttp "github.com/go-kit/kit/transport/http"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/auth"
)

// bulkRequest is a decoded POST /sluice/connectors/{action}.
type bulkRequest struct {
	action       string
	sel          api.Selector
	includeTasks bool
	onlyFailed   bool
}

// windowRequest names a maintenance window by its id.
type windowRequest struct{ id string }

// decodeBulk decodes the body of a bulk action; restart also takes the
// query parameters of POST /connectors/{name}/restart, strictly.
func decodeBulk(action string) kithttp.DecodeRequestFunc {
	return func(_ context.Context, r *http.Request) (any, error) {
		route := "POST /sluice/connectors/" + action
		q := r.URL.Query()
		req := bulkRequest{action: action}
		var err error
		if action == "restart" {
			if err = onlyParams(q, route, "includeTasks", "onlyFailed"); err != nil {
				return nil, err
			}
			if req.includeTasks, err = strictBool(q, "includeTasks"); err != nil {
				return nil, err
			}
			if req.onlyFailed, err = strictBool(q, "onlyFailed"); err != nil {
				return nil, err
			}
		} else if err = onlyParams(q, route); err != nil {
			return nil, err
		}
		body, err := readJSON(r)
		if err != nil {
			return nil, err
		}
		if err := selectorFields(&req.sel, nil).bind("", body); err != nil {
			return nil, err
		}
		return req, nil
	}
}

// selectorFields are the members of a selector, and more.
func selectorFields(sel *api.Selector, more fieldSet) fieldSet {
	fs := fieldSet{"names": stringList("names", &sel.Names), "match": stringField("match", &sel.Match)}
	for k, v := range more {
		fs[k] = v
	}
	return fs
}

func decodeOpenMaintenance(_ context.Context, r *http.Request) (any, error) {
	if err := onlyParams(r.URL.Query(), "POST /sluice/maintenance"); err != nil {
		return nil, err
	}
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	var req api.MaintenanceRequest
	err = selectorFields(&req.Selector, fieldSet{
		"state":  stringField("state", &req.State),
		"reason": stringField("reason", &req.Reason),
	}).bind("", body)
	if err != nil {
		return nil, err
	}
	if req.State == "" {
		return nil, badRequest("Give \"state\": STOPPED or PAUSED, the state the window holds its connectors in")
	}
	return req, nil
}

func decodeListMaintenance(_ context.Context, r *http.Request) (any, error) {
	return nil, onlyParams(r.URL.Query(), "GET /sluice/maintenance")
}

func decodeWindow(_ context.Context, r *http.Request) (any, error) {
	if err := onlyParams(r.URL.Query(), r.Method+" /sluice/maintenance/{id}"); err != nil {
		return nil, err
	}
	return windowRequest{id: r.PathValue("id")}, nil
}

// grantCheck is the per-connector check of the caller's grants for role on
// the request of ctx, as the calls over many connectors take it (see
// Services): its refusal names the request's method and path.
func grantCheck(ctx context.Context, role auth.Role) func(string) error {
	method, path := requestLine(ctx)
	return grantCheckOn(ctx, role, method, path)
}

// grantCheckOn is grantCheck with a refusal naming method and path.
func grantCheckOn(ctx context.Context, role auth.Role, method, path string) func(string) error {
	return func(connector string) error { return auth.CheckConnector(ctx, role, method, path, connector) }
}

// requestLine is the method and path of the request of ctx, as the 403
// messages name them.
func requestLine(ctx context.Context) (method, path string) {
	method, _ = ctx.Value(kithttp.ContextKeyRequestMethod).(string)
	path, _ = ctx.Value(kithttp.ContextKeyRequestPath).(string)
	return method, path
}

func makeBulkAction(svc Fleet) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(bulkRequest)
		res, err := svc.BulkAction(ctx, req.action, req.sel, req.includeTasks, req.onlyFailed, grantCheck(ctx, operator))
		if p := auth.Caller(ctx); p != nil && err == nil {
			res = hideUnlisted(p, req.sel, res)
		}
		return res, err
	}
}

// hideUnlisted leaves out of a bulk answer the refused connectors the
// caller may not list (it holds no viewer for them), counting them in
// Hidden: a team operator's {"match": "*"} must not learn the names of
// other teams' connectors from its 403s. A connector the caller named
// itself stays, with its 403.
func hideUnlisted(p *auth.Principal, sel api.Selector, res api.BulkResults) api.BulkResults {
	kept := res.Results[:0]
	for _, r := range res.Results {
		if r.Status == http.StatusForbidden && !p.Allows(auth.RoleViewer, r.Connector) && !slices.Contains(sel.Names, r.Connector) {
			res.Hidden++
			continue
		}
		kept = append(kept, r)
	}
	res.Results = kept
	return res
}

func makeOpenMaintenance(svc Fleet) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(api.MaintenanceRequest)
		return svc.OpenMaintenance(ctx, req, unnamedRefusals(ctx, req.Selector, grantCheck(ctx, operator)))
	}
}

// unnamedRefusals is check, but a refusal of a connector the caller may not
// list, and did not name itself, does not name it: a window over a match
// selector is refused whole without telling a team operator the names of
// other teams' connectors.
func unnamedRefusals(ctx context.Context, sel api.Selector, check func(string) error) func(string) error {
	p := auth.Caller(ctx)
	if p == nil {
		return check
	}
	return func(connector string) error {
		err := check(connector)
		if err == nil || p.Allows(auth.RoleViewer, connector) || slices.Contains(sel.Names, connector) {
			return err
		}
		method, path := requestLine(ctx)
		return &auth.DeniedError{Message: fmt.Sprintf("%s may not %s %s: the selector matches connectors %s may not list",
			p.Kind(), method, path, p.Name)}
	}
}

// makeListMaintenance lists the open windows whose every connector the
// caller may see.
func makeListMaintenance(svc Fleet) endpoint.Endpoint {
	return func(ctx context.Context, _ any) (any, error) {
		list, err := svc.MaintenanceWindows(ctx)
		if err != nil {
			return nil, err
		}
		check := grantCheck(ctx, viewer)
		out := api.MaintenanceList{Windows: []api.MaintenanceWindow{}}
		for _, w := range list.Windows {
			if windowAllowed(w, check) == nil {
				out.Windows = append(out.Windows, w)
			}
		}
		return out, nil
	}
}

func makeGetMaintenance(svc Fleet) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		w, err := svc.MaintenanceWindow(ctx, request.(windowRequest).id)
		if err != nil {
			return nil, err
		}
		if err := windowAllowed(w, grantCheck(ctx, viewer)); err != nil {
			return nil, forbidden(err.Error())
		}
		return w, nil
	}
}

func makeCloseMaintenance(svc Fleet) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		return svc.CloseMaintenance(ctx, request.(windowRequest).id, grantCheck(ctx, operator))
	}
}

// windowAllowed is the first refusal of check among w's connectors.
func windowAllowed(w api.MaintenanceWindow, check func(string) error) error {
	for _, c := range w.Connectors {
		if err := check(c.Name); err != nil {
			return err
		}
	}
	return nil
}

// encodeWindowCreated answers 201 with the window opened.
func encodeWindowCreated(_ context.Context, w http.ResponseWriter, response any) error {
	return writeJSON(w, http.StatusCreated, response)
}
