package maintenance

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/connlock"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// env is a fake leader: the real commands applied to in-memory states
// (store.Memory), a fake clock and counted reconcile triggers. Its
// controller can be replaced by a new one over the same state, as a new
// leader's would be.
type env struct {
	t       *testing.T
	mem     *store.Memory
	now     time.Time
	changed int
	c       *Controller
}

var t0 = time.Date(2026, 3, 1, 9, 30, 0, 0, time.FixedZone("CET", 3600))

func newEnv(t *testing.T, states map[string]string) *env {
	e := &env{t: t, mem: store.NewMemory(), now: t0}
	for name, st := range states {
		if err := e.mem.Apply(context.Background(), store.CreateConnector{Name: name, Config: map[string]string{"name": name}, TargetState: stored[st]}); err != nil {
			t.Fatal(err)
		}
	}
	e.mem.Txns = nil
	e.failover()
	return e
}

// stored are the stored target states by REST name.
var stored = map[string]string{api.StateRunning: records.TargetStarted, api.StatePaused: records.TargetPaused, api.StateStopped: records.TargetStopped}

// failover replaces the controller by a new one over the persisted state.
func (e *env) failover() {
	e.c = New(Config{Configs: e.mem.Config, Windows: e.mem.Fleet, Store: e.mem, Locks: connlock.New(func() {}),
		Clock:   func() time.Time { return e.now },
		NewID:   func(now time.Time) string { return "w-" + now.UTC().Format("150405") },
		Changed: func() { e.changed++ },
		WriteFailed: func(err error, what string, args ...any) error {
			return api.Errorf(api.CodeInternal, "%s: %v", fmt.Sprintf(what, args...), err)
		}})
}

// states are the connectors' target states by REST name ("" when gone).
func (e *env) states(names ...string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		c, ok := e.mem.Config.Get(n)
		if ok {
			out[n] = restStates[c.TargetState]
		} else {
			out[n] = ""
		}
	}
	return out
}

func (e *env) set(name, state string) {
	e.t.Helper()
	if err := e.mem.Apply(context.Background(), setState(name, state)); err != nil {
		e.t.Fatal(err)
	}
}

func wantError(t *testing.T, err error, code api.Code, msg string) {
	t.Helper()
	var e *api.Error
	if !errors.As(err, &e) || e.Code != code || e.Message != msg {
		t.Fatalf("error %v, want %d %q", err, code, msg)
	}
}

func connectors(w store.Window) map[string][3]string {
	out := map[string][3]string{}
	for _, c := range w.Connectors {
		out[c.Name] = [3]string{c.Previous, c.Outcome, c.State}
	}
	return out
}

// TestOpen is the table of a window's opening: which connectors change,
// what the window records, and that it is all one transaction.
func TestOpen(t *testing.T) {
	all := map[string]string{"run": api.StateRunning, "paused": api.StatePaused, "stopped": api.StateStopped}
	for _, tt := range []struct {
		name        string
		state       string
		names       []string
		wantStates  map[string]string
		wantRecords []string // keys of the one transaction, in order
	}{
		{"stopped window over every state", api.StateStopped, []string{"paused", "run", "stopped"},
			map[string]string{"run": api.StateStopped, "paused": api.StateStopped, "stopped": api.StateStopped},
			[]string{"commit-paused", "target-state-paused", "commit-run", "target-state-run", "maintenance-w-083000"}},
		{"paused window leaves a stopped connector stopped", api.StatePaused, []string{"paused", "run", "stopped"},
			map[string]string{"run": api.StatePaused, "paused": api.StatePaused, "stopped": api.StateStopped},
			[]string{"target-state-run", "maintenance-w-083000"}},
		{"a window over connectors already held writes the window alone", api.StateStopped, []string{"stopped"},
			map[string]string{"run": api.StateRunning, "paused": api.StatePaused, "stopped": api.StateStopped},
			[]string{"maintenance-w-083000"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, all)
			w, err := e.c.Open(context.Background(), OpenRequest{Selector: store.Selector{Match: "*"}, Names: tt.names, State: tt.state, Reason: "upgrade", Principal: "ann"})
			if err != nil {
				t.Fatal(err)
			}
			if got := e.states("run", "paused", "stopped"); !reflect.DeepEqual(got, tt.wantStates) {
				t.Fatalf("states %v, want %v", got, tt.wantStates)
			}
			if len(e.mem.Txns) != 1 {
				t.Fatalf("%d transactions, want 1", len(e.mem.Txns))
			}
			var keys []string
			for _, r := range e.mem.Txns[0] {
				keys = append(keys, r.Key)
			}
			if !reflect.DeepEqual(keys, tt.wantRecords) {
				t.Fatalf("transaction %v, want %v", keys, tt.wantRecords)
			}
			stored, ok := e.mem.Fleet.Window(w.ID)
			if !ok || !reflect.DeepEqual(stored, w) {
				t.Fatalf("stored window %+v, answered %+v", stored, w)
			}
			for _, c := range w.Connectors {
				if c.Previous != all[c.Name] || c.Outcome != "" {
					t.Fatalf("window connector %+v, want previous %s", c, all[c.Name])
				}
			}
			if w.ID != "w-083000" || !w.OpenedAt.Equal(t0) || w.OpenedAt.Location() != time.UTC || w.Principal != "ann" || w.Reason != "upgrade" || w.State != tt.state {
				t.Fatalf("window %+v", w)
			}
			if e.changed != 1 {
				t.Fatalf("reconcile triggered %d times", e.changed)
			}
		})
	}
}

// TestOpenRefusals: an overlap, a missing connector and a failed write
// each change nothing at all.
func TestOpenRefusals(t *testing.T) {
	e := newEnv(t, map[string]string{"a": api.StateRunning, "b": api.StateRunning})
	first, err := e.c.Open(context.Background(), OpenRequest{Names: []string{"a"}, State: api.StateStopped})
	if err != nil {
		t.Fatal(err)
	}
	before := len(e.mem.Txns)
	e.now = e.now.Add(time.Second)
	_, err = e.c.Open(context.Background(), OpenRequest{Names: []string{"b", "a"}, State: api.StatePaused})
	wantError(t, err, api.CodeConflict, "Connector a is in maintenance window "+first.ID+" (STOPPED); close that window first")
	_, err = e.c.Open(context.Background(), OpenRequest{Names: []string{"b", "ghost"}, State: api.StatePaused})
	wantError(t, err, api.CodeNotFound, "Connector ghost not found")

	boom := errors.New("broker away")
	e.mem.Fail = func([]store.Command) error { return boom }
	_, err = e.c.Open(context.Background(), OpenRequest{Names: []string{"b"}, State: api.StatePaused})
	wantError(t, err, api.CodeInternal, "Failed to record maintenance window w-083001: broker away")
	if len(e.mem.Txns) != before || e.states("b")["b"] != api.StateRunning || len(e.mem.Fleet.Windows()) != 1 {
		t.Fatalf("a refused open changed something: %d txns, b %v, windows %+v", len(e.mem.Txns), e.states("b"), e.mem.Fleet.Windows())
	}
}

// TestClose is the table of a window's closing: each connector's outcome
// by what became of it during the window, and the restores and the
// window's removal in one transaction.
func TestClose(t *testing.T) {
	for _, tt := range []struct {
		name   string
		state  string
		before map[string]string
		during func(e *env)
		want   map[string][3]string
		after  map[string]string
		keys   []string
	}{
		{"every connector back to its state", api.StateStopped,
			map[string]string{"run": api.StateRunning, "paused": api.StatePaused, "stopped": api.StateStopped}, nil,
			map[string][3]string{"run": {"RUNNING", OutcomeRestored, "RUNNING"}, "paused": {"PAUSED", OutcomeRestored, "PAUSED"}, "stopped": {"STOPPED", OutcomeRestored, "STOPPED"}},
			map[string]string{"run": api.StateRunning, "paused": api.StatePaused, "stopped": api.StateStopped},
			[]string{"target-state-paused", "target-state-run", "maintenance-w-083000"}},
		{"resumed by hand is left running; deleted is reported", api.StatePaused,
			map[string]string{"run": api.StateRunning, "gone": api.StateRunning, "paused": api.StatePaused},
			func(e *env) {
				e.set("run", api.StateRunning)
				if err := e.mem.Apply(context.Background(), store.DeleteConnector{Name: "gone"}); err != nil {
					e.t.Fatal(err)
				}
			},
			map[string][3]string{"run": {"RUNNING", OutcomeChangedByHand, "RUNNING"}, "gone": {"RUNNING", OutcomeDeleted, ""}, "paused": {"PAUSED", OutcomeRestored, "PAUSED"}},
			map[string]string{"run": api.StateRunning, "gone": "", "paused": api.StatePaused},
			[]string{"maintenance-w-083000"}},
		{"stopped by hand in a paused window is changed by hand", api.StatePaused,
			map[string]string{"run": api.StateRunning},
			func(e *env) { e.set("run", api.StateStopped) },
			map[string][3]string{"run": {"RUNNING", OutcomeChangedByHand, "STOPPED"}},
			map[string]string{"run": api.StateStopped},
			[]string{"maintenance-w-083000"}},
		{"a stopped connector in a paused window stays stopped, restored", api.StatePaused,
			map[string]string{"stopped": api.StateStopped}, nil,
			map[string][3]string{"stopped": {"STOPPED", OutcomeRestored, "STOPPED"}},
			map[string]string{"stopped": api.StateStopped},
			[]string{"maintenance-w-083000"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.before)
			var names []string
			for n := range tt.before {
				names = append(names, n)
			}
			w, err := e.c.Open(context.Background(), OpenRequest{Names: sorted(names), State: tt.state})
			if err != nil {
				t.Fatal(err)
			}
			if tt.during != nil {
				tt.during(e)
			}
			e.mem.Txns = nil
			closed, err := e.c.Close(context.Background(), w.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got := connectors(closed); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("outcomes %v, want %v", got, tt.want)
			}
			if got := e.states(names...); !reflect.DeepEqual(got, tt.after) {
				t.Fatalf("states %v, want %v", got, tt.after)
			}
			if len(e.mem.Txns) != 1 {
				t.Fatalf("%d transactions, want 1", len(e.mem.Txns))
			}
			var keys []string
			for _, r := range e.mem.Txns[0] {
				keys = append(keys, r.Key)
			}
			if !reflect.DeepEqual(keys, tt.keys) {
				t.Fatalf("transaction %v, want %v", keys, tt.keys)
			}
			if _, open := e.mem.Fleet.Window(w.ID); open {
				t.Fatal("the window is still open")
			}
		})
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestCloseFailsWhole: a close whose write fails (a leader deposed before
// its commit) leaves the window open and every connector held; a new
// leader's controller, from the persisted state, closes it in full.
func TestCloseFailsWhole(t *testing.T) {
	e := newEnv(t, map[string]string{"a": api.StateRunning, "b": api.StatePaused})
	w, err := e.c.Open(context.Background(), OpenRequest{Names: []string{"a", "b"}, State: api.StateStopped})
	if err != nil {
		t.Fatal(err)
	}
	e.mem.Fail = func([]store.Command) error { return errors.New("fenced") }
	_, err = e.c.Close(context.Background(), w.ID)
	wantError(t, err, api.CodeInternal, "Failed to remove maintenance window "+w.ID+": fenced")
	if got := e.states("a", "b"); got["a"] != api.StateStopped || got["b"] != api.StateStopped {
		t.Fatalf("a failed close changed states: %v", got)
	}
	if _, open := e.mem.Fleet.Window(w.ID); !open {
		t.Fatal("a failed close removed the window")
	}
	e.mem.Fail = nil
	e.failover()
	closed, err := e.c.Close(context.Background(), w.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][3]string{"a": {"RUNNING", OutcomeRestored, "RUNNING"}, "b": {"PAUSED", OutcomeRestored, "PAUSED"}}
	if got := connectors(closed); !reflect.DeepEqual(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	_, err = e.c.Close(context.Background(), w.ID)
	wantError(t, err, api.CodeNotFound, "Maintenance window "+w.ID+" not found")
}

// TestOpenFailsWhole: an open whose write fails holds no connector and
// records no window: nothing half-done, whichever command would have
// failed.
func TestOpenFailsWhole(t *testing.T) {
	e := newEnv(t, map[string]string{"a": api.StateRunning, "b": api.StateRunning, "c": api.StateRunning})
	var seen []store.Command
	e.mem.Fail = func(cmds []store.Command) error { seen = cmds; return errors.New("deposed") }
	if _, err := e.c.Open(context.Background(), OpenRequest{Names: []string{"a", "b", "c"}, State: api.StateStopped}); err == nil {
		t.Fatal("open succeeded")
	}
	if len(seen) != 4 {
		t.Fatalf("one call of %d commands, want 3 holds and the window: %v", len(seen), seen)
	}
	if got := e.states("a", "b", "c"); got["a"] != api.StateRunning || got["b"] != api.StateRunning || got["c"] != api.StateRunning {
		t.Fatalf("states %v after a failed open", got)
	}
	if ws := e.mem.Fleet.Windows(); len(ws) != 0 || len(e.mem.Txns) != 0 || e.changed != 0 {
		t.Fatalf("windows %+v, %d transactions, %d triggers after a failed open", ws, len(e.mem.Txns), e.changed)
	}
}

// TestFailoverBetweenOpenAndClose: a window opened by one leader is
// closed by the next, from the fleet topic alone.
func TestFailoverBetweenOpenAndClose(t *testing.T) {
	e := newEnv(t, map[string]string{"a": api.StatePaused, "b": api.StateRunning})
	w, err := e.c.Open(context.Background(), OpenRequest{Names: []string{"a", "b"}, State: api.StateStopped})
	if err != nil {
		t.Fatal(err)
	}
	e.failover()
	if _, err := e.c.Open(context.Background(), OpenRequest{Names: []string{"b"}, State: api.StatePaused}); err == nil ||
		!strings.Contains(err.Error(), "is in maintenance window "+w.ID) {
		t.Fatalf("a new leader allowed an overlap: %v", err)
	}
	if _, err := e.c.Close(context.Background(), w.ID); err != nil {
		t.Fatal(err)
	}
	if got := e.states("a", "b"); got["a"] != api.StatePaused || got["b"] != api.StateRunning {
		t.Fatalf("states %v", got)
	}
}

// TestCloseSkipsSettledConnectors: a window an earlier version recorded
// part way through its close (outcomes set on some connectors) closes
// the rest only.
func TestCloseSkipsSettledConnectors(t *testing.T) {
	e := newEnv(t, map[string]string{"a": api.StateRunning, "b": api.StateRunning})
	e.set("a", api.StateStopped)
	e.set("b", api.StateStopped)
	old := store.Window{ID: "old", State: api.StateStopped, Connectors: []store.WindowConnector{
		{Name: "a", Previous: api.StateRunning, Outcome: OutcomeChangedByHand, State: api.StateStopped},
		{Name: "b", Previous: api.StateRunning}}}
	if err := e.mem.Apply(context.Background(), store.OpenWindow{Window: old}); err != nil {
		t.Fatal(err)
	}
	closed, err := e.c.Close(context.Background(), "old")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][3]string{"a": {"RUNNING", OutcomeChangedByHand, "STOPPED"}, "b": {"RUNNING", OutcomeRestored, "RUNNING"}}
	if got := connectors(closed); !reflect.DeepEqual(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	if got := e.states("a", "b"); got["a"] != api.StateStopped || got["b"] != api.StateRunning {
		t.Fatalf("states %v", got)
	}
}

// TestClockEdges: a window's id and opening time are the clock's at the
// instant it opens, in UTC, whatever the clock's zone; two windows opened
// a millisecond apart get their own times.
func TestClockEdges(t *testing.T) {
	e := newEnv(t, map[string]string{"a": api.StateRunning, "b": api.StateRunning})
	e.c.cfg.NewID = func(now time.Time) string { return now.UTC().Format("150405.000") }
	w1, err := e.c.Open(context.Background(), OpenRequest{Names: []string{"a"}, State: api.StatePaused})
	if err != nil {
		t.Fatal(err)
	}
	e.now = e.now.Add(time.Millisecond)
	w2, err := e.c.Open(context.Background(), OpenRequest{Names: []string{"b"}, State: api.StatePaused})
	if err != nil {
		t.Fatal(err)
	}
	if w1.ID != "083000.000" || w2.ID != "083000.001" || w2.OpenedAt.Sub(w1.OpenedAt) != time.Millisecond || w1.OpenedAt.Location() != time.UTC {
		t.Fatalf("windows %s at %s and %s at %s", w1.ID, w1.OpenedAt, w2.ID, w2.OpenedAt)
	}
	if got := e.mem.Fleet.Windows(); len(got) != 2 || got[0].ID != w1.ID {
		t.Fatalf("windows oldest first: %+v", got)
	}
}
