package metrics

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestStateCollectorPublishesEveryState(t *testing.T) {
	states := []ConnectorState{{Name: "a", State: "RUNNING", Tasks: map[int]string{0: "FAILED"}}}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewStateCollector(func() []ConnectorState { return states }))

	want := `
# HELP sluice_connector_state 1 for the state the connector is in, 0 for the others.
# TYPE sluice_connector_state gauge
sluice_connector_state{connector="a",state="FAILED"} 0
sluice_connector_state{connector="a",state="PAUSED"} 0
sluice_connector_state{connector="a",state="RESTARTING"} 0
sluice_connector_state{connector="a",state="RUNNING"} 1
sluice_connector_state{connector="a",state="STOPPED"} 0
sluice_connector_state{connector="a",state="UNASSIGNED"} 0
# HELP sluice_task_state 1 for the state the task is in, 0 for the others.
# TYPE sluice_task_state gauge
sluice_task_state{connector="a",state="FAILED",task="0"} 1
sluice_task_state{connector="a",state="PAUSED",task="0"} 0
sluice_task_state{connector="a",state="RESTARTING",task="0"} 0
sluice_task_state{connector="a",state="RUNNING",task="0"} 0
sluice_task_state{connector="a",state="STOPPED",task="0"} 0
sluice_task_state{connector="a",state="UNASSIGNED",task="0"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	// A connector gone from the view is gone from the scrape.
	states = nil
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 0 {
		t.Fatalf("after the connector went: %d series (%v), want 0", n, err)
	}
}

func TestLagCollectorCachesReadings(t *testing.T) {
	var reads atomic.Int32
	lag := int64(7)
	c := NewLagCollector(func(ctx context.Context) []SinkLag {
		reads.Add(1)
		if _, ok := ctx.Deadline(); !ok {
			t.Error("a lag reading without a deadline")
		}
		return []SinkLag{{Connector: "s", Partitions: []PartitionLag{{Topic: "t", Partition: 1, Lag: lag}}}}
	}, time.Minute, time.Second)
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)

	want := func(v string) string {
		return `
# HELP sluice_sink_consumer_lag ` + lagHelp + `
# TYPE sluice_sink_consumer_lag gauge
sluice_sink_consumer_lag{connector="s",partition="1",topic="t"} ` + v + "\n"
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want("7"))); err != nil {
		t.Fatal(err)
	}
	lag = 0
	now = now.Add(30 * time.Second) // within the refresh interval: the last reading
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want("7"))); err != nil {
		t.Fatal(err)
	}
	if n := reads.Load(); n != 1 {
		t.Fatalf("%d readings within one interval, want 1", n)
	}
	now = now.Add(31 * time.Second)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want("0"))); err != nil {
		t.Fatal(err)
	}
	if n := reads.Load(); n != 2 {
		t.Fatalf("%d readings after the interval, want 2", n)
	}
}

func TestLeadershipCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	l := Leadership{Leading: true, Term: 4, Agents: 3}
	reg.MustRegister(NewLeadershipCollector(func() Leadership { return l }))
	want := `
# HELP sluice_coordinator_agents Agents registered with this coordinator and holding a lease; always 0 on a follower, with which agents do not register.
# TYPE sluice_coordinator_agents gauge
sluice_coordinator_agents 3
# HELP sluice_coordinator_leader 1 while this coordinator leads the cluster, 0 otherwise.
# TYPE sluice_coordinator_leader gauge
sluice_coordinator_leader 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "sluice_coordinator_agents", "sluice_coordinator_leader"); err != nil {
		t.Fatal(err)
	}
	l = Leadership{Term: 5}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(strings.NewReplacer("agents 3\n", "agents 0\n", "leader 1\n", "leader 0\n").Replace(want)),
		"sluice_coordinator_agents", "sluice_coordinator_leader"); err != nil {
		t.Fatal(err)
	}
}

// TestSeriesFromTheStart: before anything happened, the offsets
// histogram has a series per kind and a declared NATS command its error
// counter and latency histogram, all at 0, so that a dashboard's panels
// over them show 0 rather than "No data".
func TestSeriesFromTheStart(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.DeclareNATSKind("task.assign")
	for vec, want := range map[prometheus.Collector]int{m.offsetsDur: 2, m.natsDur: 1, m.natsErrs: 1, m.offsetsOps: 4} {
		if n := testutil.CollectAndCount(vec); n != want {
			t.Errorf("%d series before anything happened, want %d", n, want)
		}
	}
	if v := testutil.ToFloat64(m.natsErrs.WithLabelValues("task.assign")); v != 0 {
		t.Errorf("a declared kind's errors = %v, want 0", v)
	}
}

func TestObserve(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.ObserveOffsets(KindAlter, time.Second, nil)
	m.ObserveOffsets(KindReset, time.Second, errors.New("refused"))
	m.ObserveNATS("task.assign", time.Millisecond, nil)
	m.ObserveNATS("task.assign", time.Millisecond, errors.New("no responder"))
	m.ObserveREST("health", "GET", 503, time.Millisecond)
	want := `
# HELP sluice_nats_request_errors_total NATS requests of the leader to an agent that failed (no responder, timeout, or an error answer), by the subject's command.
# TYPE sluice_nats_request_errors_total counter
sluice_nats_request_errors_total{kind="task.assign"} 1
# HELP sluice_offsets_operations_total Offsets operations (REST alter, reset, delete with reset_offsets, create with initial_offsets) by kind and result.
# TYPE sluice_offsets_operations_total counter
sluice_offsets_operations_total{kind="alter",result="error"} 0
sluice_offsets_operations_total{kind="alter",result="success"} 1
sluice_offsets_operations_total{kind="reset",result="error"} 1
sluice_offsets_operations_total{kind="reset",result="success"} 0
# HELP sluice_rest_requests_total REST requests answered to clients of this coordinator, by route (operation), method and status code.
# TYPE sluice_rest_requests_total counter
sluice_rest_requests_total{code="503",method="GET",route="health"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"sluice_nats_request_errors_total", "sluice_offsets_operations_total", "sluice_rest_requests_total"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(m.natsDur); n != 1 {
		t.Errorf("%d NATS duration series, want 1", n)
	}

	// A second coordinator on the same registry shares the series instead
	// of failing to register.
	m2, err := New(reg)
	if err != nil {
		t.Fatalf("a second coordinator on one registry: %v", err)
	}
	m2.ObserveOffsets(KindAlter, time.Second, nil)
	if v := testutil.ToFloat64(m.offsetsOps.WithLabelValues(KindAlter, ResultSuccess)); v != 2 {
		t.Errorf("shared alter successes = %v, want 2", v)
	}
	unregister, err := m2.Register(NewLeadershipCollector(func() Leadership { return Leadership{} }))
	if err != nil {
		t.Fatal(err)
	}
	unregister()

	// A nil *Metrics records nothing, and does not panic.
	var none *Metrics
	none.ObserveOffsets(KindAlter, 0, nil)
	none.ObserveREST("x", "GET", 200, 0)
	none.ObserveNATS("x", 0, nil)
	none.ObserveReconcile(0)
	if u, err := none.Register(NewLeadershipCollector(nil)); err != nil || u == nil {
		t.Errorf("nil Metrics' Register: %v", err)
	}
}
