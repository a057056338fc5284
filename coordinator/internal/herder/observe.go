package herder

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
)

// What the herder tells Prometheus and readiness probes. Its collectors
// read the herder's own views when scraped (states from the status topic,
// leadership from the lease, lag from Kafka), so every coordinator, leader
// or follower, publishes them, and none lags behind a push it missed.

// registerCollectors registers the scrape-time collectors on the
// configured metrics; Stop unregisters them.
func (h *Herder) registerCollectors() error {
	for _, c := range []prometheus.Collector{
		metrics.NewStateCollector(h.connectorStates),
		metrics.NewLeadershipCollector(h.leadership),
		metrics.NewLagCollector(h.lag.Lags, 0, 0),
	} {
		unregister, err := h.cfg.Metrics.Register(c)
		if err != nil {
			return fmt.Errorf("register coordinator metrics: %w", err)
		}
		h.unregister = append(h.unregister, unregister)
	}
	return nil
}

// connectorStates is every connector's state and its tasks', as GET
// …/status shows them; a connector with no status yet is UNASSIGNED.
func (h *Herder) connectorStates() []metrics.ConnectorState {
	conns := h.configs.State.All()
	out := make([]metrics.ConnectorState, 0, len(conns))
	for _, c := range conns {
		cs := metrics.ConnectorState{Name: c.Name, State: v1.StateUnassigned, Tasks: map[int]string{}}
		if st, ok := h.statuses.State.Connector(c.Name); ok {
			cs.State = st.State
		}
		for _, n := range h.statuses.State.TaskIDs(c.Name) {
			if ts, ok := h.statuses.State.Task(c.Name, n); ok {
				cs.Tasks[n] = ts.State
			}
		}
		out = append(out, cs)
	}
	return out
}

// leadership is what this coordinator knows of the leadership now.
func (h *Herder) leadership() metrics.Leadership {
	leading, lease := h.Leader()
	l := metrics.Leadership{Leading: leading, Term: lease.Term}
	if leading {
		l.Agents = h.RegisteredAgents()
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
func (h *Herder) Readiness(ctx context.Context) (v1.Readiness, error) {
	if !h.ready.Load() {
		return v1.Readiness{}, v1.Errorf(v1.Code(http.StatusServiceUnavailable), "Coordinator is still starting up: it has not read its config, status and offsets topics yet")
	}
	leading, lease := h.Leader()
	checks := []v1.HealthCheck{{Name: "started", OK: true, Required: true}}
	kafka := v1.HealthCheck{Name: "kafka", OK: true, Required: true}
	cctx, cancel := context.WithTimeout(ctx, readyCatchUp)
	defer cancel()
	if err := h.CatchUp(cctx); err != nil {
		kafka.OK, kafka.Message = false, fmt.Sprintf("Coordinator has not caught up with its config and status topics within %s: %v", readyCatchUp, err)
	}
	checks = append(checks, kafka, h.natsCheck(), leaderCheck(leading, h.elector != nil && h.elector.IsLeader(), lease))
	if !kafka.OK {
		return v1.Readiness{}, v1.Errorf(v1.Code(http.StatusServiceUnavailable), "%s", kafka.Message)
	}
	out := v1.Readiness{Status: "ready", Role: "follower", Leader: leaderAddr(lease), Checks: checks}
	if leading {
		out.Role = "leader"
	}
	return out, nil
}

// natsCheck says whether the coordinator's NATS connection is up: without
// it, it can neither lead nor learn who leads, so writes answer 503.
func (h *Herder) natsCheck() v1.HealthCheck {
	c := v1.HealthCheck{Name: "nats", OK: true}
	if h.nc == nil || !h.nc.IsConnected() {
		c.OK, c.Message = false, "not connected to NATS: writes answer 503 until it is back; reads are served"
		if h.nc != nil && h.nc.LastError() != nil {
			c.Message += " (last error: " + h.nc.LastError().Error() + ")"
		}
	}
	return c
}

// leaderCheck says whether a leader is known: without one, writes answer
// 503 (nothing could apply them), reads are served.
func leaderCheck(leading, elected bool, lease v1.LeaderLease) v1.HealthCheck {
	c := v1.HealthCheck{Name: "leader", OK: true}
	switch {
	case lease.Term == 0:
		c.OK, c.Message = false, "no leader is known: no coordinator holds the leadership lease; writes answer 503 until one does"
	case !leading && elected:
		c.OK, c.Message = false, fmt.Sprintf("elected leader (term %d) and still taking up leadership", lease.Term)
	}
	return c
}
