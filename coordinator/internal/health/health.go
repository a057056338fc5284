// Package health is what a coordinator tells probes and Prometheus about
// itself: GET / and GET /health (KIP-1017's liveness), GET /readyz, the
// broker watch that has a REST write refused at once during a broker
// outage, and the scrape-time collectors of connector states, leadership
// and sinks' lag. It reads the coordinator through one port and holds no
// state of its own beyond the broker watch.
package health

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/brokerwatch"
	"github.com/sluice-io/sluice/shared/wire"
)

// Process is the coordinator as its health sees it.
type Process interface {
	// Ready reports whether it finished starting.
	Ready() bool
	// Leader reports whether it leads (and has taken the term up), and the
	// lease it follows; Elected whether the elector holds the lease.
	Leader() (bool, wire.LeaderLease)
	Elected() bool
	// CatchUp reads the config and status topics to their end.
	CatchUp(ctx context.Context) error
	// ClusterID is the Kafka cluster's id; RegisteredAgents the agents
	// holding a lease with this leader; Connectors the connectors.
	ClusterID() string
	RegisteredAgents() int
	Connectors() []store.Connector
}

// Statuses are the status topic's states (store.StatusState).
type Statuses interface {
	Connector(name string) (store.InstanceStatus, bool)
	TaskIDs(name string) []int
	Task(name string, task int) (store.InstanceStatus, bool)
}

// Config is what a Monitor needs.
type Config struct {
	// Version and Commit are Sluice's own release version and build.
	Version, Commit string
	Process         Process
	NATS            *nats.Conn
	// Lags reads every sink's lag, for the lag collector.
	Lags func(ctx context.Context) []metrics.SinkLag
	// Metrics gets the collectors (Register); nil: none.
	Metrics *metrics.Metrics
	Logger  *slog.Logger
}

// Monitor answers the health endpoints and watches the brokers.
type Monitor struct {
	cfg Config
	// statuses are read when the collectors are scraped (Register).
	statuses Statuses
	// brokers pings the brokers once Start ran.
	brokers *brokerwatch.Pinger
	// unregister removes the collectors Register registered.
	unregister []func()
}

// New makes a Monitor; Start begins watching the brokers.
func New(cfg Config) *Monitor {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Monitor{cfg: cfg}
}

// WatchBrokers pings the brokers with ping in the background.
func (m *Monitor) WatchBrokers(ping func(context.Context) error) {
	m.brokers = brokerwatch.NewPinger(ping, brokerPingInterval, brokerPingTimeout)
	m.brokers.Start()
}

// Register registers the scrape-time collectors on Config.Metrics, reading
// statuses when scraped; Stop unregisters them.
func (m *Monitor) Register(statuses Statuses) error {
	m.statuses = statuses
	return m.registerCollectors()
}

// Stop unregisters the collectors and stops the broker watch.
func (m *Monitor) Stop() {
	for _, u := range m.unregister {
		u()
	}
	m.unregister = nil
	if m.brokers != nil {
		m.brokers.Stop()
	}
}

// ServerInfo answers GET /: the Kafka Connect REST level as the version
// clients gate on, with Sluice's own version and commit beside it.
func (m *Monitor) ServerInfo(ctx context.Context) (api.ServerInfo, error) {
	return api.ServerInfo{Version: api.KafkaConnectVersion, Commit: m.cfg.Commit, KafkaClusterID: m.cfg.Process.ClusterID(),
		SluiceVersion: m.cfg.Version}, nil
}

// Health answers GET /health.
func (m *Monitor) Health(ctx context.Context) (api.Health, int) {
	if !m.cfg.Process.Ready() {
		return api.Health{Status: "starting", Message: "Worker is still starting up."}, http.StatusServiceUnavailable
	}
	if err := m.Wedged(); err != nil {
		// KIP-1017's answer for a worker that cannot handle requests: the
		// liveness probe restarts it. Kafka or NATS being away is never
		// this (readiness and GET /readyz's checks say so).
		m.cfg.Logger.Error("coordinator wedged", "err", err)
		return api.Health{Status: "unhealthy", Message: "Worker was unable to handle this request and may be unable to handle other requests."}, http.StatusInternalServerError
	}
	health := api.Health{Status: "healthy", Message: "Worker has completed startup and is ready to handle requests.", Role: "follower"}
	leading, lease := m.cfg.Process.Leader()
	if leading {
		health.Role = "leader"
	}
	health.Leader = leaderAddr(lease)
	return health, http.StatusOK
}

// leaderAddr is the REST address (host:port) of lease's leader.
func leaderAddr(lease wire.LeaderLease) string {
	return strings.TrimPrefix(strings.TrimPrefix(lease.URL, "http://"), "https://")
}

// The coordinator pings its brokers in the background so that a REST write
// during a broker outage is refused at once, with a retryable 503 naming the
// outage, instead of waiting on a client that retries until the request's
// own deadline (10–30 s) and then answering 500.
const (
	brokerPingInterval = 500 * time.Millisecond
	// brokerPingTimeout bounds one ping: a broker that accepts no
	// connection (a blackholed address, a paused process) counts as down
	// after this long.
	brokerPingTimeout = time.Second
)

// BrokerOutage returns the outage of the coordinator's brokers, ok false
// while they answer (and before Start).
func (m *Monitor) BrokerOutage() (brokerwatch.Outage, bool) {
	if m.brokers == nil {
		return brokerwatch.Outage{}, false
	}
	return m.brokers.Outage()
}

// BrokerDown returns a channel closed as soon as the brokers become
// unreachable: a write in flight then stops waiting on them.
func (m *Monitor) BrokerDown() <-chan struct{} {
	if m.brokers == nil {
		return nil
	}
	return m.brokers.Down()
}

// wedgedAfter is how long the ping loop may go without a turn before the
// coordinator counts as wedged: each turn is bounded by brokerPingTimeout,
// whether the brokers answer or not, so only a stuck process misses it.
const wedgedAfter = 10 * (brokerPingInterval + brokerPingTimeout)

// Wedged reports why the coordinator's background work has stopped
// turning, or nil: the liveness half of GET /health. It never depends on
// Kafka or NATS answering.
func (m *Monitor) Wedged() error {
	if m.brokers == nil {
		return nil
	}
	if last := m.brokers.LastTurn(); !last.IsZero() && time.Since(last) > wedgedAfter {
		return fmt.Errorf("the broker ping loop has not turned for %s", time.Since(last).Round(time.Second))
	}
	return nil
}

// What the coordinator tells Prometheus and readiness probes. Its collectors
// read the herder's own views when scraped (states from the status topic,
// leadership from the lease, lag from Kafka), so every coordinator, leader
// or follower, publishes them, and none lags behind a push it missed.

// registerCollectors registers the scrape-time collectors on the
// configured metrics; Stop unregisters them.
func (m *Monitor) registerCollectors() error {
	for _, c := range []prometheus.Collector{
		metrics.NewStateCollector(m.connectorStates),
		metrics.NewLeadershipCollector(m.leadership),
		metrics.NewLagCollector(m.cfg.Lags, 0, 0),
	} {
		unregister, err := m.cfg.Metrics.Register(c)
		if err != nil {
			return fmt.Errorf("register coordinator metrics: %w", err)
		}
		m.unregister = append(m.unregister, unregister)
	}
	return nil
}

// connectorStates is every connector's state and its tasks', as GET
// …/status shows them; a connector with no status yet is UNASSIGNED.
func (m *Monitor) connectorStates() []metrics.ConnectorState {
	conns := m.cfg.Process.Connectors()
	out := make([]metrics.ConnectorState, 0, len(conns))
	for _, c := range conns {
		cs := metrics.ConnectorState{Name: c.Name, State: api.StateUnassigned, Tasks: map[int]string{}}
		if st, ok := m.statuses.Connector(c.Name); ok {
			cs.State = st.State
		}
		for _, n := range m.statuses.TaskIDs(c.Name) {
			if ts, ok := m.statuses.Task(c.Name, n); ok {
				cs.Tasks[n] = ts.State
			}
		}
		out = append(out, cs)
	}
	return out
}

// leadership is what this coordinator knows of the leadership now.
func (m *Monitor) leadership() metrics.Leadership {
	leading, lease := m.cfg.Process.Leader()
	l := metrics.Leadership{Leading: leading, Term: lease.Term}
	if leading {
		l.Agents = m.cfg.Process.RegisteredAgents()
	}
	return l
}

// readyCatchUp bounds the read of the topics' ends a readiness check does.
const readyCatchUp = 2 * time.Second

// Readiness answers GET /readyz: ready once the coordinator started and
// reads its config and status topics to their end within readyCatchUp, so
// that it answers reads truthfully; otherwise a 503 saying which is
// missing. NATS and the leader do not decide it: a coordinator cut off from
// NATS, or in a cluster whose leader is away, still answers every read
// (writes answer a retryable 503 at once), and taking every coordinator out
// of its Service during a NATS outage would refuse those reads too. Checks
// in the answer show them anyway.
func (m *Monitor) Readiness(ctx context.Context) (api.Readiness, error) {
	if !m.cfg.Process.Ready() {
		return api.Readiness{}, api.Errorf(api.Code(http.StatusServiceUnavailable), "Coordinator is still starting up: it has not read its config, status and offsets topics yet")
	}
	leading, lease := m.cfg.Process.Leader()
	checks := []api.HealthCheck{{Name: "started", OK: true, Required: true}}
	kafka := api.HealthCheck{Name: "kafka", OK: true, Required: true}
	cctx, cancel := context.WithTimeout(ctx, readyCatchUp)
	defer cancel()
	if err := m.cfg.Process.CatchUp(cctx); err != nil {
		kafka.OK, kafka.Message = false, fmt.Sprintf("Coordinator has not caught up with its config and status topics within %s: %v", readyCatchUp, err)
	}
	checks = append(checks, kafka, m.natsCheck(), leaderCheck(leading, m.cfg.Process.Elected(), lease))
	if !kafka.OK {
		return api.Readiness{}, api.Errorf(api.Code(http.StatusServiceUnavailable), "%s", kafka.Message)
	}
	out := api.Readiness{Status: "ready", Role: "follower", Leader: leaderAddr(lease), Checks: checks}
	if leading {
		out.Role = "leader"
	}
	return out, nil
}

// natsCheck says whether the coordinator's NATS connection is up: without
// it, it can neither lead nor learn who leads, so writes answer 503.
func (m *Monitor) natsCheck() api.HealthCheck {
	c := api.HealthCheck{Name: "nats", OK: true}
	if m.cfg.NATS == nil || !m.cfg.NATS.IsConnected() {
		c.OK, c.Message = false, "not connected to NATS: writes answer 503 until it is back; reads are served"
		if m.cfg.NATS != nil && m.cfg.NATS.LastError() != nil {
			c.Message += " (last error: " + m.cfg.NATS.LastError().Error() + ")"
		}
	}
	return c
}

// leaderCheck says whether a leader is known: without one, writes answer
// 503 (nothing could apply them), reads are served.
func leaderCheck(leading, elected bool, lease wire.LeaderLease) api.HealthCheck {
	c := api.HealthCheck{Name: "leader", OK: true}
	switch {
	case lease.Term == 0:
		c.OK, c.Message = false, "no leader is known: no coordinator holds the leadership lease; writes answer 503 until one does"
	case !leading && elected:
		c.OK, c.Message = false, fmt.Sprintf("elected leader (term %d) and still taking up leadership", lease.Term)
	}
	return c
}
