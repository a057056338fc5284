package connectors

import (
	"context"
	"net/http"
	"path"
	"slices"

	"github.com/sluice-io/sluice/api"
)

// The bulk lifecycle actions (POST /sluice/connectors/{action}).
const (
	bulkPause   = "pause"
	bulkResume  = "resume"
	bulkStop    = "stop"
	bulkRestart = "restart"
)

// msgSelectorForm is the 400 of a selector that gives neither or both
// forms.
const msgSelectorForm = "Give exactly one of \"names\" or \"match\""

// Select resolves a selector against the connectors that exist.
// Names come back as given (once each, in their order), existing or not:
// each caller reports an unknown one as it must (a bulk action as that
// connector's 404, a window as a whole-call 404). A match comes back
// sorted, and matching nothing is a 400, as is a selector giving neither
// form or both, or a glob path.Match cannot parse.
func (s *Service) Select(sel api.Selector) ([]string, error) {
	switch {
	case (len(sel.Names) > 0) == (sel.Match != ""):
		return nil, api.Errorf(api.CodeBadRequest, msgSelectorForm)
	case len(sel.Names) > 0:
		out := make([]string, 0, len(sel.Names))
		for _, n := range sel.Names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out, nil
	}
	if _, err := path.Match(sel.Match, ""); err != nil {
		return nil, api.Errorf(api.CodeBadRequest, "Invalid \"match\" pattern %q: %v", sel.Match, err)
	}
	var out []string
	for _, n := range s.cfg.Configs.Names() {
		if ok, _ := path.Match(sel.Match, n); ok {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, api.Errorf(api.CodeBadRequest, "The selector matches no connector: no connector's name matches %q", sel.Match)
	}
	slices.Sort(out)
	return out, nil
}

// BulkAction answers POST /sluice/connectors/{action}: action (pause,
// resume, stop or restart) on every connector sel selects, one
// after the other, going on past failures. Each result is what the
// single-connector endpoint answers: its status and, for an error, its
// message. allow is the caller's grant check for one connector: a refused
// connector is answered 403 with its message and left alone (nil allows
// every connector). A restart
// restarts the connector only (204), or with includeTasks or onlyFailed
// its tasks too (202), as POST /connectors/{name}/restart does.
func (s *Service) BulkAction(ctx context.Context, action string, sel api.Selector, includeTasks, onlyFailed bool, allow func(connector string) error) (api.BulkResults, error) {
	do, ok := s.bulkActions(includeTasks, onlyFailed)[action]
	if !ok {
		return api.BulkResults{}, api.Errorf(api.CodeNotFound, "Unknown bulk action %q: give pause, resume, stop or restart", action)
	}
	names, err := s.Select(sel)
	if err != nil {
		return api.BulkResults{}, err
	}
	out := api.BulkResults{Results: make([]api.BulkResult, 0, len(names))}
	for _, n := range names {
		r := api.BulkResult{Connector: n}
		if err := CheckGrant(allow, n); err != nil {
			r.Status, r.Message = http.StatusForbidden, err.Error()
		} else if r.Status, err = do(ctx, n); err != nil {
			e := api.AsError(err)
			r.Status, r.Message = int(e.Code), e.Message
		}
		out.Results = append(out.Results, r)
	}
	return out, nil
}

// CheckGrant is allow(connector), nil when allow is nil.
func CheckGrant(allow func(string) error, connector string) error {
	if allow == nil {
		return nil
	}
	return allow(connector)
}

// CheckGrants is the 403 of the first of names allow refuses (nil allows
// all): an operation over several connectors is refused whole.
func CheckGrants(allow func(string) error, names []string) error {
	for _, n := range names {
		if err := CheckGrant(allow, n); err != nil {
			return api.Errorf(api.CodeForbidden, "%s", err.Error())
		}
	}
	return nil
}

// bulkActions are the single-connector calls behind each bulk action, each
// returning the status its endpoint answers on success.
func (s *Service) bulkActions(includeTasks, onlyFailed bool) map[string]func(context.Context, string) (int, error) {
	status := func(code int, call func(context.Context, string) error) func(context.Context, string) (int, error) {
		return func(ctx context.Context, name string) (int, error) { return code, call(ctx, name) }
	}
	return map[string]func(context.Context, string) (int, error){
		bulkPause:  status(http.StatusAccepted, s.PauseConnector),
		bulkResume: status(http.StatusAccepted, s.ResumeConnector),
		bulkStop:   status(http.StatusNoContent, s.StopConnector),
		bulkRestart: func(ctx context.Context, name string) (int, error) {
			st, err := s.RestartConnector(ctx, name, includeTasks, onlyFailed)
			if st != nil {
				return http.StatusAccepted, err
			}
			return http.StatusNoContent, err
		},
	}
}
