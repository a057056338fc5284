// Package metrics is the coordinator's Prometheus instrumentation: the
// counters and histograms the herder, the REST transport and the agent
// client update as they work, and the collectors that read connector and
// task states and sink consumer lag when the registry is scraped.
// docs/observability.md lists every series.
//
//	REST request ─► httpapi ─► Metrics.ObserveREST
//	offsets op   ─► herder  ─► Metrics.ObserveOffsets
//	NATS command ─► agentrpc ─► Metrics.ObserveNATS
//	scrape ─► StateCollector (status view) + LagCollector (Kafka, cached) + the rest
package metrics

import (
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace starts every Sluice series.
const Namespace = "sluice"

// Offsets operation kinds and results (sluice_offsets_operations_total).
const (
	KindAlter     = "alter"
	KindReset     = "reset"
	ResultSuccess = "success"
	ResultError   = "error"
)

// Metrics are the coordinator's own series on one registry. A nil
// *Metrics records nothing, so that the parts it instruments need no
// checks when built without one (unit tests).
type Metrics struct {
	reg prometheus.Registerer

	offsetsOps *prometheus.CounterVec
	offsetsDur *prometheus.HistogramVec
	restReqs   *prometheus.CounterVec
	restDur    *prometheus.HistogramVec
	reconcile  prometheus.Histogram
	natsDur    *prometheus.HistogramVec
	natsErrs   *prometheus.CounterVec
	agentsLost *prometheus.CounterVec
	ignored    *prometheus.CounterVec
}

// Why the leader took an agent for lost (sluice_agents_lost_total).
const (
	// LostLease: no register or heartbeat within the agent lease.
	LostLease = "lease"
	// LostConnection: NATS found nobody at the agent's presence endpoint,
	// twice in a row: its connection closed.
	LostConnection = "connection"
)

// New registers the coordinator's series on reg. Several coordinators of
// one process may share a registry: the second finds the first's series
// and updates them too (which sums their counters and leaves the gauges to
// whichever wrote last; give each coordinator its own registry to tell them
// apart).
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{reg: reg}
	var errs []error
	reg1 := func(c prometheus.Collector) prometheus.Collector {
		got, err := register(reg, c)
		errs = append(errs, err)
		return got
	}
	m.offsetsOps = reg1(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "offsets_operations_total",
		Help: "Offsets operations (REST alter, reset, delete with reset_offsets, create with initial_offsets) by kind and result.",
	}, []string{"kind", "result"})).(*prometheus.CounterVec)
	m.offsetsDur = reg1(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "offsets_operation_duration_seconds",
		Help:    "Time an offsets operation took, from its checks to the agent's answer.",
		Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"kind"})).(*prometheus.HistogramVec)
	m.restReqs = reg1(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "rest_requests_total",
		Help: "REST requests answered to clients of this coordinator, by route (operation), method and status code.",
	}, []string{"route", "method", "code"})).(*prometheus.CounterVec)
	m.restDur = reg1(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "rest_request_duration_seconds",
		Help:    "Time to answer a REST request, forwarding to the leader included.",
		Buckets: prometheus.DefBuckets,
	}, []string{"route", "method"})).(*prometheus.HistogramVec)
	m.reconcile = reg1(prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "reconcile_duration_seconds",
		Help:    "Time one reconcile pass of the leader took.",
		Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	})).(prometheus.Histogram)
	m.natsDur = reg1(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "nats_request_duration_seconds",
		Help:    "Time a NATS request of the leader to an agent took, by the subject's command.",
		Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"kind"})).(*prometheus.HistogramVec)
	m.natsErrs = reg1(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "nats_request_errors_total",
		Help: "NATS requests of the leader to an agent that failed (no responder, timeout, or an error answer), by the subject's command.",
	}, []string{"kind"})).(*prometheus.CounterVec)
	m.agentsLost = reg1(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "agents_lost_total",
		Help: "Agents the leader took for lost, their tasks to be placed elsewhere, by reason: lease (no heartbeat within the agent lease) or connection (its NATS connection closed).",
	}, []string{"reason"})).(*prometheus.CounterVec)
	m.ignored = reg1(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "records_ignored_total",
		Help: "Records on Sluice's own topics (config, status, fleet, offsets history, audit) that no coordinator wrote — not signed with the coordinators' key — which this coordinator ignored, by topic.",
	}, []string{"topic"})).(*prometheus.CounterVec)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	m.agentsLost.WithLabelValues(LostLease)
	m.agentsLost.WithLabelValues(LostConnection)
	for _, k := range []string{KindAlter, KindReset} {
		// Present from the start, so that a rate() over them has a series
		// before the first operation.
		m.offsetsOps.WithLabelValues(k, ResultSuccess)
		m.offsetsOps.WithLabelValues(k, ResultError)
		m.offsetsDur.WithLabelValues(k)
	}
	return m, nil
}

// register registers c on reg, or returns the collector already registered
// in its place.
func register(reg prometheus.Registerer, c prometheus.Collector) (prometheus.Collector, error) {
	err := reg.Register(c)
	if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
		return are.ExistingCollector, nil
	}
	return c, err
}

// Register adds c, a collector of the caller's (StateCollector,
// LagCollector), to the registry; unregister removes it again. A
// collector whose series another one already serves on the registry (a
// second coordinator of the process on a shared registry) is not added,
// and unregister does nothing.
func (m *Metrics) Register(c prometheus.Collector) (unregister func(), err error) {
	if m == nil {
		return func() {}, nil
	}
	if err := m.reg.Register(c); err != nil {
		if errors.As(err, &prometheus.AlreadyRegisteredError{}) {
			return func() {}, nil
		}
		return nil, err
	}
	return func() { m.reg.Unregister(c) }, nil
}

// ObserveOffsets records one offsets operation of kind that took took and
// ended with err.
func (m *Metrics) ObserveOffsets(kind string, took time.Duration, err error) {
	if m == nil {
		return
	}
	result := ResultSuccess
	if err != nil {
		result = ResultError
	}
	m.offsetsOps.WithLabelValues(kind, result).Inc()
	m.offsetsDur.WithLabelValues(kind).Observe(took.Seconds())
}

// ObserveREST records one REST request answered to a client.
func (m *Metrics) ObserveREST(route, method string, code int, took time.Duration) {
	if m == nil {
		return
	}
	m.restReqs.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
	m.restDur.WithLabelValues(route, method).Observe(took.Seconds())
}

// ObserveReconcile records one reconcile pass.
func (m *Metrics) ObserveReconcile(took time.Duration) {
	if m == nil {
		return
	}
	m.reconcile.Observe(took.Seconds())
}

// RecordIgnored counts one record of topic that no coordinator wrote.
func (m *Metrics) RecordIgnored(topic string) {
	if m == nil {
		return
	}
	m.ignored.WithLabelValues(topic).Inc()
}

// DeclareSignedTopics makes the ignored-records counter of each topic
// exist, at 0.
func (m *Metrics) DeclareSignedTopics(topics ...string) {
	if m == nil {
		return
	}
	for _, t := range topics {
		m.ignored.WithLabelValues(t)
	}
}

// AgentLost counts one agent taken for lost for reason (Lost…).
func (m *Metrics) AgentLost(reason string) {
	if m == nil {
		return
	}
	m.agentsLost.WithLabelValues(reason).Inc()
}

// DeclareNATSKind makes kind's NATS error counter and latency histogram
// exist, at 0.
func (m *Metrics) DeclareNATSKind(kind string) {
	if m == nil {
		return
	}
	m.natsErrs.WithLabelValues(kind)
	m.natsDur.WithLabelValues(kind)
}

// ObserveNATS records one NATS request of kind (the subject's command,
// e.g. task.assign) that took took and failed with err, if not nil.
func (m *Metrics) ObserveNATS(kind string, took time.Duration, err error) {
	if m == nil {
		return
	}
	m.natsDur.WithLabelValues(kind).Observe(took.Seconds())
	if err != nil {
		m.natsErrs.WithLabelValues(kind).Inc()
	}
}
