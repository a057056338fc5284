package fleetrest

import (
	"context"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/maintenance"
	"github.com/sluice-io/sluice/coordinator/internal/grants"
)

// Maintenance windows (POST/GET/DELETE /sluice/maintenance, see
// docs/operations.md) are the leader's maintenance controller's
// (fleet/maintenance): the service checks the request and the caller's
// grants, and shows the windows as the REST API has them.

// OpenMaintenance answers POST /sluice/maintenance. Every connector the
// selector names must exist (404 otherwise), the caller's grants must
// cover each (allow; 403 naming the first that is not), and none may be
// in another open window (409 naming it and the window). Nothing changes
// when any of those fail; otherwise the connectors are held and the window
// recorded in one transaction.
func (s *Service) OpenMaintenance(ctx context.Context, req api.MaintenanceRequest, allow func(connector string) error) (api.MaintenanceWindow, error) {
	state := strings.ToUpper(req.State)
	if state != api.StateStopped && state != api.StatePaused {
		return api.MaintenanceWindow{}, api.Errorf(api.CodeBadRequest, "Invalid \"state\" '%s': a maintenance window's state is STOPPED or PAUSED", req.State)
	}
	names, err := s.cfg.Select(req.Selector)
	if err != nil {
		return api.MaintenanceWindow{}, err
	}
	if err := grants.Allow(allow).All(names); err != nil {
		return api.MaintenanceWindow{}, err
	}
	w, err := s.cfg.Maintenance.Open(ctx, maintenance.OpenRequest{Selector: selectorRecord(req.Selector), Names: names, State: state,
		Reason: req.Reason, Principal: s.cfg.Principal(ctx)})
	if err != nil {
		return api.MaintenanceWindow{}, err
	}
	return windowView(w), nil
}

// MaintenanceWindows answers GET /sluice/maintenance: the open windows,
// oldest first.
func (s *Service) MaintenanceWindows(ctx context.Context) (api.MaintenanceList, error) {
	s.catchUp(ctx)
	ws := []api.MaintenanceWindow{}
	for _, w := range s.cfg.Fleet.Windows() {
		ws = append(ws, windowView(w))
	}
	return api.MaintenanceList{Windows: ws}, nil
}

// MaintenanceWindow answers GET /sluice/maintenance/{id}.
func (s *Service) MaintenanceWindow(ctx context.Context, id string) (api.MaintenanceWindow, error) {
	s.catchUp(ctx)
	w, ok := s.cfg.Fleet.Window(id)
	if !ok {
		return api.MaintenanceWindow{}, maintenance.NotFound(id)
	}
	return windowView(w), nil
}

// CloseMaintenance answers DELETE /sluice/maintenance/{id}: each connector
// of the window gets its previous state back, unless it was deleted or its
// state changed by hand meanwhile; the answer is the window with each
// connector's outcome and state. The caller's grants must cover every
// connector of the window (allow).
func (s *Service) CloseMaintenance(ctx context.Context, id string, allow func(connector string) error) (api.MaintenanceWindow, error) {
	w, ok := s.cfg.Fleet.Window(id)
	if !ok {
		return api.MaintenanceWindow{}, maintenance.NotFound(id)
	}
	names := make([]string, len(w.Connectors))
	for i, mc := range w.Connectors {
		names[i] = mc.Name
	}
	if err := grants.Allow(allow).All(names); err != nil {
		return api.MaintenanceWindow{}, err
	}
	w, err := s.cfg.Maintenance.Close(ctx, id)
	if err != nil {
		return api.MaintenanceWindow{}, err
	}
	return windowView(w), nil
}
