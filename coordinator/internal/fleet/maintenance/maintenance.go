// Package maintenance opens and closes maintenance windows (POST/DELETE
// /sluice/maintenance, docs/operations.md) on the leader: a window holds
// the connectors it matched in its state (STOPPED or PAUSED) and, when it
// closes, gives each its previous state back.
//
// Each change is ONE store.Stores.Apply: opening a window writes the
// connectors' target states and the window's fleet record in one
// transaction, and closing it writes the restored states and the window's
// removal in one, so no reader (nor a leader that takes over) ever sees a
// window without its connectors held, or connectors held by no window.
//
//	open:  refuse overlaps ─► lock the connectors ─► read each previous
//	       state ─► Apply(hold each, OpenWindow)
//	close: lock the connectors ─► per connector: deleted? ─► "deleted";
//	       its state no longer the one the window held it in? ─►
//	       "changed by hand" (left alone); else restored ─►
//	       Apply(restore each, CloseWindow)
//
// A connector is in at most one open window: two windows would disagree
// about what its previous state was. The controller reads its state
// through narrow ports and its time from an injected clock, so every
// decision is table-tested without Kafka.
package maintenance

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// The outcomes of a window's connectors when it closes.
const (
	OutcomeRestored      = "restored"
	OutcomeChangedByHand = "changed by hand"
	OutcomeDeleted       = "deleted"
)

// Configs is the config topic as this coordinator applied it.
type Configs interface {
	Get(name string) (store.Connector, bool)
}

// Windows are the open windows, as the fleet topic holds them.
type Windows interface {
	Window(id string) (store.Window, bool)
	Windows() []store.Window
}

// Store writes commands in one transaction (store.Stores).
type Store interface {
	Apply(ctx context.Context, cmds ...store.Command) error
}

// Locks serialise the changes of each connector (connlock.Table).
type Locks interface {
	Lock(name string) (unlock func())
}

// Config is what a Controller needs.
type Config struct {
	Configs Configs
	Windows Windows
	Store   Store
	Locks   Locks
	// Clock is the time of a window's opening.
	Clock func() time.Time
	// NewID names a window opened at a time.
	NewID func(now time.Time) string
	// Changed is told that target states changed (a reconcile pass).
	Changed func()
	// WriteFailed turns a failed write into the REST error answered.
	WriteFailed func(err error, what string, args ...any) error
}

// Controller opens and closes windows. Its mutex makes the overlap check
// and the write one step.
//
// Lock order: Controller.mu, then the connectors' locks (in name order, as
// connlock.LockBoth takes two), then the store's fleet write lock.
type Controller struct {
	cfg Config
	mu  sync.Mutex
}

// New makes a controller.
func New(cfg Config) *Controller { return &Controller{cfg: cfg} }

// OpenRequest is a window to open over Names (resolved from Selector,
// each checked by the caller), holding them in State (STOPPED or PAUSED).
type OpenRequest struct {
	Selector  store.Selector
	Names     []string
	State     string
	Reason    string
	Principal string
}

// held is the state a window of state holds a connector of state prev
// in: the window's, but a STOPPED connector stays STOPPED in a PAUSED
// window (it runs nothing already, and pausing it would make its tasks
// again).
func held(prev, state string) string {
	if prev == api.StateStopped {
		return prev
	}
	return state
}

// restStates are the stored target states by their REST names.
var restStates = map[string]string{records.TargetStarted: api.StateRunning, records.TargetPaused: api.StatePaused, records.TargetStopped: api.StateStopped}

// setState is the command giving a connector a target state by its REST
// name, as the single-connector endpoint of that state writes it.
func setState(name, state string) store.Command {
	switch state {
	case api.StateStopped:
		return store.StopConnector{Name: name}
	case api.StatePaused:
		return store.SetTargetState{Name: name, State: records.TargetPaused}
	}
	return store.SetTargetState{Name: name, State: records.TargetStarted}
}

// lockAll takes the locks of names in name order and returns their
// release.
func (c *Controller) lockAll(names []string) (unlock func()) {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	unlocks := make([]func(), 0, len(sorted))
	for _, n := range sorted {
		unlocks = append(unlocks, c.cfg.Locks.Lock(n))
	}
	return func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
}

// Open opens a window: every connector must exist (404 naming the first
// that does not) and be in no other window (409); then each is held in
// the window's state and the window recorded, in one transaction.
func (c *Controller) Open(ctx context.Context, req OpenRequest) (store.Window, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkNotInWindow(req.Names); err != nil {
		return store.Window{}, err
	}
	unlock := c.lockAll(req.Names)
	defer unlock()
	now := c.cfg.Clock()
	w := store.Window{ID: c.cfg.NewID(now), Selector: req.Selector, State: req.State, Reason: req.Reason,
		Principal: req.Principal, OpenedAt: now.UTC(), Connectors: make([]store.WindowConnector, 0, len(req.Names))}
	var cmds []store.Command
	for _, n := range req.Names {
		conn, ok := c.cfg.Configs.Get(n)
		if !ok {
			return store.Window{}, api.Errorf(api.CodeNotFound, "Connector %s not found", n)
		}
		prev := restStates[conn.TargetState]
		w.Connectors = append(w.Connectors, store.WindowConnector{Name: n, Previous: prev})
		if held(prev, req.State) != prev {
			cmds = append(cmds, setState(n, req.State))
		}
	}
	if err := c.cfg.Store.Apply(ctx, append(cmds, store.OpenWindow{Window: w})...); err != nil {
		return store.Window{}, c.cfg.WriteFailed(err, "Failed to record maintenance window %s", w.ID)
	}
	c.cfg.Changed()
	return w, nil
}

// checkNotInWindow refuses connectors that an open window holds.
func (c *Controller) checkNotInWindow(names []string) error {
	for _, w := range c.cfg.Windows.Windows() {
		for _, wc := range w.Connectors {
			if slices.Contains(names, wc.Name) {
				return api.Errorf(api.CodeConflict, "Connector %s is in maintenance window %s (%s); close that window first", wc.Name, w.ID, w.State)
			}
		}
	}
	return nil
}

// NotFound is the 404 of an unknown window.
func NotFound(id string) error {
	return api.Errorf(api.CodeNotFound, "Maintenance window %s not found", id)
}

// Close closes a window: each connector gets its previous state back,
// unless it was deleted or its state changed by hand meanwhile; the
// answer is the window with each connector's outcome and state. The
// restored states and the window's removal are one transaction: a close
// that fails changes nothing, and is asked again.
func (c *Controller) Close(ctx context.Context, id string) (store.Window, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.cfg.Windows.Window(id)
	if !ok {
		return store.Window{}, NotFound(id)
	}
	names := make([]string, len(w.Connectors))
	for i, wc := range w.Connectors {
		names[i] = wc.Name
	}
	unlock := c.lockAll(names)
	defer unlock()
	var cmds []store.Command
	for i := range w.Connectors {
		wc := &w.Connectors[i]
		if wc.Outcome != "" {
			continue // settled by an earlier version's close that stopped part way
		}
		if cmd := c.restore(w.State, wc); cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	if err := c.cfg.Store.Apply(ctx, append(cmds, store.CloseWindow{ID: id})...); err != nil {
		return store.Window{}, c.cfg.WriteFailed(err, "Failed to remove maintenance window %s", id)
	}
	c.cfg.Changed()
	return w, nil
}

// restore decides one connector of a window closing in state: it sets the
// connector's outcome and state, and returns the command restoring it, if
// one is needed.
func (c *Controller) restore(state string, wc *store.WindowConnector) store.Command {
	conn, ok := c.cfg.Configs.Get(wc.Name)
	cur := restStates[conn.TargetState]
	switch {
	case !ok:
		wc.Outcome = OutcomeDeleted
		return nil
	case cur != held(wc.Previous, state):
		wc.Outcome, wc.State = OutcomeChangedByHand, cur
		return nil
	}
	wc.Outcome, wc.State = OutcomeRestored, wc.Previous
	if wc.Previous == cur {
		return nil
	}
	return setState(wc.Name, wc.Previous)
}
