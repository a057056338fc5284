package connectors

import (
	"context"
	"errors"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// statusFixture is a running connector c with a failed task 0 and a
// running task 1 on agent-1, and its topics.
func statusFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	f.create(t, "c", sourceConfig("t"), "")
	ctx := context.Background()
	if err := f.mem.Apply(ctx, store.PutTaskConfigs{Name: "c", Tasks: []map[string]string{{}, {}}},
		store.PutConnectorStatus{Name: "c", State: api.StateRunning, Worker: "coordinator-1:8083"},
		store.PutTaskStatus{Connector: "c", Task: 0, State: api.StateFailed, Trace: "boom", Worker: "agent-1", Generation: 3},
		store.PutTaskStatus{Connector: "c", Task: 1, State: api.StateRunning, Worker: "agent-1", Generation: 4},
		store.MarkTopicUse{Connector: "c", Task: 0, Topic: "t"}); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestStatusReads: a connector's and a task's status, with the plugin's
// version; an unknown one is a 404.
func TestStatusReads(t *testing.T) {
	ctx := context.Background()
	f := statusFixture(t)
	st, err := f.s.ConnectorStatus(ctx, "c")
	if err != nil || st.Connector.State != api.StateRunning || st.Type != api.TypeSource || len(st.Tasks) != 2 ||
		st.Tasks[0].State != api.StateFailed || st.Tasks[0].Trace != "boom" || st.Tasks[0].Version == "" {
		t.Errorf("status %+v %v", st, err)
	}
	_, err = f.s.ConnectorStatus(ctx, "d")
	wantErr(t, err, api.CodeNotFound, "No status found for connector d")
	ts, err := f.s.TaskStatus(ctx, "c", 1)
	if err != nil || ts.State != api.StateRunning || ts.WorkerID != "agent-1" {
		t.Errorf("task status %+v %v", ts, err)
	}
	_, err = f.s.TaskStatus(ctx, "c", 2)
	wantErr(t, err, api.CodeNotFound, "No status found for task c-2")
	exp, _ := f.s.ExpandConnectors(ctx, true, true)
	if e := exp["c"]; e.Info == nil || e.Status == nil || len(exp) != 1 {
		t.Errorf("expanded %+v", exp)
	}
	topics, _ := f.s.ConnectorTopics(ctx, "c")
	if got := topics["c"].Topics; len(got) != 1 || got[0] != "t" {
		t.Errorf("topics %v", got)
	}
	if err := f.s.ResetConnectorTopics(ctx, "c"); err != nil || len(f.statuses.written) != 1 ||
		f.statuses.written[0].Key != records.TopicStatusKey("c", "t") || f.statuses.written[0].Value != nil {
		t.Errorf("reset topics: %v, wrote %+v", err, f.statuses.written)
	}
	f.statuses.fail = store.ErrNotLeader
	wantErr(t, f.s.ResetConnectorTopics(ctx, "c"), api.CodeConflict, StaleMessage)
}

// TestRestartConnector: which of the connector and its tasks a restart
// restarts, the RESTARTING states it shows and writes, and a failed write
// that still restarts.
func TestRestartConnector(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name                     string
		includeTasks, onlyFailed bool
		connector                bool
		tasks                    []int
	}{
		{name: "tasks too", includeTasks: true, connector: true, tasks: []int{0, 1}},
		{name: "failed tasks", includeTasks: true, onlyFailed: true, tasks: []int{0}},
		// The connector is RUNNING: only-failed restarts nothing of it.
		{name: "failed connector only", onlyFailed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := statusFixture(t)
			st, err := f.s.RestartConnector(ctx, "c", tc.includeTasks, tc.onlyFailed)
			if err != nil || st == nil {
				t.Fatalf("%v %v", st, err)
			}
			if (st.Connector.State == api.StateRestarting) != tc.connector || (len(f.runner.instances) == 1) != tc.connector {
				t.Errorf("connector %s, instances restarted %v", st.Connector.State, f.runner.instances)
			}
			if len(f.runner.tasks) != len(tc.tasks) {
				t.Fatalf("restarted tasks %v, want %v", f.runner.tasks, tc.tasks)
			}
			for i, n := range tc.tasks {
				if f.runner.tasks[i].Task != n || st.Tasks[n].State != api.StateRestarting {
					t.Errorf("task %d: restarted %v, shown %s", n, f.runner.tasks, st.Tasks[n].State)
				}
			}
			want := len(tc.tasks)
			if tc.connector {
				want++
			}
			if len(f.statuses.written) != want {
				t.Errorf("wrote %d status records, want %d", len(f.statuses.written), want)
			}
		})
	}
	f := statusFixture(t)
	f.statuses.fail = errors.New("status topic away")
	_, err := f.s.RestartConnector(ctx, "c", true, false)
	wantErr(t, err, api.CodeInternal, "Failed to restart connector c: status topic away")
	if len(f.runner.tasks) != 2 || len(f.runner.instances) != 1 {
		t.Errorf("a failed status write kept the restart from happening: tasks %v, instances %v", f.runner.tasks, f.runner.instances)
	}
}
