package health

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/wire"
)

// process is a coordinator as its health sees it.
type process struct {
	ready, leading, elected bool
	lease                   wire.LeaderLease
	catchUp                 error
}

func (p process) Ready() bool                      { return p.ready }
func (p process) Leader() (bool, wire.LeaderLease) { return p.leading, p.lease }
func (p process) Elected() bool                    { return p.elected }
func (p process) CatchUp(context.Context) error    { return p.catchUp }
func (p process) ClusterID() string                { return "k1" }
func (p process) RegisteredAgents() int            { return 2 }
func (p process) Connectors() []store.Connector    { return nil }

func monitor(p process) *Monitor {
	return New(Config{Version: "1.2.3", Commit: "abc", Process: p, Logger: slog.New(slog.DiscardHandler)})
}

// TestHealth: starting is a 503; started, the role and the leader's
// address show, whatever Kafka or NATS do (no broker watch runs here).
func TestHealth(t *testing.T) {
	ctx := context.Background()
	h, code := monitor(process{}).Health(ctx)
	if code != http.StatusServiceUnavailable || h.Status != "starting" || h.Message != "Worker is still starting up." {
		t.Fatalf("starting: %d %+v", code, h)
	}
	lease := wire.LeaderLease{Term: 3, URL: "https://10.0.0.1:8083"}
	h, code = monitor(process{ready: true, leading: true, lease: lease}).Health(ctx)
	if code != http.StatusOK || h.Status != "healthy" || h.Role != "leader" || h.Leader != "10.0.0.1:8083" {
		t.Fatalf("leader: %d %+v", code, h)
	}
	h, _ = monitor(process{ready: true, lease: lease}).Health(ctx)
	if h.Role != "follower" {
		t.Fatalf("follower: %+v", h)
	}
	info, _ := monitor(process{}).ServerInfo(ctx)
	// The version is the Kafka Connect level clients gate on; Sluice's own
	// is beside it.
	if info.Version != api.KafkaConnectVersion || info.SluiceVersion != "1.2.3" || info.Commit != "abc" || info.KafkaClusterID != "k1" {
		t.Fatalf("server info %+v", info)
	}
	if err := monitor(process{}).Wedged(); err != nil {
		t.Fatalf("wedged without a broker watch: %v", err)
	}
}

// TestReadiness: not ready until started and caught up with Kafka; NATS
// (absent here) and the leader only show in the checks.
func TestReadiness(t *testing.T) {
	ctx := context.Background()
	if _, err := monitor(process{}).Readiness(ctx); api.AsError(err) == nil || api.AsError(err).Code != http.StatusServiceUnavailable {
		t.Fatalf("starting: %v", err)
	}
	_, err := monitor(process{ready: true, catchUp: errors.New("broker away")}).Readiness(ctx)
	if e := api.AsError(err); e == nil || e.Code != http.StatusServiceUnavailable ||
		e.Message != "Coordinator has not caught up with its config and status topics within 2s: broker away" {
		t.Fatalf("behind Kafka: %v", err)
	}
	r, err := monitor(process{ready: true}).Readiness(ctx)
	if err != nil || r.Status != "ready" || r.Role != "follower" {
		t.Fatalf("ready without NATS or a leader: %+v %v", r, err)
	}
	byName := map[string]api.HealthCheck{}
	for _, c := range r.Checks {
		byName[c.Name] = c
	}
	if byName["nats"].OK || byName["leader"].OK || !byName["kafka"].OK || !byName["started"].OK {
		t.Fatalf("checks %+v", r.Checks)
	}
}

// TestLeaderCheck is the table of what the leader check says.
func TestLeaderCheck(t *testing.T) {
	for _, tc := range []struct {
		leading, elected bool
		term             int64
		ok               bool
		msg              string
	}{
		{term: 0, ok: false, msg: "no leader is known: no coordinator holds the leadership lease; writes answer 503 until one does"},
		{term: 4, elected: true, ok: false, msg: "elected leader (term 4) and still taking up leadership"},
		{term: 4, leading: true, elected: true, ok: true},
		{term: 4, ok: true},
	} {
		c := leaderCheck(tc.leading, tc.elected, wire.LeaderLease{Term: tc.term})
		if c.OK != tc.ok || c.Message != tc.msg {
			t.Errorf("%+v: %+v", tc, c)
		}
	}
}
