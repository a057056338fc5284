// Package kafkametrics publishes the metrics of franz-go clients (its
// plugin/kprom) on a Prometheus registry, as sluice_kafka_… series labelled
// with the client's client_id.
//
// kprom registers one set of collectors per client, labelled with the
// client id, and panics when a second client of the same id registers the
// same set. A Sluice process has many clients of one id (a coordinator's
// admin client, its three topic readers, its leader writer — briefly two of
// them while it is replaced — and the audit trail's), and may run several
// coordinators or agents on one registry (sluice dev, tests). So the clients
// of one id on one registry share one kprom set, counted by reference:
//
//	first client of (registry, id) opens ─► kprom registers its collectors
//	more clients open                  ─► they add to the same series
//	last client closes                 ─► the collectors are unregistered
//
// kprom's buffered_* gauges read the client it registered with, the first
// one: in a coordinator that is its admin client, or the audit trail's,
// both of which live as long as it does. (Moving them to another client
// would mean re-registering while the other clients' hooks run: a data
// race in kprom.)
//
// Two things are added to kprom's series (series.go): its error counters
// exist, at 0, as soon as a client connected to a broker — kprom makes
// them only at the first error, so a healthy cluster had none and a
// dashboard's error panels said "No data" — and the buffered-records
// gauges are also published under names without kprom's _total, which
// Prometheus keeps for counters.
package kafkametrics

import (
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kprom"
)

// Namespace and Subsystem name the series: sluice_kafka_….
const (
	Namespace = "sluice"
	Subsystem = "kafka"
)

// key is one client id on one registry.
type key struct {
	reg      prometheus.Registerer
	clientID string
}

var (
	setsMu sync.Mutex
	sets   = map[key]*set{}
)

// set is the kprom metrics of the live clients of one key, and the
// series added to them (series.go).
type set struct {
	m        *kprom.Metrics
	reg      prometheus.Registerer
	clientID string
	clients  int // live clients
	added    addedSeries
}

// Hooks returns the client option that publishes the metrics of every
// client built with it on reg under clientID, which must be the client id
// those clients are built with (kafkautil.ClientOpts). A nil reg publishes
// nothing.
func Hooks(reg prometheus.Registerer, clientID string) kgo.Opt {
	if reg == nil {
		return kgo.WithHooks()
	}
	setsMu.Lock()
	s, ok := sets[key{reg, clientID}]
	if !ok {
		s = &set{reg: reg, clientID: clientID}
		s.m = kprom.NewMetrics(Namespace, kprom.Registerer(capturing{Registerer: reg, set: s}), kprom.Subsystem(Subsystem), kprom.WithClientLabel(),
			// kprom's default details and records and batches, which
			// say what a client moved without knowing record sizes.
			kprom.FetchAndProduceDetail(kprom.ByNode, kprom.ByTopic, kprom.UncompressedBytes, kprom.Records, kprom.Batches))
		sets[key{reg, clientID}] = s
	}
	setsMu.Unlock()
	return kgo.WithHooks(&hooks{Metrics: s.m, set: s})
}

// hooks forwards every kgo hook to the shared kprom set, and opens and
// closes the set by reference count.
type hooks struct {
	*kprom.Metrics
	set *set
}

// OnNewClient implements kgo.HookNewClient.
func (h *hooks) OnNewClient(cl *kgo.Client) {
	setsMu.Lock()
	defer setsMu.Unlock()
	if h.set.clients++; h.set.clients == 1 {
		h.Metrics.OnNewClient(cl)
		h.set.open(cl)
	}
}

// OnClientClosed implements kgo.HookClientClosed.
func (h *hooks) OnClientClosed(cl *kgo.Client) {
	setsMu.Lock()
	defer setsMu.Unlock()
	if h.set.clients--; h.set.clients == 0 {
		h.Metrics.OnClientClosed(cl)
		h.set.close()
	}
}

// OnBrokerConnect implements kgo.HookBrokerConnect: kprom's count, and,
// once a connection to a broker opened, its error series at 0.
func (h *hooks) OnBrokerConnect(meta kgo.BrokerMetadata, dial time.Duration, conn net.Conn, err error) {
	h.Metrics.OnBrokerConnect(meta, dial, conn, err)
	if err == nil {
		h.set.brokerConnected(meta)
	}
}

// The other hooks are promoted from *kprom.Metrics; asserted here, so that
// a kprom that dropped one fails to build rather than silently publishing
// less.
var (
	_ kgo.HookBrokerConnect       = (*hooks)(nil)
	_ kgo.HookBrokerDisconnect    = (*hooks)(nil)
	_ kgo.HookBrokerRead          = (*hooks)(nil)
	_ kgo.HookBrokerWrite         = (*hooks)(nil)
	_ kgo.HookBrokerE2E           = (*hooks)(nil)
	_ kgo.HookBrokerThrottle      = (*hooks)(nil)
	_ kgo.HookProduceBatchWritten = (*hooks)(nil)
	_ kgo.HookFetchBatchRead      = (*hooks)(nil)
)

// Clients makes the options that name and measure Kafka clients on one
// registry: the agents' way to build each client's options. A nil *Clients
// measures nothing.
type Clients struct {
	reg prometheus.Registerer
}

// New measures clients into reg.
func New(reg prometheus.Registerer) *Clients { return &Clients{reg: reg} }

// Opts names a client clientID and, unless c is nil, measures it with the
// clients of the same id on c's registry.
func (c *Clients) Opts(clientID string) []kgo.Opt {
	if c == nil || c.reg == nil {
		return []kgo.Opt{kgo.ClientID(clientID)}
	}
	return []kgo.Opt{kgo.ClientID(clientID), Hooks(c.reg, clientID)}
}

// With is base, copied, followed by Opts(clientID): one client's options
// on top of a process's shared ones, which it leaves as they are.
func (c *Clients) With(clientID string, base []kgo.Opt) []kgo.Opt {
	return append(append([]kgo.Opt{}, base...), c.Opts(clientID)...)
}
