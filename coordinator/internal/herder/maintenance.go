package herder

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/auth"
	"github.com/sluice-io/sluice/coordinator/internal/connectors"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/maintenance"
)

// Maintenance windows (POST/GET/DELETE /sluice/maintenance, see
// docs/operations.md) are the leader's maintenance controller's
// (fleet/maintenance): the herder checks the request and the caller's
// grants, and shows the windows as the REST API has them.

// OpenMaintenance answers POST /sluice/maintenance. Every connector the
// selector names must exist (404 otherwise), the caller's grants must
// cover each (allow; 403 naming the first that is not), and none may be
// in another open window (409 naming it and the window). Nothing changes
// when any of those fail; otherwise the connectors are held and the window
// recorded in one transaction.
func (h *Herder) OpenMaintenance(ctx context.Context, req v1.MaintenanceRequest, allow func(connector string) error) (v1.MaintenanceWindow, error) {
	state := strings.ToUpper(req.State)
	if state != v1.StateStopped && state != v1.StatePaused {
		return v1.MaintenanceWindow{}, v1.Errorf(v1.CodeBadRequest, "Invalid \"state\" '%s': a maintenance window's state is STOPPED or PAUSED", req.State)
	}
	names, err := h.conns.Select(req.Selector)
	if err != nil {
		return v1.MaintenanceWindow{}, err
	}
	for _, n := range names {
		if err := connectors.CheckGrant(allow, n); err != nil {
			return v1.MaintenanceWindow{}, v1.Errorf(v1.CodeForbidden, "%s", err.Error())
		}
	}
	w, err := h.maint.Open(ctx, maintenance.OpenRequest{Selector: selectorRecord(req.Selector), Names: names, State: state,
		Reason: req.Reason, Principal: principalOf(ctx)})
	if err != nil {
		return v1.MaintenanceWindow{}, err
	}
	return windowView(w), nil
}

// MaintenanceWindows answers GET /sluice/maintenance: the open windows,
// oldest first.
func (h *Herder) MaintenanceWindows(ctx context.Context) (v1.MaintenanceList, error) {
	h.catchUpFleet(ctx)
	ws := []v1.MaintenanceWindow{}
	for _, w := range h.fleet.State.Windows() {
		ws = append(ws, windowView(w))
	}
	return v1.MaintenanceList{Windows: ws}, nil
}

// MaintenanceWindow answers GET /sluice/maintenance/{id}.
func (h *Herder) MaintenanceWindow(ctx context.Context, id string) (v1.MaintenanceWindow, error) {
	h.catchUpFleet(ctx)
	w, ok := h.fleet.State.Window(id)
	if !ok {
		return v1.MaintenanceWindow{}, maintenance.NotFound(id)
	}
	return windowView(w), nil
}

// catchUpFleet makes a follower read the fleet topic to its end before it
// answers, as the REST layer has it read the config topic: a window opened
// through it a moment ago is then shown. The leader applied its own
// writes already. A stale answer beats none, so a failure is ignored.
func (h *Herder) catchUpFleet(ctx context.Context) {
	if leading, _ := h.Leader(); leading {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, catchUpTimeout)
	defer cancel()
	_ = h.fleet.ReadToEnd(ctx)
}

// catchUpTimeout bounds a follower's catching up before a read.
const catchUpTimeout = 5 * time.Second

// CloseMaintenance answers DELETE /sluice/maintenance/{id}: each connector
// of the window gets its previous state back, unless it was deleted or its
// state changed by hand meanwhile; the answer is the window with each
// connector's outcome and state. The caller's grants must cover every
// connector of the window (allow).
func (h *Herder) CloseMaintenance(ctx context.Context, id string, allow func(connector string) error) (v1.MaintenanceWindow, error) {
	w, ok := h.fleet.State.Window(id)
	if !ok {
		return v1.MaintenanceWindow{}, maintenance.NotFound(id)
	}
	for _, mc := range w.Connectors {
		if err := connectors.CheckGrant(allow, mc.Name); err != nil {
			return v1.MaintenanceWindow{}, v1.Errorf(v1.CodeForbidden, "%s", err.Error())
		}
	}
	w, err := h.maint.Close(ctx, id)
	if err != nil {
		return v1.MaintenanceWindow{}, err
	}
	return windowView(w), nil
}

// operationID names a maintenance window, a rollout or a rebalance: its
// creation time first, so ids sort as they were made, then a random part.
func operationID(now time.Time) string {
	return fmt.Sprintf("%s-%s", now.UTC().Format("20060102-150405.000"), randomID())
}

// principalOf names the caller of ctx, as the audit trail does.
func principalOf(ctx context.Context) string {
	if p, ok := auth.PrincipalFrom(ctx); ok && p != "" {
		return p
	}
	return "anonymous"
}
