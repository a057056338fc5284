// Package herder wires the coordinator's components together, and does
// nothing else of its own: it opens the Kafka clients and the stores, builds
// the services and the leader controllers on them (connectors, offsets,
// fleet, log levels, lag, the reconciler), satisfies the ports each one
// declares with small adapters (*ports.go), and hands leadership the
// leader-only components in the order they start (leadership.go).
//
//	every coordinator: follow the config, status, offsets and fleet topics; answer reads
//	the leader only:   write through the one write path (store.Stores), reconcile,
//	                   run the fleet controllers, command agents
//
// docs/architecture.md draws the components and follows a request through
// them.
package herder

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect/clientoverrides"
	"github.com/sluice-io/sluice/connect/configprovider"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/coordinator/internal/agentrpc"
	"github.com/sluice-io/sluice/coordinator/internal/confighistory"
	"github.com/sluice-io/sluice/coordinator/internal/connectors"
	"github.com/sluice-io/sluice/coordinator/internal/connlock"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/agentroll"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/drain"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/fleetrest"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/maintenance"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/prestop"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/rebalance"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/rollout"
	"github.com/sluice-io/sluice/coordinator/internal/fleetlist"
	"github.com/sluice-io/sluice/coordinator/internal/gauges"
	"github.com/sluice-io/sluice/coordinator/internal/health"
	"github.com/sluice-io/sluice/coordinator/internal/instances"
	"github.com/sluice-io/sluice/coordinator/internal/internaltopics"
	"github.com/sluice-io/sluice/coordinator/internal/lag"
	"github.com/sluice-io/sluice/coordinator/internal/laghistory"
	"github.com/sluice-io/sluice/coordinator/internal/leader"
	"github.com/sluice-io/sluice/coordinator/internal/leadership"
	"github.com/sluice-io/sluice/coordinator/internal/loglevels"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/coordinator/internal/offsets"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
	"github.com/sluice-io/sluice/coordinator/internal/signals"
	"github.com/sluice-io/sluice/coordinator/internal/statusqueue"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/coordinator/internal/tenants"
	"github.com/sluice-io/sluice/shared/cmdsig"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/leasetrust"
	"github.com/sluice-io/sluice/shared/logging"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/recordsig"
	"github.com/sluice-io/sluice/shared/wire"
)

// Config configures a Herder.
type Config struct {
	// WorkerID is shown as the connector's worker_id: the REST address.
	WorkerID string
	// RESTScheme is how other coordinators reach WorkerID: "https" when
	// the REST server takes TLS, otherwise (also when empty) "http".
	RESTScheme   string
	GroupID      string
	ConfigTopic  string
	OffsetsTopic string
	StatusTopic  string
	// FleetTopic holds the fleet operations' state: agent cordons and
	// drains, maintenance windows, rollouts (store.FleetStore).
	FleetTopic string
	// LivenessTopic is where agents write their liveness beats
	// (liveness.go, reconciler/liveness.go).
	LivenessTopic string
	// ReservedTopics are the cluster's own topics, each with what it is
	// ("Sluice's config topic"): no connector may produce to or consume
	// from one (connectors/reserved.go). Connectors' own offsets topics and Kafka's
	// internal topics are reserved on top.
	ReservedTopics map[string]string
	// Tenants are the teams of the cluster and what their connectors may
	// touch (connectors/tenancy.go); nil: none.
	Tenants *tenants.Tenants
	// Signing signs the records this coordinator writes for the others and
	// keeps it from applying one no coordinator wrote (nil: neither);
	// SignedTopics are the topics it guards besides the config topic, whose
	// first signed offsets the first signing leader records (signing.go).
	Signing      *recordsig.Gate
	SignedTopics []string
	// Overrides judges connectors' client config overrides
	// (producer.override.* and the like) when a config is written.
	Overrides clientoverrides.Policy
	// DisableInternalTopicCreation keeps the coordinator from creating any
	// topic: a missing one is an error (Kafka Connect's
	// internal.topics.automatic.creation.enable=false, topics.go). With
	// creation on, a topic that existed before is still never created
	// again.
	DisableInternalTopicCreation bool
	// OffsetsPartitions and StatusPartitions size the internal topics when
	// Sluice creates them.
	OffsetsPartitions int32
	StatusPartitions  int32
	AgentLease        time.Duration
	// SinkLagDegraded is the sink lag, in records, from which the fleet
	// listing calls a running sink degraded (0: fleetlist's default,
	// negative: never).
	SinkLagDegraded int64
	// AgentProbe is how often the leader probes each agent's presence
	// (reconciler/presence.go); 0: never, the lease alone finds lost agents.
	AgentProbe time.Duration
	// PlacementSettle is how long a start holds the tasks no agent ran
	// (reconciler/startup.go); 0: never.
	PlacementSettle     time.Duration
	TaskShutdownTimeout time.Duration
	// LeaderLease is how long a leader that stops renewing keeps the lease.
	LeaderLease time.Duration
	// LeaderSigner signs this coordinator's leases and LeaderTrust is the
	// leases it follows (leasetrust); nil: unsigned, and every lease
	// followed.
	LeaderSigner *leasetrust.Signer
	LeaderTrust  *leasetrust.Trust
	// DialNATS opens a connection of its own for each term's agent
	// endpoints, closed when the term ends: a subscription drained while
	// NATS is away would otherwise be sent again on reconnect and keep
	// swallowing agents' heartbeats (nil: the shared connection serves).
	DialNATS  func(name string) (*nats.Conn, error)
	KafkaOpts []kgo.Opt
	Version   string
	Commit    string
	Logger    *slog.Logger
	// Loggers are the process's named loggers: GET and PUT /admin/loggers
	// show and change them, and every cluster-wide level read from the
	// config topic is set on them.
	Loggers *logging.Loggers
	// ExactlyOnce: see coordinator.Config.ExactlyOnce.
	ExactlyOnce bool
	// Providers resolve config providers' placeholders where the herder
	// runs connector code: validation and the connector instances (nil:
	// placeholders stay as they are); each config within its tenant's
	// secrets (configprovider.Transformer.WithScopes, coordinator.New).
	Providers *configprovider.Transformer
	// History records every change of a connector's positions (nil: none
	// is recorded, and the history endpoints answer that it is off).
	History History
	// ConfigHistory records every change of a connector's config (nil:
	// none is recorded).
	ConfigHistory ConfigHistory
	// LagHistoryInterval is how often the leader samples sinks' lag
	// (laghistory; 0: its default).
	LagHistoryInterval time.Duration
	// Metrics records the herder's work, and gets the collectors of
	// connector states, sink lag and leadership registered on Start (nil:
	// none).
	Metrics *metrics.Metrics
}

// Herder implements the coordinator's operations.
type Herder struct {
	cfg     Config
	log     *slog.Logger
	reg     *plugins.Registry
	nc      *nats.Conn
	admin   *kadm.Client
	adminCl *kgo.Client
	// health answers the health endpoints, watches the brokers and
	// registers the collectors (health).
	health   *health.Monitor
	configs  *store.ConfigStore
	statuses *store.StatusStore
	offsets  *offsetstore.Store
	// stores follow connectors' own offsets topics beside offsets.
	stores *offsetstore.Registry
	// offs is the offsets service (offsetsports.go), made by New and
	// configured by Start.
	offs *offsets.Service
	// conns is the connectors service (connectorsports.go), with its
	// plugin chooser and admission.
	conns *connectors.Service
	// confRec records the connectors' config writes (confighistory.go;
	// nil without a config history).
	confRec *confighistory.Recorder
	confSvc *confighistory.Service
	plugins *connectors.Plugins
	admit   *connectors.Admission
	fleet   *store.FleetStore
	elector *leader.Elector

	ready     atomic.Bool
	term      atomic.Int64 // the current leadership term; 0 when not leading
	clusterID string
	// prepared: Prepare made sure of the internal topics (topics).
	prepared bool
	topics   *internaltopics.Guard
	// lag reads sinks' consumer lag (GET …/lag and the lag metrics).
	lag *lag.Reader
	// lagHistory samples it while leading (GET …/lag/history).
	lagHistory *laghistory.Sampler
	// gauges reads tasks' own gauges from their agents (GET …/gauges).
	gauges *gauges.Reader
	// signals hands signals to connectors' tasks (POST …/signals).
	signals *signals.Sender
	// locks serialise the changes of each connector (connlock).
	locks *connlock.Table
	// all is the one write path over configs, statuses and fleet
	// (store.Stores); maint and rollouts are the fleet controllers on it.
	all      *store.Stores
	maint    *maintenance.Controller
	rollouts *rollout.Controller
	// agentRolls drives the rolling restarts of agents (fleet/agentroll).
	agentRolls *agentroll.Controller
	// fleetAPI answers the agents and fleet endpoints (fleetrest).
	fleetAPI *fleetrest.Service
	// fleetList answers the fleet listing (fleetlist).
	fleetList *fleetlist.Lister

	rpc *agentrpc.Client
	// rec places tasks on agents: it owns the agent registry, the
	// placements, the moves and the status queue (reconciler.go);
	// drains and rebalances are the fleet controllers that move tasks
	// through it, woken by moveDone; preStops lifts the drains agents'
	// own pre-stop hooks made once they are back.
	rec        *reconciler.Reconciler
	agents     *reconciler.Table // rec's: what the leader knows of its agents
	drains     *drain.Controller
	rebalances *rebalance.Controller
	preStops   *prestop.Controller
	moveDone   <-chan struct{}

	// instances are the leadership's started connector instances; nil
	// while following.
	instances atomic.Pointer[instances.Manager]
	// remote is the leadership's host of Java connectors (nil while
	// following), told of connector events and of agents gone.
	remote atomic.Pointer[instances.RemoteHost]

	// lead switches the leader-only components on and off
	// (leaderComponents); writer and statusQ are the running term's writer
	// and status queue, which later components use.
	lead    *leadership.Leadership
	writer  termWriter
	statusQ atomic.Pointer[statusqueue.Queue]
	// levels answers /admin/loggers and, while leading, keeps the agents
	// at the cluster's log levels (loglevels).
	levels *loglevels.Service
	// faults injects a test's faults at the named points (faults.go; nil:
	// none).
	faults faults.Injector
}

// New makes a Herder; Start connects it to Kafka and NATS.
func New(cfg Config, reg *plugins.Registry, nc *nats.Conn, opts ...Option) *Herder {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Loggers == nil {
		cfg.Loggers = logging.FromLogger(cfg.Logger)
	}
	h := &Herder{
		cfg: cfg,
		log: cfg.Logger,
		reg: reg,
		nc:  nc,
	}
	for _, o := range opts {
		o(h)
	}
	h.locks = connlock.New(h.trigger)
	h.lead = leadership.New(h.log, h.leaderComponents()...)
	h.fleetAPI = &fleetrest.Service{}
	h.fleetList = &fleetlist.Lister{}
	h.levels = &loglevels.Service{}
	h.lag = &lag.Reader{}
	h.lagHistory = h.newLagHistory()
	h.gauges = &gauges.Reader{}
	h.signals = &signals.Sender{}
	h.health = health.New(health.Config{Version: cfg.Version, Commit: cfg.Commit, Process: healthPorts{h}, NATS: nc,
		Lags: func(ctx context.Context) []metrics.SinkLag { return h.lag.Lags(ctx) }, Metrics: cfg.Metrics, Logger: h.log})
	h.offs = &offsets.Service{}
	h.rpc = agentrpc.NewClient(nc, cfg.GroupID, h.signingKey, cfg.Metrics)
	h.newReconciler()
	h.newConnectors()
	h.newConfigHistory()
	return h
}

// CommandSigner signs commands to agents of term as this coordinator does
// while it leads at term; nil otherwise.
func (h *Herder) CommandSigner(term int64) natsrpc.Signer {
	key := h.signingKey(term)
	if key == nil {
		return nil
	}
	return key.Sign
}

// signingKey is the key of term, which signs this coordinator's commands to
// agents, while it leads at term; nil otherwise.
func (h *Herder) signingKey(term int64) *cmdsig.Key {
	if h.elector == nil {
		return nil
	}
	return h.elector.SigningKey(term)
}

// Start makes sure of the internal topics (Prepare, if it has not run),
// reads the config, status and offsets topics to their end and campaigns
// for leadership. It returns once the coordinator can answer reads; writes
// are forwarded to the leader, and leader-only work starts when this
// coordinator is elected.
func (h *Herder) Start(ctx context.Context) error {
	if err := h.Prepare(ctx); err != nil {
		return err
	}
	h.health.WatchBrokers(h.adminCl.Ping)
	var err error
	h.configs, err = store.NewConfigStore(h.cfg.ConfigTopic, func(key string, err error) {
		h.log.Warn("skipping undecodable config record", "key", key, "err", err)
	}, h.cfg.KafkaOpts...)
	if err != nil {
		return err
	}
	h.configs.SetRecordLimit(store.NewRecordLimit(h.admin, h.cfg.ConfigTopic))
	h.lag.Configure(lag.Config{Connectors: h.configs.State, Type: h.plugins.Type, Admin: h.admin, Logger: h.log})
	h.gauges.Configure(gauges.Config{Connectors: h.configs.State, Placed: h.placedOn, RPC: h.rpc, Term: h.term.Load})
	h.signals.Configure(signals.Config{Connectors: h.configs.State, Placed: h.placedOn, RPC: h.rpc, Term: h.term.Load})
	h.levels.Configure(loglevels.Config{Loggers: h.cfg.Loggers, Levels: h.configs.Loggers, Apply: h.configs.Apply,
		Agents: logAgents{h}, Resend: h.cfg.AgentLease / 2, WriteFailed: connectors.WriteFailed, Logger: h.log})
	h.configs.OnLoggerLevel(h.levels.ApplyClusterLevel)
	h.configs.SetGate(h.cfg.Signing)
	if err := h.configs.Start(ctx); err != nil {
		return fmt.Errorf("read config topic: %w", err)
	}
	if h.statuses, err = store.NewStatusStore(h.cfg.StatusTopic, h.cfg.KafkaOpts...); err != nil {
		return err
	}
	h.statuses.SetGate(h.cfg.Signing)
	if err := h.statuses.Start(ctx); err != nil {
		return fmt.Errorf("read status topic: %w", err)
	}
	h.startFleetControllers()
	h.fleetList.Configure(fleetlist.Config{Configs: h.configs.State, Statuses: fleetStatuses{statusesPort{h}}, Plugins: h.plugins,
		Lags: h.lag.Latest(), LagThreshold: h.cfg.SinkLagDegraded})
	if h.offsets, err = offsetstore.New(h.cfg.OffsetsTopic, h.cfg.KafkaOpts...); err != nil {
		return err
	}
	if err := h.offsets.Start(ctx); err != nil {
		return fmt.Errorf("read offsets topic: %w", err)
	}
	// A connector's own topic stays followed a while after each use, so
	// that a dashboard's GET …/offsets every few seconds reads only what is
	// new.
	if h.stores, err = offsetstore.NewRegistry(h.offsets, 5*time.Minute, h.cfg.KafkaOpts...); err != nil {
		return err
	}
	h.offs.Configure(h.offsetsConfig())
	h.stores.SetCreateGuard(h.offs.Topics().Guard)
	h.elector = leader.New(leader.Config{Conn: h.nc, GroupID: h.cfg.GroupID, ID: h.cfg.WorkerID + "/" + randomID(), URL: h.restURL(),
		TTL: h.cfg.LeaderLease, Signer: h.cfg.LeaderSigner, Trust: h.cfg.LeaderTrust.With(h.cfg.LeaderSigner),
		Callbacks: leader.Callbacks{Elected: h.lead.Establish, Deposed: h.lead.Revoke}, Logger: h.log})
	if err := h.elector.Open(ctx); err != nil {
		return err
	}
	h.elector.Start()
	if err := h.health.Register(h.statuses.State); err != nil {
		h.elector.Stop()
		return err
	}
	h.ready.Store(true)
	return nil
}

// restURL is the URL other coordinators forward writes to while this one
// leads.
func (h *Herder) restURL() string {
	scheme := h.cfg.RESTScheme
	if scheme == "" {
		scheme = "http"
	}
	return scheme + "://" + h.cfg.WorkerID
}

// Stop resigns leadership, stops following and closes the clients.
func (h *Herder) Stop(ctx context.Context) error {
	h.ready.Store(false)
	h.health.Stop()
	if h.elector != nil {
		h.elector.Stop()
	}
	if h.stores != nil {
		h.stores.Close()
	}
	if h.offsets != nil {
		h.offsets.Close()
	}
	if h.statuses != nil {
		h.statuses.Close()
	}
	if h.fleet != nil {
		h.fleet.Close()
	}
	if h.configs != nil {
		h.configs.Close()
	}
	if h.adminCl != nil {
		h.adminCl.Close()
	}
	return nil
}

// Loggers answers /admin/loggers (loglevels); it works once Start has run.
func (h *Herder) Loggers() *loglevels.Service { return h.levels }

// logAgents are the leader's agents as the log levels' push sees them.
type logAgents struct{ h *Herder }

func (a logAgents) Registered() []string { return a.h.agents.Registered() }

func (a logAgents) Loggers(ctx context.Context, agent string, req wire.LoggersRequest) error {
	return a.h.rpc.Loggers(ctx, agent, req)
}

// Lag reads sinks' consumer lag (lag); it works once Start has run.
func (h *Herder) Lag() *lag.Reader { return h.lag }

// Gauges reads tasks' own gauges from their agents (gauges); it works
// once Start has run, and answers only while this coordinator leads.
func (h *Herder) Gauges() *gauges.Reader { return h.gauges }

// Signals hands signals to connectors' tasks (signals); it works once
// Start has run, and only while this coordinator leads.
func (h *Herder) Signals() *signals.Sender { return h.signals }

// placedOn is the agent task id is placed on, while leading.
func (h *Herder) placedOn(id api.TaskID) (string, bool) {
	p, ok := h.agents.Placement(id)
	return p.Agent, ok && p.Agent != ""
}

// Health answers the health endpoints and watches the brokers (health).
func (h *Herder) Health() *health.Monitor { return h.health }

// healthPorts is the herder as its health sees it.
type healthPorts struct{ h *Herder }

func (p healthPorts) Ready() bool                       { return p.h.Ready() }
func (p healthPorts) Leader() (bool, wire.LeaderLease)  { return p.h.Leader() }
func (p healthPorts) Elected() bool                     { return p.h.elector != nil && p.h.elector.IsLeader() }
func (p healthPorts) CatchUp(ctx context.Context) error { return p.h.CatchUp(ctx) }
func (p healthPorts) ClusterID() string                 { return p.h.clusterID }
func (p healthPorts) RegisteredAgents() int             { return p.h.RegisteredAgents() }
func (p healthPorts) Connectors() []store.Connector     { return p.h.configs.State.All() }
