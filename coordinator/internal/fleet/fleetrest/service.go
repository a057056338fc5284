// Package fleetrest is the fleet's REST face: it answers the agents and
// fleet endpoints (/sluice/agents…, /sluice/maintenance…, /sluice/rollouts…,
// /sluice/fleet/rolls…, /sluice/rebalance) from the fleet topic's state, the reconciler's view of
// the agents and the fleet controllers, checks each request and the
// caller's grants, and converts the fleet topic's records to the REST
// API's types — the edge where a REST field meets a stored record, so that
// none ever changes the other. Decisions are the controllers' (fleet/…).
package fleetrest

import (
	"context"
	"log/slog"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/connectors"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/agentroll"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/maintenance"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/rebalance"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/rollout"
	"github.com/sluice-io/sluice/coordinator/internal/placements"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// Fleet is the fleet topic as this coordinator has read it.
type Fleet interface {
	Agent(id string) (store.AgentMark, bool)
	Agents() map[string]store.AgentMark
	Window(id string) (store.Window, bool)
	Windows() []store.Window
	Rollout(id string) (store.Rollout, bool)
	Rollouts() []store.Rollout
	AgentRoll(id string) (store.AgentRoll, bool)
	AgentRolls() []store.AgentRoll
	Rebalance() *store.Rebalance
}

// Agents is what the leader knows of its agents (reconciler.Table).
type Agents interface {
	AgentsAndPlacements() ([]registry.Agent, map[api.TaskID]placements.Placement)
	Known(id string) bool
}

// Config is what a Service needs.
type Config struct {
	Fleet  Fleet
	Agents Agents
	// Snapshot is the reconciler's placement world (reconciler.Snapshot).
	Snapshot func() reconciler.Snapshot
	// Apply writes commands through the leader's one write path
	// (store.Stores.Apply).
	Apply func(ctx context.Context, cmds ...store.Command) error
	// Leading reports whether this coordinator leads a term and has taken
	// it up: the agents' state lives on the leader only.
	Leading func() bool
	// CatchUp reads the fleet topic to its end, so that a follower's
	// answer shows what the leader wrote a moment ago.
	CatchUp func(ctx context.Context) error
	// Select resolves a selector to connector names (the connectors
	// service's rule: names that must exist, or a glob that must match).
	Select func(sel api.Selector) ([]string, error)
	// Exists reports whether a connector exists.
	Exists func(name string) bool
	// The fleet controllers.
	Maintenance *maintenance.Controller
	Rollouts    *rollout.Controller
	Rebalances  *rebalance.Controller
	AgentRolls  *agentroll.Controller
	// AgentLease is the agents' lease, which shows when each expires.
	AgentLease time.Duration
	// Clock is the time a cordon or drain starts.
	Clock func() time.Time
	// Principal names the caller of a request, as the audit trail does.
	Principal func(ctx context.Context) string
	// Changed asks for a reconcile pass after an agent's mark changed.
	Changed func()
	// WriteFailed turns a failed write into its REST error (409 when
	// leadership was lost, 413, or 500 naming what failed).
	WriteFailed func(err error, what string, args ...any) error
	Logger      *slog.Logger
}

// Service answers the agents and fleet endpoints. The zero value is a
// Service to hand the REST layer before the coordinator has started (which
// answers no such request until it is ready); Configure makes it work.
type Service struct {
	cfg Config
}

// New makes a configured Service.
func New(cfg Config) *Service {
	s := &Service{}
	s.Configure(cfg)
	return s
}

// Configure sets what the service works with. Call it once, before the
// first request: the coordinator does as it starts, before it reports
// ready, which orders it before every request the REST layer lets through.
func (s *Service) Configure(cfg Config) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s.cfg = cfg
}

// mustLead refuses a call about agents on a coordinator that does not
// lead (a follower forwards it; one that lost leadership says so).
func (s *Service) mustLead() error {
	if !s.cfg.Leading() {
		return api.Errorf(api.CodeConflict, connectors.StaleMessage)
	}
	return nil
}

// catchUpTimeout bounds a follower's catching up before a read.
const catchUpTimeout = 5 * time.Second

// catchUp makes a follower read the fleet topic to its end before it
// answers, as the REST layer has it read the config topic: a window opened
// through it a moment ago is then shown. The leader applied its own writes
// already. A stale answer beats none, so a failure is ignored.
func (s *Service) catchUp(ctx context.Context) {
	if s.cfg.Leading() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, catchUpTimeout)
	defer cancel()
	_ = s.cfg.CatchUp(ctx)
}

// readFleet reads the fleet topic to its end, failing the request when it
// cannot.
func (s *Service) readFleet(ctx context.Context) error {
	if err := s.cfg.CatchUp(ctx); err != nil {
		return api.Errorf(api.CodeInternal, "Failed to read the fleet topic: %v", err)
	}
	return nil
}
