package fleetlist

import (
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/records"
)

func running(n int) []Task {
	ts := make([]Task, n)
	for i := range ts {
		ts[i] = Task{ID: i, State: api.StateRunning, WorkerID: "agent-1"}
	}
	return ts
}

func with(ts []Task, id int, state, trace string) []Task {
	ts[id].State, ts[id].Trace = state, trace
	return ts
}

func lagOf(n int64) *int64 { return &n }

// TestJudge: each rule of docs/console.md's "Health", in its order, with
// the reason a person reads.
func TestJudge(t *testing.T) {
	started, paused, stopped := records.TargetStarted, records.TargetPaused, records.TargetStopped
	cases := []struct {
		name           string
		snap           Snapshot
		health, reason string
	}{
		{"stopped wins over a failure", Snapshot{Target: stopped, State: api.StateFailed}, api.HealthStopped, "stopped"},
		{"connector failed", Snapshot{Target: started, State: api.StateFailed, Trace: "org.x.ConnectException: no route\n\tat a.b.C"},
			api.HealthFailed, "connector FAILED: org.x.ConnectException: no route"},
		{"every task failed", Snapshot{Target: started, State: api.StateRunning, Tasks: with(with(running(2), 0, api.StateFailed, "boom"), 1, api.StateFailed, "bang")},
			api.HealthFailed, "2 of 2 tasks FAILED: task 0: boom"},
		{"paused", Snapshot{Target: paused, State: api.StatePaused, Tasks: with(running(2), 0, api.StatePaused, "")}, api.HealthPaused, "paused"},
		{"paused with a failed task", Snapshot{Target: paused, State: api.StatePaused, Tasks: with(running(2), 1, api.StateFailed, "boom")},
			api.HealthPaused, "paused; task 1 FAILED: boom"},
		{"some tasks failed", Snapshot{Target: started, State: api.StateRunning, Tasks: with(with(running(4), 1, api.StateFailed, "x"), 3, api.StateFailed, "")},
			api.HealthDegraded, "2 of 4 tasks FAILED: task 1: x"},
		{"failed beats unassigned", Snapshot{Target: started, State: api.StateRunning, Tasks: with(with(running(3), 0, api.StateUnassigned, "y"), 2, api.StateFailed, "")},
			api.HealthDegraded, "task 2 FAILED"},
		{"connector without status", Snapshot{Target: started, Tasks: running(1)}, api.HealthUnassigned, "connector has no status yet"},
		{"connector unassigned", Snapshot{Target: started, State: api.StateUnassigned, Trace: "No agent is registered with the coordinator"},
			api.HealthUnassigned, "connector unassigned: No agent is registered with the coordinator"},
		{"a task unassigned", Snapshot{Target: started, State: api.StateRunning, Tasks: with(running(4), 1, api.StateUnassigned, "No live agent has the plugin org.x.Y")},
			api.HealthUnassigned, "task 1 unassigned: No live agent has the plugin org.x.Y"},
		{"a task without status", Snapshot{Target: started, State: api.StateRunning, Tasks: with(running(2), 1, "", "")},
			api.HealthUnassigned, "task 1 unassigned: no status yet"},
		{"two tasks unassigned", Snapshot{Target: started, State: api.StateRunning, Tasks: with(with(running(3), 0, api.StateUnassigned, "cordoned"), 2, "", "")},
			api.HealthUnassigned, "2 of 3 tasks unassigned: task 0: cordoned"},
		{"a task restarting", Snapshot{Target: started, State: api.StateRunning, Tasks: with(running(2), 0, api.StateRestarting, "")},
			api.HealthDegraded, "task 0 RESTARTING"},
		{"the connector restarting, a task resuming", Snapshot{Target: started, State: api.StateRestarting, Tasks: with(running(2), 1, api.StatePaused, "")},
			api.HealthDegraded, "connector RESTARTING; task 1 PAUSED"},
		{"sink lag at the threshold", Snapshot{Target: started, State: api.StateRunning, Tasks: running(1), Lag: lagOf(1000)},
			api.HealthDegraded, "sink lag 1000 records"},
		{"sink lag below it", Snapshot{Target: started, State: api.StateRunning, Tasks: running(1), Lag: lagOf(999)}, api.HealthHealthy, "1 of 1 tasks RUNNING"},
		{"healthy", Snapshot{Target: started, State: api.StateRunning, Tasks: running(4)}, api.HealthHealthy, "4 of 4 tasks RUNNING"},
		{"healthy without tasks", Snapshot{Target: started, State: api.StateRunning}, api.HealthHealthy, "RUNNING, no tasks"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, r := Judge(c.snap, 1000)
			if h != c.health || r != c.reason {
				t.Fatalf("Judge = %s %q, want %s %q", h, r, c.health, c.reason)
			}
		})
	}
	// No threshold: lag never degrades.
	if h, _ := Judge(Snapshot{Target: started, State: api.StateRunning, Lag: lagOf(1 << 40)}, 0); h != api.HealthHealthy {
		t.Fatalf("lag without a threshold: %s", h)
	}
}

// TestReasonQuotesOneShortLine: a reason quotes the first line of a trace,
// cut at a rune boundary.
func TestReasonQuotesOneShortLine(t *testing.T) {
	trace := "\n  " + strings.Repeat("é", 200) + "\nsecond line"
	_, r := Judge(Snapshot{Target: records.TargetStarted, State: api.StateFailed, Trace: trace}, 0)
	if !strings.HasPrefix(r, "connector FAILED: éé") || !strings.HasSuffix(r, "…") || strings.Contains(r, "second") ||
		len(r) > len("connector FAILED: ")+maxTraceReason+len("…") {
		t.Fatalf("reason %q", r)
	}
	if r != strings.ToValidUTF8(r, "?") {
		t.Fatalf("reason is not valid UTF-8: %q", r)
	}
}
