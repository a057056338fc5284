// Package kafkametrics measures Kafka clients with franz-go's kprom plugin,
// into a process's one Prometheus registry, as sluice_kafka_… series
// labelled client_id.
//
// kprom registers a client's collectors when the client starts and removes
// them when it closes, one kprom.Metrics per client: a Metrics shared by two
// clients would register the same series twice. So options built here go to
// exactly one client each, and every client of a process needs an id of its
// own (several agents, and the coordinator, may share one registry).
package kafkametrics

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kprom"
)

// Namespace and Subsystem prefix every Kafka client series: sluice_kafka_….
const (
	Namespace = "sluice"
	Subsystem = "kafka"
)

// Clients makes the options that measure Kafka clients into one registry.
// A nil *Clients measures nothing.
type Clients struct {
	reg prometheus.Registerer
}

// New measures clients into reg.
func New(reg prometheus.Registerer) *Clients { return &Clients{reg: reg} }

// Opts names one client clientID and, unless c is nil, measures it. Use the
// options for that one client only: they carry the client's own kprom
// hooks.
func (c *Clients) Opts(clientID string) []kgo.Opt {
	opts := []kgo.Opt{kgo.ClientID(clientID)}
	if c == nil || c.reg == nil {
		return opts
	}
	m := kprom.NewMetrics(Namespace,
		kprom.Subsystem(Subsystem),
		kprom.WithClientLabel(),
		kprom.Registerer(&clientRegisterer{reg: c.reg}),
	)
	return append(opts, kgo.WithHooks(m))
}

// clientRegisterer is one client's view of the registry. kprom registers
// with MustRegister, which panics when another live client uses the same id
// (a zombie task and its successor in one process, say): such a client goes
// unmeasured rather than taking the process down. It unregisters only what
// it registered itself, since the registry unregisters by description and
// would otherwise remove the other client's series.
type clientRegisterer struct {
	reg  prometheus.Registerer
	mu   sync.Mutex
	mine []prometheus.Collector
}

// Register implements prometheus.Registerer.
func (r *clientRegisterer) Register(c prometheus.Collector) error {
	if err := r.reg.Register(c); err != nil {
		return err
	}
	r.mu.Lock()
	r.mine = append(r.mine, c)
	r.mu.Unlock()
	return nil
}

// MustRegister implements prometheus.Registerer, without the panic.
func (r *clientRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

// Unregister implements prometheus.Registerer.
func (r *clientRegisterer) Unregister(c prometheus.Collector) bool {
	r.mu.Lock()
	i := slices.Index(r.mine, c)
	if i >= 0 {
		r.mine = slices.Delete(r.mine, i, i+1)
	}
	r.mu.Unlock()
	return i >= 0 && r.reg.Unregister(c)
}
