package herder

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/auth"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// Maintenance windows (POST/GET/DELETE /sluice/maintenance, see
// docs/operations.md): a window records the target state each matched
// connector had, then sets the window's state on each; closing it puts
// back each previous state. The window lives in the fleet topic from
// before the first connector changes until the last one is restored, so
// a leader that takes over mid-way can still close it.
//
//	open:  select ─► refuse overlaps ─► record window (previous states)
//	       ─► set the window's state on each ─► record it again
//	close: per connector: deleted? ─► "deleted"; its state no longer the
//	       one the window held it in? ─► "changed by hand" (left alone);
//	       else restore ─►
//	       record the outcome ─► … ─► remove the window
//
// A connector is in at most one open window: two windows would disagree
// about what its previous state was.

// The outcomes of a window's connectors when it closes.
const (
	outcomeRestored      = "restored"
	outcomeChangedByHand = "changed by hand"
	outcomeDeleted       = "deleted"
)

// maintenanceStates are the states a window may hold its connectors in,
// by their REST names.
var maintenanceStates = map[string]string{v1.StateStopped: records.TargetStopped, v1.StatePaused: records.TargetPaused}

// OpenMaintenance answers POST /sluice/maintenance. Every connector the
// selector names must exist (404 otherwise), the caller's grants must
// cover each (allow; 403 naming the first that is not), and none may be
// in another open window (409 naming it and the window). Nothing changes
// when any of those fail.
func (h *Herder) OpenMaintenance(ctx context.Context, req v1.MaintenanceRequest, allow func(connector string) error) (v1.MaintenanceWindow, error) {
	state := strings.ToUpper(req.State)
	if _, ok := maintenanceStates[state]; !ok {
		return v1.MaintenanceWindow{}, v1.Errorf(v1.CodeBadRequest, "Invalid \"state\" '%s': a maintenance window's state is STOPPED or PAUSED", req.State)
	}
	names, err := h.selectConnectors(req.Selector)
	if err != nil {
		return v1.MaintenanceWindow{}, err
	}
	for _, n := range names {
		if err := checkGrant(allow, n); err != nil {
			return v1.MaintenanceWindow{}, v1.Errorf(v1.CodeForbidden, "%s", err.Error())
		}
	}
	h.maintMu.Lock()
	defer h.maintMu.Unlock()
	if err := h.checkNotInWindow(names); err != nil {
		return v1.MaintenanceWindow{}, err
	}
	w := v1.MaintenanceWindow{ID: operationID(time.Now()), Selector: req.Selector, State: state, Reason: req.Reason,
		Principal: principalOf(ctx), OpenedAt: time.Now().UTC(), Connectors: make([]v1.MaintenanceConnector, 0, len(names))}
	for _, n := range names {
		c, ok := h.configs.State.Get(n)
		if !ok {
			return v1.MaintenanceWindow{}, notFound(n)
		}
		w.Connectors = append(w.Connectors, v1.MaintenanceConnector{Name: n, Previous: restStates[c.TargetState]})
	}
	if err := h.putWindow(ctx, w); err != nil {
		return v1.MaintenanceWindow{}, err
	}
	for i := range w.Connectors {
		mc := &w.Connectors[i]
		prev, err := h.holdConnector(ctx, mc.Name, state)
		if err != nil {
			e := v1.AsError(err)
			return v1.MaintenanceWindow{}, v1.Errorf(e.Code, "Maintenance window %s is open, but setting connector %s %s failed: %s; close the window to restore the connectors it changed", w.ID, mc.Name, state, e.Message)
		}
		if prev != "" {
			mc.Previous = prev
		}
	}
	// Again, with each previous state as read just before the connector
	// changed: a change between the first record and then counts.
	if err := h.putWindow(ctx, w); err != nil {
		return v1.MaintenanceWindow{}, err
	}
	return w, nil
}

// holdConnector sets a connector in state (a REST state of
// maintenanceStates) and returns the state it had; "" when it is gone
// (the close then reports it deleted).
func (h *Herder) holdConnector(ctx context.Context, name, state string) (string, error) {
	unlock := h.locks.Lock(name)
	c, ok := h.configs.State.Get(name)
	unlock()
	if !ok {
		return "", nil
	}
	prev := restStates[c.TargetState]
	if held(prev, state) == prev {
		return prev, nil
	}
	// The lock is let go between the read and the write, as the
	// single-connector calls take it themselves: a change in between is
	// the user's, and the close reports it as changed by hand.
	return prev, h.setRESTState(ctx, name, state)
}

// held is the state a window of state holds a connector of state prev
// in: the window's, but a STOPPED connector stays STOPPED in a PAUSED
// window (it runs nothing already, and pausing it would make its tasks
// again).
func held(prev, state string) string {
	if prev == v1.StateStopped {
		return prev
	}
	return state
}

// setRESTState sets a connector's target state by its REST name, as the
// single-connector endpoint of that state does.
func (h *Herder) setRESTState(ctx context.Context, name, state string) error {
	switch state {
	case v1.StateStopped:
		return h.StopConnector(ctx, name)
	case v1.StatePaused:
		return h.PauseConnector(ctx, name)
	}
	return h.ResumeConnector(ctx, name)
}

// checkNotInWindow refuses connectors that an open window holds.
func (h *Herder) checkNotInWindow(names []string) error {
	for _, w := range h.fleet.State.Windows() {
		for _, c := range w.Connectors {
			for _, n := range names {
				if c.Name == n {
					return v1.Errorf(v1.CodeConflict, "Connector %s is in maintenance window %s (%s); close that window first", n, w.ID, w.State)
				}
			}
		}
	}
	return nil
}

// MaintenanceWindows answers GET /sluice/maintenance: the open windows,
// oldest first.
func (h *Herder) MaintenanceWindows(ctx context.Context) (v1.MaintenanceList, error) {
	h.catchUpFleet(ctx)
	ws := h.fleet.State.Windows()
	if ws == nil {
		ws = []v1.MaintenanceWindow{}
	}
	return v1.MaintenanceList{Windows: ws}, nil
}

// MaintenanceWindow answers GET /sluice/maintenance/{id}.
func (h *Herder) MaintenanceWindow(ctx context.Context, id string) (v1.MaintenanceWindow, error) {
	h.catchUpFleet(ctx)
	w, ok := h.fleet.State.Window(id)
	if !ok {
		return v1.MaintenanceWindow{}, windowNotFound(id)
	}
	return w, nil
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
// connector's outcome and state. Each outcome is recorded as it is
// reached, so a close that fails part way (or a leader that takes over)
// closes the rest when asked again, without touching what was restored.
// The caller's grants must cover every connector of the window (allow).
func (h *Herder) CloseMaintenance(ctx context.Context, id string, allow func(connector string) error) (v1.MaintenanceWindow, error) {
	h.maintMu.Lock()
	defer h.maintMu.Unlock()
	w, ok := h.fleet.State.Window(id)
	if !ok {
		return v1.MaintenanceWindow{}, windowNotFound(id)
	}
	for _, mc := range w.Connectors {
		if err := checkGrant(allow, mc.Name); err != nil {
			return v1.MaintenanceWindow{}, v1.Errorf(v1.CodeForbidden, "%s", err.Error())
		}
	}
	for i := range w.Connectors {
		mc := &w.Connectors[i]
		if mc.Outcome != "" {
			continue
		}
		if err := h.restoreConnector(ctx, w.State, mc); err != nil {
			return v1.MaintenanceWindow{}, v1.Errorf(v1.AsError(err).Code, "Closing maintenance window %s: restoring connector %s to %s failed: %s; the window stays open, close it again to restore the rest",
				id, mc.Name, mc.Previous, v1.AsError(err).Message)
		}
		if err := h.putWindow(ctx, w); err != nil {
			return v1.MaintenanceWindow{}, err
		}
	}
	if err := h.fleet.Apply(ctx, store.CloseMaintenance{ID: id}); err != nil {
		return v1.MaintenanceWindow{}, writeFailed(err, "Failed to remove maintenance window %s", id)
	}
	return w, nil
}

// restoreConnector gives one connector of a window closing in state its
// previous state back and sets its outcome, or leaves it as it is.
func (h *Herder) restoreConnector(ctx context.Context, state string, mc *v1.MaintenanceConnector) error {
	c, ok := h.configs.State.Get(mc.Name)
	switch {
	case !ok:
		mc.Outcome = outcomeDeleted
		return nil
	case restStates[c.TargetState] != held(mc.Previous, state):
		mc.Outcome, mc.State = outcomeChangedByHand, restStates[c.TargetState]
		return nil
	case mc.Previous != restStates[c.TargetState]:
		if err := h.setRESTState(ctx, mc.Name, mc.Previous); err != nil {
			return err
		}
	}
	mc.Outcome, mc.State = outcomeRestored, mc.Previous
	return nil
}

// putWindow records w in the fleet topic.
func (h *Herder) putWindow(ctx context.Context, w v1.MaintenanceWindow) error {
	if err := h.fleet.Apply(ctx, store.PutMaintenance{Window: w}); err != nil {
		return writeFailed(err, "Failed to record maintenance window %s", w.ID)
	}
	return nil
}

func windowNotFound(id string) error {
	return v1.Errorf(v1.CodeNotFound, "Maintenance window %s not found", id)
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
