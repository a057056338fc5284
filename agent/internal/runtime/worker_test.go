package runtime

import (
	"context"
	"reflect"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/shared/wire"
)

func TestVoidMark(t *testing.T) {
	m := voidMark{term: 4, gen: 10}
	for _, tc := range []struct {
		term, gen int64
		void      bool
	}{
		{4, 10, true}, {4, 9, true}, {3, 99, true},
		{4, 11, false}, {5, 1, false},
	} {
		if got := m.voids(tc.term, tc.gen); got != tc.void {
			t.Errorf("mark %+v voids term %d generation %d: %v, want %v", m, tc.term, tc.gen, got, tc.void)
		}
	}
}

// TestRevokeVoidsAssignmentsInFlight: an assignment that a revoke overtook
// (same term, generation not newer than the revoke's) is refused and starts
// nothing; a later, weaker revoke does not lower the bar.
func TestRevokeVoidsAssignmentsInFlight(t *testing.T) {
	w := NewWorker(Config{})
	ctx := context.Background()
	id := api.TaskID{Connector: "c", Task: 0}
	if stopped, _ := w.Revoke(ctx, 4, 10, []api.TaskID{id}); !reflect.DeepEqual(stopped, []api.TaskID{id}) {
		t.Fatalf("revoke of a task not running: stopped %v", stopped)
	}
	w.Revoke(ctx, 0, 0, []api.TaskID{id}) // as on shutdown: voids nothing more
	for _, gen := range []int64{3, 10} {
		refused := w.Assign(ctx, 4, []wire.TaskAssignment{{ID: id, Generation: gen}})
		if !reflect.DeepEqual(refused, []api.TaskID{id}) {
			t.Errorf("assignment of generation %d after a revoke at 10: refused %v, want the task", gen, refused)
		}
	}
	if got := w.Running(); len(got) != 0 {
		t.Fatalf("a refused assignment started a task: %+v", got)
	}
}

// TestAssignmentAfterShutdownBeganIsRefused: an assignment that arrives
// once the agent began shutting down (StopAll) — one that was in flight —
// starts nothing and is refused, so that the coordinator places the task
// elsewhere.
func TestAssignmentAfterShutdownBeganIsRefused(t *testing.T) {
	w := NewWorker(Config{Registry: plugins.Builtin()})
	ctx := context.Background()
	w.StopAll(ctx)
	id := api.TaskID{Connector: "c", Task: 0}
	refused := w.Assign(ctx, 1, []wire.TaskAssignment{{ID: id, Generation: 1, ConnectorConfig: map[string]string{"connector.class": "not.installed"}}})
	if !reflect.DeepEqual(refused, []api.TaskID{id}) {
		t.Fatalf("assignment after StopAll: refused %v, want the task", refused)
	}
	w.mu.Lock()
	n := len(w.tasks)
	w.mu.Unlock()
	if n != 0 {
		t.Fatalf("an assignment after StopAll made %d task(s)", n)
	}
}

// TestSameGenerationAnotherConfigRestarts: an assignment at the generation
// a task runs, with the same config hash, only sets its paused flag; with
// another config hash it is another instance, and the task restarts with
// it. (A restarted leader can issue a number its predecessor issued but
// never recorded: it does not adopt generations it cannot know of.)
func TestSameGenerationAnotherConfigRestarts(t *testing.T) {
	w := NewWorker(Config{Registry: plugins.Builtin()})
	ctx := context.Background()
	defer w.StopAll(ctx)
	id := api.TaskID{Connector: "c", Task: 0}
	a := wire.TaskAssignment{ID: id, Generation: 7, ConfigHash: "h1", ConnectorConfig: map[string]string{"connector.class": "not.installed"}}
	instance := func() *task {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.tasks[id]
	}
	w.Assign(ctx, 1, []wire.TaskAssignment{a})
	first := instance()
	for _, tc := range []struct {
		name    string
		change  func(*wire.TaskAssignment)
		restart bool
	}{
		{"paused flag", func(a *wire.TaskAssignment) { a.Paused = true }, false},
		{"same again", func(*wire.TaskAssignment) {}, false},
		{"another config", func(a *wire.TaskAssignment) { a.ConfigHash = "h2" }, true},
	} {
		tc.change(&a)
		w.Assign(ctx, 1, []wire.TaskAssignment{a})
		now := instance()
		if restarted := now != first; restarted != tc.restart {
			t.Errorf("%s: restarted %v, want %v", tc.name, restarted, tc.restart)
		}
		if got := w.Running(); len(got) != 1 || got[0].ConfigHash != a.ConfigHash || got[0].Generation != 7 {
			t.Errorf("%s: running %+v, want one instance at generation 7 with hash %s", tc.name, got, a.ConfigHash)
		}
		first = now
	}
}

// TestOlderCommandsNeverActOnANewerInstance: a revoke or an assignment of
// the task's own term but an older generation — delayed, or replayed by
// anyone who recorded it — neither stops nor replaces the instance a newer
// assignment started; one of a newer term still does.
func TestOlderCommandsNeverActOnANewerInstance(t *testing.T) {
	w := NewWorker(Config{Registry: plugins.Builtin()})
	ctx := context.Background()
	defer w.StopAll(ctx)
	id := api.TaskID{Connector: "c", Task: 0}
	cfg := map[string]string{"connector.class": "not.installed"}
	instance := func() *task {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.tasks[id]
	}
	w.ObserveIssued(5, 3)
	w.Assign(ctx, 5, []wire.TaskAssignment{{ID: id, Generation: 3, ConfigHash: "h", ConnectorConfig: cfg}})
	w.ObserveIssued(5, 8)
	w.Assign(ctx, 5, []wire.TaskAssignment{{ID: id, Generation: 8, ConfigHash: "h", ConnectorConfig: cfg}})
	newer := instance()
	if newer == nil || newer.generation != 8 {
		t.Fatalf("running %+v, want generation 8", w.Running())
	}
	// The revoke that stopped generation 3, replayed.
	if stopped, _ := w.Revoke(ctx, 5, 3, []api.TaskID{id}); len(stopped) != 0 {
		t.Errorf("a revoke at generation 3 stopped %v", stopped)
	}
	// The assignment of generation 3, replayed.
	w.Assign(ctx, 5, []wire.TaskAssignment{{ID: id, Generation: 3, ConfigHash: "h", ConnectorConfig: cfg}})
	if got := instance(); got != newer {
		t.Fatalf("an older command acted on the instance of generation 8: now %+v", w.Running())
	}
	// An instance at a generation its leader never said it issued (forged
	// by whoever holds the leader's key) is no instance of the leader's:
	// the leader's own, lower, assignment replaces it.
	w.Assign(ctx, 5, []wire.TaskAssignment{{ID: id, Generation: 999, ConfigHash: "h", ConnectorConfig: cfg}})
	w.Assign(ctx, 5, []wire.TaskAssignment{{ID: id, Generation: 8, ConfigHash: "h", ConnectorConfig: cfg}})
	if got := w.Running(); len(got) != 1 || got[0].Generation != 8 {
		t.Fatalf("after a forged generation, the leader's assignment: running %+v, want generation 8", got)
	}
	// A newer term's revoke stops it whatever its generation.
	if stopped, _ := w.Revoke(ctx, 6, 1, []api.TaskID{id}); !reflect.DeepEqual(stopped, []api.TaskID{id}) {
		t.Fatalf("a revoke of term 6 stopped %v, want the task", stopped)
	}
}

// TestFenceVoidsItsAssignments: a fenced agent's tasks stop, and an
// assignment of them that was still on its way (queued while the process
// was paused) is refused rather than starting them again; a newer one
// starts them.
func TestFenceVoidsItsAssignments(t *testing.T) {
	w := NewWorker(Config{Registry: plugins.Builtin()})
	ctx := context.Background()
	defer w.StopAll(ctx)
	id := api.TaskID{Connector: "c", Task: 0}
	a := wire.TaskAssignment{ID: id, Generation: 4, ConfigHash: "h", ConnectorConfig: map[string]string{"connector.class": "not.installed"}}
	w.Assign(ctx, 2, []wire.TaskAssignment{a})
	if stopped := w.Fence(ctx); !reflect.DeepEqual(stopped, []api.TaskID{id}) {
		t.Fatalf("fence stopped %v", stopped)
	}
	if refused := w.Assign(ctx, 2, []wire.TaskAssignment{a}); !reflect.DeepEqual(refused, []api.TaskID{id}) {
		t.Fatalf("the queued assignment after a fence: refused %v, want the task", refused)
	}
	a.Generation = 5
	if refused := w.Assign(ctx, 2, []wire.TaskAssignment{a}); len(refused) != 0 {
		t.Fatalf("a newer assignment after a fence was refused: %v", refused)
	}
	if got := w.Running(); len(got) != 1 || got[0].Generation != 5 {
		t.Fatalf("running %+v, want generation 5", got)
	}
}
