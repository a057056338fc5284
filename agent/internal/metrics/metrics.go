// Package metrics holds an agent's Prometheus series: per task, what it
// moved and how its batches and offset commits went; per agent, its session
// with the leader and how many tasks it runs.
//
// Every series carries the label agent. Several agents may share a process
// and its registry (sluice dev), so each agent registers collectors of its
// own, the agent's id a constant label on them, and unregisters them when it
// stops. A task's series exist while the task runs on the agent: Task.Delete
// removes them when the agent lets the task go.
//
// The task loop pays little per record: Task resolves its label children
// once, and the runners add whole batches.
package metrics

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/connect"
)

// Label names of the agent's series.
const (
	LabelAgent     = "agent"
	LabelConnector = "connector"
	LabelTask      = "task"
)

// Session is what the agent's session with the leader says right now.
type Session struct {
	// Acked is when the last register or heartbeat the leader answered was
	// sent; zero before the agent registered.
	Acked time.Time
	// Lease is the lease the leader granted (zero before registering).
	Lease time.Duration
	// TasksRunning counts the agent's tasks in state RUNNING.
	TasksRunning int
}

// Registered reports whether the leader acknowledged the agent within its
// lease, as of now.
func (s Session) Registered(now time.Time) bool {
	return !s.Acked.IsZero() && now.Sub(s.Acked) <= s.Lease
}

// Agent is one agent's series.
type Agent struct {
	reg        prometheus.Registerer
	id         string
	registered bool
	collectors []prometheus.Collector

	polled, written, put, failed *prometheus.CounterVec
	commitFailures               *prometheus.CounterVec
	batch, commit                *prometheus.HistogramVec
	lastCommit                   *prometheus.GaugeVec
	brokerUnreachable            *prometheus.GaugeVec
	// gauges are the tasks' own (connect.GaugeReporter).
	gauges *taskGauges
}

// New makes the series of agent id, to be registered with reg; session,
// called at every scrape, gives the agent-level gauges their values. Tasks
// can record before Register; nothing is served until then.
func New(reg prometheus.Registerer, id string, session func() Session) *Agent {
	constLabels := prometheus.Labels{LabelAgent: id}
	taskLabels := []string{LabelConnector, LabelTask}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: constLabels}, taskLabels)
	}
	histogram := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, ConstLabels: constLabels, Buckets: buckets}, taskLabels)
	}
	a := &Agent{
		reg:     reg,
		id:      id,
		polled:  counter("sluice_task_records_polled_total", "Records a source task's poll returned."),
		written: counter("sluice_task_records_written_total", "Records of a source task that Kafka acknowledged."),
		put:     counter("sluice_task_records_put_total", "Records a sink task handed to put."),
		failed:  counter("sluice_task_records_failed_total", "Records a task failed to convert, produce or put."),
		commitFailures: counter("sluice_task_offset_commit_failures_total",
			"Offset commits of a task that failed (source: its offsets transaction; sink: its consumer group commit)."),
		// A batch is a poll and the handing of its records to the producer,
		// or a conversion and put: milliseconds to seconds.
		batch: histogram("sluice_task_batch_duration_seconds", "Time a task took for one poll or put batch.",
			prometheus.ExponentialBuckets(0.0005, 4, 10)),
		// A commit waits for Kafka: flush, transaction, group commit.
		commit: histogram("sluice_task_offset_commit_duration_seconds", "Time a task's offset commit took, failed ones included.",
			prometheus.ExponentialBuckets(0.001, 4, 10)),
		lastCommit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sluice_task_last_commit_timestamp_seconds",
			Help: "Unix time of a task's last successful offset commit.", ConstLabels: constLabels}, taskLabels),
		brokerUnreachable: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sluice_task_broker_unreachable_seconds",
			Help:        "Seconds since a task's Kafka clients last reached a broker they failed to reach, 0 while they reach them all.",
			ConstLabels: constLabels}, taskLabels),
	}
	gauge := func(name, help string, value func(Session, time.Time) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: constLabels},
			func() float64 { return value(session(), time.Now()) })
	}
	a.gauges = &taskGauges{constLabels: constLabels, report: map[[2]string]func() []connect.Gauge{}}
	a.collectors = []prometheus.Collector{a.polled, a.written, a.put, a.failed, a.commitFailures, a.batch, a.commit, a.lastCommit, a.brokerUnreachable, a.gauges,
		gauge("sluice_agent_heartbeat_age_seconds",
			"Seconds since the agent sent the last register or heartbeat the leader acknowledged (+Inf before the first).",
			func(s Session, now time.Time) float64 {
				if s.Acked.IsZero() {
					return inf
				}
				return now.Sub(s.Acked).Seconds()
			}),
		gauge("sluice_agent_lease_seconds", "The agent lease the leader granted, in seconds (0 before registering).",
			func(s Session, _ time.Time) float64 { return s.Lease.Seconds() }),
		gauge("sluice_agent_tasks_running", "Tasks of the agent in state RUNNING.",
			func(s Session, _ time.Time) float64 { return float64(s.TasksRunning) }),
		gauge("sluice_agent_registered", "1 while the leader has acknowledged the agent within its lease, else 0.",
			func(s Session, now time.Time) float64 {
				if s.Registered(now) {
					return 1
				}
				return 0
			}),
	}
	return a
}

// Register registers the series with the registry; Close unregisters them.
func (a *Agent) Register() error {
	for i, c := range a.collectors {
		if err := a.reg.Register(c); err != nil {
			for _, done := range a.collectors[:i] {
				a.reg.Unregister(done)
			}
			var dup prometheus.AlreadyRegisteredError
			if errors.As(err, &dup) {
				return fmt.Errorf("agent %s metrics: another agent of this id already registered them in this process: %w", a.id, err)
			}
			return fmt.Errorf("agent %s metrics: %w", a.id, err)
		}
	}
	a.registered = true
	return nil
}

// inf is what the heartbeat age is before the first acknowledgement: older
// than any alert threshold.
var inf = math.Inf(1)

// Close unregisters the agent's series: a stopped agent reports nothing.
// Only what Register registered: the registry unregisters by description,
// and an agent of the same id may hold it.
func (a *Agent) Close() {
	if a == nil || !a.registered {
		return
	}
	a.registered = false
	for _, c := range a.collectors {
		a.reg.Unregister(c)
	}
}

// Task returns the series of one task, its label children resolved once.
// A nil *Agent gives a Task that records nothing.
func (a *Agent) Task(connector string, task int) *Task {
	if a == nil {
		return nil
	}
	lv := []string{connector, strconv.Itoa(task)}
	return &Task{a: a, labels: lv,
		polled: a.polled.WithLabelValues(lv...), written: a.written.WithLabelValues(lv...),
		put: a.put.WithLabelValues(lv...), failed: a.failed.WithLabelValues(lv...),
		commitFailures: a.commitFailures.WithLabelValues(lv...),
		batch:          a.batch.WithLabelValues(lv...), commit: a.commit.WithLabelValues(lv...),
		lastCommit: a.lastCommit.WithLabelValues(lv...), brokerUnreachable: a.brokerUnreachable.WithLabelValues(lv...)}
}

// Task is one task's series. Its methods are safe on a nil *Task (metrics
// off) and for concurrent use.
type Task struct {
	a                            *Agent
	labels                       []string
	polled, written, put, failed prometheus.Counter
	commitFailures               prometheus.Counter
	batch, commit                prometheus.Observer
	lastCommit                   prometheus.Gauge
	brokerUnreachable            prometheus.Gauge
}

// Polled counts n records a source's poll returned.
func (t *Task) Polled(n int) {
	if t != nil {
		add(t.polled, n)
	}
}

// Written counts n records of a source that Kafka acknowledged.
func (t *Task) Written(n int) {
	if t != nil {
		add(t.written, n)
	}
}

// Put counts n records handed to a sink's put.
func (t *Task) Put(n int) {
	if t != nil {
		add(t.put, n)
	}
}

// Failed counts n records that failed.
func (t *Task) Failed(n int) {
	if t != nil {
		add(t.failed, n)
	}
}

// Batch records how long one poll or put batch took.
func (t *Task) Batch(d time.Duration) {
	if t != nil {
		t.batch.Observe(d.Seconds())
	}
}

// Commit records an offset commit that took d and ended with err, finished
// at end.
func (t *Task) Commit(d time.Duration, end time.Time, err error) {
	if t == nil {
		return
	}
	t.commit.Observe(d.Seconds())
	if err != nil {
		t.commitFailures.Inc()
		return
	}
	t.lastCommit.Set(float64(end.UnixNano()) / 1e9)
}

// BrokerUnreachable records for how long the task's clients have not
// reached a broker (0: they reach them all).
func (t *Task) BrokerUnreachable(d time.Duration) {
	if t != nil {
		t.brokerUnreachable.Set(d.Seconds())
	}
}

// Delete removes the task's series: it no longer runs on this agent.
func (t *Task) Delete() {
	if t == nil {
		return
	}
	for _, v := range []interface {
		DeleteLabelValues(...string) bool
	}{t.a.polled, t.a.written, t.a.put, t.a.failed, t.a.commitFailures, t.a.batch, t.a.commit, t.a.lastCommit, t.a.brokerUnreachable} {
		v.DeleteLabelValues(t.labels...)
	}
	t.stopGauges()
}

func add(c prometheus.Counter, n int) {
	if n > 0 {
		c.Add(float64(n))
	}
}
