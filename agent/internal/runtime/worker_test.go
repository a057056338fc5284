package runtime

import (
	"context"
	"reflect"
	"testing"

	v1 "github.com/sluice-io/sluice/api/v1"
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
	id := v1.TaskID{Connector: "c", Task: 0}
	if stopped, _ := w.Revoke(ctx, 4, 10, []v1.TaskID{id}); !reflect.DeepEqual(stopped, []v1.TaskID{id}) {
		t.Fatalf("revoke of a task not running: stopped %v", stopped)
	}
	w.Revoke(ctx, 0, 0, []v1.TaskID{id}) // as on shutdown: voids nothing more
	for _, gen := range []int64{3, 10} {
		refused := w.Assign(ctx, 4, []v1.TaskAssignment{{ID: id, Generation: gen}})
		if !reflect.DeepEqual(refused, []v1.TaskID{id}) {
			t.Errorf("assignment of generation %d after a revoke at 10: refused %v, want the task", gen, refused)
		}
	}
	if got := w.Running(); len(got) != 0 {
		t.Fatalf("a refused assignment started a task: %+v", got)
	}
}
