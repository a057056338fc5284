package kafkametrics

import (
	"regexp"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

// errorCounters are kprom's counters of failures, by their full name: the
// series a set makes at 0 for every broker a client connected to.
var errorCounters = map[string]bool{
	Namespace + "_" + Subsystem + "_connect_errors_total": true,
	Namespace + "_" + Subsystem + "_write_errors_total":   true,
	Namespace + "_" + Subsystem + "_read_errors_total":    true,
}

// The buffered-records gauges under their conventional names. kprom
// publishes them as …_buffered_produce_records_total and
// …_buffered_fetch_records_total, which Prometheus' conventions keep for
// counters; those stay for one release beside these, then go
// (docs/observability.md).
const (
	BufferedProduceRecords = Namespace + "_" + Subsystem + "_buffered_produce_records"
	BufferedFetchRecords   = Namespace + "_" + Subsystem + "_buffered_fetch_records"
)

// addedSeries are the series a set adds to kprom's.
type addedSeries struct {
	mu sync.Mutex
	// errVecs are kprom's error counters, as it registered them.
	errVecs []*prometheus.CounterVec
	// gauges are the renamed buffered gauges, while a client is open.
	gauges []prometheus.Collector
}

// capturing is the registerer kprom registers its collectors with: it
// registers them on the set's registry and keeps the error counters, whose
// series the set makes at 0 (brokerConnected). kprom makes its collectors
// anew when a set opens again, so the latest are kept.
type capturing struct {
	prometheus.Registerer
	set *set
}

// Register implements prometheus.Registerer.
func (r capturing) Register(c prometheus.Collector) error {
	if err := r.Registerer.Register(c); err != nil {
		return err
	}
	r.set.captured(c)
	return nil
}

// MustRegister implements prometheus.Registerer.
func (r capturing) MustRegister(cs ...prometheus.Collector) {
	r.Registerer.MustRegister(cs...)
	for _, c := range cs {
		r.set.captured(c)
	}
}

// fqName reads a descriptor's full name: prometheus.Desc shows it only in
// its String.
var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// captured keeps c if it is one of kprom's error counters.
func (s *set) captured(c prometheus.Collector) {
	vec, ok := c.(*prometheus.CounterVec)
	if !ok {
		return
	}
	ch := make(chan *prometheus.Desc, 1)
	vec.Describe(ch)
	close(ch)
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil && errorCounters[m[1]] {
			s.added.mu.Lock()
			s.added.errVecs = append(s.added.errVecs, vec)
			s.added.mu.Unlock()
		}
	}
}

// brokerConnected makes the error series of the broker of meta, at 0
// until an error counts. The labels are kprom's default broker labels,
// the node id as kgo names it.
func (s *set) brokerConnected(meta kgo.BrokerMetadata) {
	s.added.mu.Lock()
	defer s.added.mu.Unlock()
	for _, v := range s.added.errVecs {
		v.WithLabelValues(kgo.NodeName(meta.NodeID))
	}
}

// open registers the renamed buffered gauges of cl, the set's first
// client, as kprom's read it; the caller holds setsMu.
func (s *set) open(cl *kgo.Client) {
	labels := prometheus.Labels{"client_id": s.clientID}
	gauges := []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: BufferedProduceRecords, ConstLabels: labels,
			Help: "Records buffered in the client, not yet acknowledged by the broker."},
			func() float64 { return float64(cl.BufferedProduceRecords()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: BufferedFetchRecords, ConstLabels: labels,
			Help: "Records fetched and buffered in the client, not yet polled."},
			func() float64 { return float64(cl.BufferedFetchRecords()) }),
	}
	s.added.mu.Lock()
	defer s.added.mu.Unlock()
	for _, g := range gauges {
		// A registry of another process part with the same client id
		// has them already: theirs are served.
		if s.reg.Register(g) == nil {
			s.added.gauges = append(s.added.gauges, g)
		}
	}
}

// close unregisters what open registered; the caller holds setsMu.
func (s *set) close() {
	s.added.mu.Lock()
	defer s.added.mu.Unlock()
	for _, g := range s.added.gauges {
		s.reg.Unregister(g)
	}
	s.added.gauges, s.added.errVecs = nil, nil
}
