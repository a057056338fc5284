package metrics

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// series gathers reg and returns, per metric name, its series keyed by
// their labels rendered as agent/connector/task.
func series(t *testing.T, reg *prometheus.Registry) map[string]map[string]*dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]map[string]*dto.Metric{}
	for _, mf := range mfs {
		byLabels := map[string]*dto.Metric{}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			byLabels[l[LabelAgent]+"/"+l[LabelConnector]+"/"+l[LabelTask]] = m
		}
		out[mf.GetName()] = byLabels
	}
	return out
}

func fixedSession(s Session) func() Session { return func() Session { return s } }

func newAgent(t *testing.T, reg *prometheus.Registry, id string, s Session) *Agent {
	t.Helper()
	a := New(reg, id, fixedSession(s))
	if err := a.Register(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func TestTaskCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := newAgent(t, reg, "a1", Session{})
	src, sink := a.Task("src", 0), a.Task("sink", 1)
	src.Polled(3)
	src.Polled(2)
	src.Polled(0)
	src.Written(4)
	src.Failed(1)
	sink.Put(7)
	src.Batch(20 * time.Millisecond)
	sink.Batch(time.Second)

	got := series(t, reg)
	for _, c := range []struct {
		name, key string
		want      float64
	}{
		{"sluice_task_records_polled_total", "a1/src/0", 5},
		{"sluice_task_records_written_total", "a1/src/0", 4},
		{"sluice_task_records_failed_total", "a1/src/0", 1},
		{"sluice_task_records_put_total", "a1/sink/1", 7},
	} {
		m := got[c.name][c.key]
		if m == nil {
			t.Fatalf("%s{%s} missing; have %v", c.name, c.key, got[c.name])
		}
		if v := m.GetCounter().GetValue(); v != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.key, v, c.want)
		}
	}
	h := got["sluice_task_batch_duration_seconds"]["a1/src/0"].GetHistogram()
	if h.GetSampleCount() != 1 || math.Abs(h.GetSampleSum()-0.02) > 1e-9 {
		t.Errorf("source batch histogram: count %d sum %v", h.GetSampleCount(), h.GetSampleSum())
	}
}

func TestCommit(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := newAgent(t, reg, "a1", Session{})
	tk := a.Task("src", 0)
	at := time.Unix(1_700_000_000, 500_000_000)
	tk.Commit(30*time.Millisecond, at, nil)
	tk.Commit(time.Second, at.Add(time.Minute), errors.New("fenced"))

	got := series(t, reg)
	if v := got["sluice_task_last_commit_timestamp_seconds"]["a1/src/0"].GetGauge().GetValue(); v != 1_700_000_000.5 {
		t.Errorf("last commit = %v, want the successful commit's time", v)
	}
	if v := got["sluice_task_offset_commit_failures_total"]["a1/src/0"].GetCounter().GetValue(); v != 1 {
		t.Errorf("commit failures = %v, want 1", v)
	}
	if n := got["sluice_task_offset_commit_duration_seconds"]["a1/src/0"].GetHistogram().GetSampleCount(); n != 2 {
		t.Errorf("commit durations observed = %d, want 2 (failures included)", n)
	}
}

// TestDelete checks that a task's series go when it leaves the agent, and
// that another task's stay.
func TestDelete(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := newAgent(t, reg, "a1", Session{})
	gone, kept := a.Task("gone", 0), a.Task("kept", 0)
	for _, tk := range []*Task{gone, kept} {
		tk.Polled(1)
		tk.Put(1)
		tk.Failed(1)
		tk.Written(1)
		tk.Batch(time.Millisecond)
		tk.Commit(time.Millisecond, time.Now(), nil)
		tk.Commit(time.Millisecond, time.Now(), errors.New("x"))
	}
	gone.Delete()
	for name, byLabels := range series(t, reg) {
		if _, ok := byLabels["a1/gone/0"]; ok {
			t.Errorf("%s still has the deleted task", name)
		}
		if len(name) > 11 && name[:11] == "sluice_task" {
			if _, ok := byLabels["a1/kept/0"]; !ok {
				t.Errorf("%s lost the other task", name)
			}
		}
	}
}

// TestAgentsShareRegistry checks two agents in one registry (sluice dev):
// each its own series, one family per name; a second agent of the same id
// is refused without a panic, and its Close leaves the first one's series.
func TestAgentsShareRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	a1 := newAgent(t, reg, "a1", Session{})
	a2 := newAgent(t, reg, "a2", Session{})
	a1.Task("c", 0).Polled(1)
	a2.Task("c", 0).Polled(2)
	got := series(t, reg)["sluice_task_records_polled_total"]
	if got["a1/c/0"].GetCounter().GetValue() != 1 || got["a2/c/0"].GetCounter().GetValue() != 2 {
		t.Fatalf("polled per agent: %v", got)
	}

	dup := New(reg, "a1", fixedSession(Session{}))
	var already prometheus.AlreadyRegisteredError
	if err := dup.Register(); !errors.As(err, &already) {
		t.Fatalf("second agent a1: %v, want AlreadyRegisteredError", err)
	}
	dup.Close()
	if series(t, reg)["sluice_task_records_polled_total"]["a1/c/0"] == nil {
		t.Fatal("closing the refused duplicate removed a1's series")
	}
	if _, ok := series(t, reg)["sluice_agent_registered"]["a1//"]; !ok {
		t.Fatal("closing the refused duplicate removed a1's agent gauges")
	}

	a2.Close()
	for name, byLabels := range series(t, reg) {
		for key := range byLabels {
			if key[:3] == "a2/" {
				t.Errorf("%s{%s} left after a2 closed", name, key)
			}
		}
	}
}

func TestSessionGauges(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name                     string
		s                        Session
		registered, lease, tasks float64
		ageAtLeast, ageBelow     float64
	}{
		{name: "before registering", s: Session{}, ageAtLeast: math.Inf(1), ageBelow: math.Inf(1)},
		{name: "acknowledged", s: Session{Acked: now.Add(-2 * time.Second), Lease: 10 * time.Second, TasksRunning: 3},
			registered: 1, lease: 10, tasks: 3, ageAtLeast: 2, ageBelow: 60},
		{name: "lease ran out", s: Session{Acked: now.Add(-11 * time.Second), Lease: 10 * time.Second},
			registered: 0, lease: 10, ageAtLeast: 11, ageBelow: 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			newAgent(t, reg, "a1", tc.s)
			got := series(t, reg)
			gauge := func(name string) float64 {
				m := got[name]["a1//"]
				if m == nil {
					t.Fatalf("%s missing", name)
				}
				return m.GetGauge().GetValue()
			}
			if v := gauge("sluice_agent_registered"); v != tc.registered {
				t.Errorf("registered = %v, want %v", v, tc.registered)
			}
			if v := gauge("sluice_agent_lease_seconds"); v != tc.lease {
				t.Errorf("lease = %v, want %v", v, tc.lease)
			}
			if v := gauge("sluice_agent_tasks_running"); v != tc.tasks {
				t.Errorf("tasks running = %v, want %v", v, tc.tasks)
			}
			if v := gauge("sluice_agent_heartbeat_age_seconds"); v < tc.ageAtLeast || v > tc.ageBelow || (math.IsInf(tc.ageBelow, 1) && !math.IsInf(v, 1)) {
				t.Errorf("heartbeat age = %v, want in [%v, %v]", v, tc.ageAtLeast, tc.ageBelow)
			}
		})
	}
}

// TestNilIsOff checks that an agent without metrics records nothing and
// does not fail.
func TestNilIsOff(t *testing.T) {
	var a *Agent
	tk := a.Task("c", 0)
	tk.Polled(1)
	tk.Written(1)
	tk.Put(1)
	tk.Failed(1)
	tk.Batch(time.Second)
	tk.Commit(time.Second, time.Now(), nil)
	tk.Delete()
	a.Close()
}

// BenchmarkTaskBatch measures what a task pays per batch of records.
func BenchmarkTaskBatch(b *testing.B) {
	a := New(prometheus.NewRegistry(), "a1", fixedSession(Session{}))
	tk := a.Task("c", 0)
	for b.Loop() {
		tk.Polled(500)
		tk.Written(500)
		tk.Batch(time.Millisecond)
	}
}
