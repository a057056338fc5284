package fleetrest

import (
	"context"
	"strings"

	v1 "github.com/sluice-io/sluice/api/v1"
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
func (s *Service) OpenMaintenance(ctx context.Context, req v1.MaintenanceRequest, allow func(connector string) error) (v1.MaintenanceWindow, error) {
	state := strings.ToUpper(req.State)
	if state != v1.StateStopped && state != v1.StatePaused {
		return v1.MaintenanceWindow{}, v1.Errorf(v1.CodeBadRequest, "Invalid \"state\" '%s': a maintenance window's state is STOPPED or PAUSED", req.State)
	}
	names, err := s.cfg.Select(req.Selector)
	if err != nil {
		return v1.MaintenanceWindow{}, err
	}
	if err := grants.Allow(allow).All(names); err != nil {
		return v1.MaintenanceWindow{}, err
	}
	w, err := s.cfg.Maintenance.Open(ctx, maintenance.OpenRequest{Selector: selectorRecord(req.Selector), Names: names, State: state,
		Reason: req.Reason, Principal: s.cfg.Principal(ctx)})
	if err != nil {
		return v1.MaintenanceWindow{}, err
	}
	return windowView(w), nil
}

// MaintenanceWindows answers GET /sluice/maintenance: the open windows,
// oldest first.
func (s *Service) MaintenanceWindows(ctx context.Context) (v1.MaintenanceList, error) {
	s.catchUp(ctx)
	ws := []v1.MaintenanceWindow{}
	for _, w := range s.cfg.Fleet.Windows() {
		ws = append(ws, windowView(w))
	}
	return v1.MaintenanceList{Windows: ws}, nil
}

// MaintenanceWindow answers GET /sluice/maintenance/{id}.
func (s *Service) MaintenanceWindow(ctx context.Context, id string) (v1.MaintenanceWindow, error) {
	s.catchUp(ctx)
	w, ok := s.cfg.Fleet.Window(id)
	if !ok {
		return v1.MaintenanceWindow{}, maintenance.NotFound(id)
	}
	return windowView(w), nil
}

// CloseMaintenance answers DELETE /sluice/maintenance/{id}: each connector
// of the window gets its previous state back, unless it was deleted or its
// state changed by hand meanwhile; the answer is the window with each
// connector's outcome and state. The caller's grants must cover every
// connector of the window (allow).
func (s *Service) CloseMaintenance(ctx context.Context, id string, allow func(connector string) error) (v1.MaintenanceWindow, error) {
	w, ok := s.cfg.Fleet.Window(id)
	if !ok {
		return v1.MaintenanceWindow{}, maintenance.NotFound(id)
	}
	names := make([]string, len(w.Connectors))
	for i, mc := range w.Connectors {
		names[i] = mc.Name
	}
	if err := grants.Allow(allow).All(names); err != nil {
		return v1.MaintenanceWindow{}, err
	}
	w, err := s.cfg.Maintenance.Close(ctx, id)
	if err != nil {
		return v1.MaintenanceWindow{}, err
	}
	return windowView(w), nil
}
