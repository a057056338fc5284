// Package coordinator is the Sluice coordinator: it serves the Kafka Connect
// REST API, owns connector configs and target states in the config topic,
// places tasks on agents and forwards offset operations to them over NATS.
package coordinator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect/clientoverrides"
	"github.com/sluice-io/sluice/connect/configprovider"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/coordinator/internal/audit"
	"github.com/sluice-io/sluice/coordinator/internal/confighistory"
	"github.com/sluice-io/sluice/coordinator/internal/connectors"
	"github.com/sluice-io/sluice/coordinator/internal/console"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/fleetrest"
	"github.com/sluice-io/sluice/coordinator/internal/fleetlist"
	"github.com/sluice-io/sluice/coordinator/internal/herder"
	"github.com/sluice-io/sluice/coordinator/internal/httpapi"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/coordinator/internal/migrations"
	"github.com/sluice-io/sluice/coordinator/internal/offsethistory"
	"github.com/sluice-io/sluice/coordinator/internal/offsets"
	"github.com/sluice-io/sluice/coordinator/internal/tenants"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/kafkametrics"
	"github.com/sluice-io/sluice/shared/kafkasec"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/leasetrust"
	"github.com/sluice-io/sluice/shared/logging"
	"github.com/sluice-io/sluice/shared/natsconn"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/recordsig"
	"github.com/sluice-io/sluice/shared/wire"
)

// kafkaClientID is the client id of every Kafka client of a coordinator,
// the client_id label of its sluice_kafka_… series.
const kafkaClientID = "sluice-coordinator"

// The defaults of Config's REST limits.
const (
	DefaultReadHeaderTimeout = httpapi.DefaultReadHeaderTimeout
	DefaultReadBodyTimeout   = httpapi.DefaultReadBodyTimeout
	DefaultMaxHeaderBytes    = httpapi.DefaultMaxHeaderBytes
	DefaultKafkaProbeTimeout = kafkautil.DefaultProbeTimeout
)

// DefaultFleetTopic is the fleet topic of a Config that names none.
const DefaultFleetTopic = "sluice-fleet"

// DefaultLivenessTopic is the liveness topic of a Config that names none.
const DefaultLivenessTopic = "sluice-liveness"

// Config configures a coordinator.
type Config struct {
	// Listen is the REST address; AdvertisedAddr, when set, is the
	// host:port the other coordinators forward writes to, also shown as the
	// connector's worker_id (default: the bound address).
	Listen         string
	AdvertisedAddr string
	NATSURL        string
	// NATSAuth authenticates and secures the NATS connection (the
	// --nats-* flags); zero: anonymous, plain.
	NATSAuth natsconn.Auth
	Brokers  string
	// KafkaSecurity secures every Kafka client of the coordinator (TLS,
	// SASL); nil: plaintext without authentication.
	KafkaSecurity *kafkasec.Config
	// KafkaProbeTimeout bounds the start-up check that Kafka accepts the
	// connection's security (zero: DefaultKafkaProbeTimeout, after which
	// start-up goes on with a warning if no broker answered at all).
	KafkaProbeTimeout time.Duration
	GroupID           string
	ConfigTopic       string
	OffsetsTopic      string
	StatusTopic       string
	// FleetTopic is where fleet operations keep their state (one
	// partition, compacted; created if missing): default DefaultFleetTopic.
	FleetTopic string
	// LivenessTopic is where agents write their liveness beats, so that
	// one cut off from NATS alone is still known alive (one partition,
	// short retention; created if missing): default DefaultLivenessTopic.
	LivenessTopic string
	// DisableInternalTopicCreation is Kafka Connect's
	// internal.topics.automatic.creation.enable=false (KIP-1209; the
	// --internal-topics-automatic-creation=false flag): the coordinator
	// creates no topic, and a missing one (config, offsets, status, fleet,
	// audit, offsets history, a connector's own offsets topic) is an error
	// naming it. With creation on (false here, the default) a topic that
	// existed before and vanished is never created again either
	// (docs/reliability.md).
	DisableInternalTopicCreation bool
	// OffsetsPartitions and StatusPartitions size the internal topics.
	OffsetsPartitions int32
	StatusPartitions  int32
	AgentLease        time.Duration
	// MigrateAllowURLs are the Kafka Connect REST URLs POST
	// /sluice/migrations may read (--migrate-allow-url): the coordinator
	// reads no other. None: migrations are off.
	MigrateAllowURLs []string
	// SinkLagDegraded is the sink lag, in records, from which the fleet
	// listing (GET /sluice/fleet/connectors) calls a running sink
	// degraded: 0, the default of 100000; negative, never.
	SinkLagDegraded int64
	// AgentProbe is how often the leader probes each agent's presence on
	// NATS (wire.SubjectAgentPresence); an agent whose connection closed is
	// lost after two probes in a row find nobody, not after its lease. 0
	// leaves the lease alone to decide.
	AgentProbe time.Duration
	// PlacementSettle is how long, when agents come to a leader that has
	// none (it just took over, or every agent had left), the tasks that no
	// agent ever ran wait after the first agent registered, so that agents
	// starting together share them; 0 places them at once.
	PlacementSettle     time.Duration
	TaskShutdownTimeout time.Duration
	// LeaderLease is how long a leader that stops renewing its lease (it
	// crashed, hung or lost NATS) keeps it before another coordinator takes
	// over.
	LeaderLease time.Duration
	// Loggers are the process's named loggers (shared/logging), whose
	// levels GET and PUT /admin/loggers show and change: a worker-scope
	// change applies to them, so in a process that also runs agents (sluice
	// dev) it applies to those agents too. Nil: loggers of the coordinator's
	// own, over Logger's handler.
	Loggers *logging.Loggers
	// Logger is where the coordinator logs when Loggers is nil (nil:
	// slog.Default()). Its handler's own level bounds what can be logged:
	// PUT /admin/loggers can raise the level above it, never lower it below.
	Logger *slog.Logger
	// ExactlyOnce maintains the tasks-fencing records of source connectors
	// and fences a connector's task ids whenever its task count changes.
	ExactlyOnce bool
	// Plugins are the plugins the coordinator validates configs with and
	// runs the Connector part of (nil: the built-in ones).
	Plugins *plugins.Registry
	// ConfigProviders are the config providers whose placeholders the
	// coordinator resolves where it runs connector code: validation and
	// the Connector part (Start, TaskConfigs); task configs are written
	// back with the placeholders in place. Their FileAllowedPaths confine
	// the coordinator's file and directory providers.
	ConfigProviders configprovider.Settings

	// ReadHeaderTimeout, ReadBodyTimeout and MaxHeaderBytes bound what one
	// REST request may hold of the server before it is answered: the time
	// its line and headers may take to arrive, the time its body may take
	// once the headers are in, and the size of its line and headers (zero:
	// the Default… constants, 10s, 30s and 64 KiB). A slow or endless
	// client is cut off, not waited for.
	ReadHeaderTimeout time.Duration
	ReadBodyTimeout   time.Duration
	MaxHeaderBytes    int

	// Audit configures the audit trail of REST writes.
	Audit AuditConfig
	// OffsetsHistory configures the history of offsets changes.
	OffsetsHistory OffsetsHistoryConfig
	// ConfigHistory configures the history of config changes.
	ConfigHistory ConfigHistoryConfig
	// LagHistoryInterval is how often the leader samples sinks' lag for
	// GET …/lag/history (default DefaultLagHistoryInterval).
	LagHistoryInterval time.Duration
	// RecordSigningKeyFile holds the key (32 bytes or more) coordinators
	// sign the records they write for each other with: a record on the
	// config, status, fleet, offsets history or audit topic that no
	// coordinator wrote is then ignored (docs/security.md). The same file
	// on every coordinator; empty: records are neither signed nor checked.
	RecordSigningKeyFile string
	// LeaderKeyFile holds the leader key (32 bytes or more of secret
	// random, `openssl rand -hex 32`) this coordinator signs its leases
	// with; the same file on every coordinator of the cluster, so that
	// any of them can lead (docs/ha.md). Empty: leases go unsigned.
	LeaderKeyFile string
	// LeaderTrustedKeysFile lists the leader public keys (one base64 key a
	// line, `sluice leader-key public`) whose leases this coordinator
	// follows besides its own key's: two during a rotation. With neither
	// file, every lease is followed.
	LeaderTrustedKeysFile string
	// ClientOverridePolicy is the connectors' client config override
	// policy: None, All, Allowlist or Principal (Kafka Connect's
	// connector.client.config.override.policy). Empty: Allowlist of
	// clientoverrides.DefaultAllowlist, what Sluice applied before it had a
	// policy.
	ClientOverridePolicy string
	// ClientOverrideAllowlist is the Allowlist policy's client config
	// names (connector.client.config.override.allowlist).
	ClientOverrideAllowlist []string
	// TenantsFile is the tenants file (docs/security.md, "Multi-tenant
	// setup"): the teams of the cluster, each a connector-name pattern
	// with the topics, consumer groups and secrets its connectors may use.
	// Empty: no tenants.
	TenantsFile string
	// RESTSecurity configures HTTPS, authentication and authorization of
	// the REST API (zero: plain HTTP, open to everyone).
	RESTSecurity RESTSecurity

	// Metrics is the process's Prometheus registry: the coordinator
	// registers its series on it and serves all of it at GET /metrics, so
	// that agents of the same process (sluice dev) are scraped there too.
	// Nil: a registry of the coordinator's own.
	Metrics *prometheus.Registry
}

// Validate checks the config.
func (c *Config) Validate() error {
	var errs []error
	if c.NATSURL == "" {
		errs = append(errs, errors.New("a NATS URL is required"))
	}
	if err := c.NATSAuth.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Brokers == "" {
		errs = append(errs, errors.New("Kafka brokers are required"))
	}
	if c.GroupID == "" || c.ConfigTopic == "" || c.OffsetsTopic == "" || c.StatusTopic == "" {
		errs = append(errs, errors.New("group id and topic names must not be empty"))
	}
	if c.AgentLease <= 0 || c.TaskShutdownTimeout <= 0 || c.LeaderLease < 0 {
		errs = append(errs, errors.New("agent lease and task shutdown timeout must be positive"))
	}
	if c.PlacementSettle < 0 {
		errs = append(errs, errors.New("the placement settle window must not be negative (0: no window)"))
	}
	if c.AgentProbe < 0 {
		errs = append(errs, errors.New("the agent probe interval must not be negative (0: only the lease finds lost agents)"))
	}
	if c.ReadHeaderTimeout < 0 || c.ReadBodyTimeout < 0 || c.MaxHeaderBytes < 0 {
		errs = append(errs, errors.New("REST read timeouts and header size must not be negative"))
	}
	if err := c.OffsetsHistory.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := migrations.CheckAllowURLs(c.MigrateAllowURLs); err != nil {
		errs = append(errs, err)
	}
	if err := c.ConfigHistory.validate(); err != nil {
		errs = append(errs, err)
	}
	if c.LagHistoryInterval < 0 {
		errs = append(errs, errors.New("the lag history interval must not be negative"))
	}
	if err := c.Audit.validate(); err != nil {
		errs = append(errs, err)
	}
	if c.AdvertisedAddr != "" {
		// Followers forward writes to http://<advertised address>: without
		// a port they would reach port 80 and answer "no known leader".
		if host, port, err := net.SplitHostPort(c.AdvertisedAddr); err != nil || host == "" || port == "" {
			errs = append(errs, fmt.Errorf("advertised address %q must be host:port, the REST address other coordinators forward writes to", c.AdvertisedAddr))
		}
	}
	return errors.Join(errs...)
}

// Coordinator is a running coordinator.
type Coordinator struct {
	// providers resolve placeholders where the coordinator runs connector
	// code; built by New, so a bad setting fails before anything starts.
	providers *configprovider.Transformer
	// tenants are read from Config.TenantsFile by New (nil: none).
	tenants *tenants.Tenants
	// overrides is the client config override policy.
	overrides clientoverrides.Policy
	// signing signs and verifies the records coordinators write for each
	// other (nil: no key, neither).
	signing *recordsig.Gate
	// leaderSigner signs this coordinator's leases; leaderTrust is the
	// other keys whose leases it follows (nil, nil: unsigned, all followed).
	leaderSigner *leasetrust.Signer
	leaderTrust  *leasetrust.Trust

	cfg    Config
	log    *slog.Logger
	nc     *nats.Conn
	herder *herder.Herder
	ln     net.Listener
	srv    *httpapi.Server
	audit  *audit.Log
	// history is the offsets history's writer and reader.
	history *offsethistory.Log
	// configHistory is the config history's writer and reader.
	configHistory *confighistory.Log
	sec           restSecurity
	// stopAuthWatch stops reloading the auth file (watchAuthFile).
	stopAuthWatch func()
	// metrics are the coordinator's series on cfg.Metrics.
	metrics *metrics.Metrics
	// faults injects a test's faults (WithFaults; nil: none).
	faults faults.Injector
}

// Option configures New beyond its Config: what is no setting of a
// deployment.
type Option func(*Coordinator)

// WithFaults has inj inject a test's faults at the coordinator's fault
// points (shared/faults). Production code passes none.
func WithFaults(inj faults.Injector) Option {
	return func(c *Coordinator) { c.faults = inj }
}

// New makes a coordinator; Start connects it and serves.
func New(cfg Config, opts ...Option) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("coordinator config: %w", err)
	}
	if cfg.Loggers == nil {
		if cfg.Logger == nil {
			cfg.Logger = slog.Default()
		}
		cfg.Loggers = logging.FromLogger(cfg.Logger)
	}
	if cfg.OffsetsPartitions <= 0 {
		cfg.OffsetsPartitions = 25
	}
	if cfg.FleetTopic == "" {
		cfg.FleetTopic = DefaultFleetTopic
	}
	if cfg.LivenessTopic == "" {
		cfg.LivenessTopic = DefaultLivenessTopic
	}
	if cfg.StatusPartitions <= 0 {
		cfg.StatusPartitions = 5
	}
	if cfg.LeaderLease == 0 {
		cfg.LeaderLease = 6 * time.Second
	}
	if cfg.LagHistoryInterval == 0 {
		cfg.LagHistoryInterval = DefaultLagHistoryInterval
	}
	providers, _, err := cfg.ConfigProviders.Build(cfg.Loggers.Logger(logging.Herder))
	if err != nil {
		return nil, fmt.Errorf("coordinator config: %w", err)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = prometheus.NewRegistry()
	}
	overrides, err := overridePolicy(cfg)
	if err != nil {
		return nil, fmt.Errorf("coordinator config: %w", err)
	}
	var ts *tenants.Tenants
	if cfg.TenantsFile != "" {
		if ts, err = tenants.Load(cfg.TenantsFile); err != nil {
			return nil, fmt.Errorf("coordinator config: %w", err)
		}
	}
	// Connector code resolves each config's placeholders within its
	// tenant's secrets, wherever the coordinator runs it.
	providers = providers.WithScopes(func(config map[string]string) *configprovider.Scope {
		if ts == nil {
			return nil
		}
		if config["name"] == "" {
			// A config of no connector (the validate endpoint's) is no
			// tenant's: under tenants it may read no secret at all.
			return &configprovider.Scope{Owner: "a config that names no connector"}
		}
		return configprovider.TenantScope(ts.Policy(config["name"]))
	})
	c := &Coordinator{cfg: cfg, providers: providers, tenants: ts, overrides: overrides, log: cfg.Loggers.Logger(logging.Coordinator)}
	for _, o := range opts {
		o(c)
	}
	if err := c.newMetrics(); err != nil {
		return nil, err
	}
	if c.signing, err = c.signingGate(); err != nil {
		return nil, fmt.Errorf("coordinator config: %w", err)
	}
	if c.leaderSigner, c.leaderTrust, err = leaderKeys(cfg.LeaderKeyFile, cfg.LeaderTrustedKeysFile); err != nil {
		return nil, fmt.Errorf("coordinator config: %w", err)
	}
	// Read every security file now, so that a bad one stops start-up
	// before anything is bound or connected.
	sec, err := cfg.RESTSecurity.build(context.Background(), c.log, ts)
	if err != nil {
		return nil, fmt.Errorf("coordinator REST security: %w", err)
	}
	c.sec = sec
	return c, nil
}

// Addr is the REST address being served (after Start).
func (c *Coordinator) Addr() string { return c.ln.Addr().String() }

// URL is the REST API's base URL (after Start): https with TLS.
func (c *Coordinator) URL() string { return c.scheme() + "://" + c.Addr() }

// scheme is the REST server's URL scheme.
func (c *Coordinator) scheme() string {
	if c.sec.tls != nil {
		return "https"
	}
	return "http"
}

// Start binds the REST port first (so /health answers "starting" while the
// config topic is read), then starts the herder.
func (c *Coordinator) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", c.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.cfg.Listen, err)
	}
	c.ln = ln
	workerID := c.cfg.AdvertisedAddr
	if workerID == "" {
		workerID = ln.Addr().String()
	}
	auth := c.cfg.NATSAuth
	auth.InboxPrefix = wire.CoordinatorInboxPrefix(c.cfg.GroupID)
	nc, err := natsconn.Connect(c.cfg.NATSURL, "sluice-coordinator", auth, c.cfg.Loggers.Logger(logging.Root))
	if err != nil {
		ln.Close()
		return err
	}
	c.nc = nc
	kafkaOpts := append(kafkautil.ClientOpts(c.cfg.Brokers, kafkaClientID, c.cfg.KafkaSecurity),
		kafkametrics.Hooks(c.cfg.Metrics, kafkaClientID))
	if c.audit, err = c.newAuditLog(kafkaOpts); err != nil {
		ln.Close()
		nc.Close()
		return err
	}
	if c.history, err = c.newHistory(kafkaOpts); err != nil {
		ln.Close()
		nc.Close()
		c.audit.Close(ctx)
		return err
	}
	if c.configHistory, err = c.newConfigHistory(kafkaOpts); err != nil {
		ln.Close()
		nc.Close()
		c.audit.Close(ctx)
		c.history.Close()
		return err
	}
	c.herder = herder.New(c.herderConfig(workerID, auth, kafkaOpts), c.plugins(), nc, herder.WithFaults(c.faults))
	// NATS is back: look at the lease now, not at the next tick, so that
	// writes resume as soon as NATS does.
	nc.SetReconnectHandler(func(*nats.Conn) { c.herder.NATSReconnected() })
	restAPI := httpapi.NewHandler(c.services(),
		httpapi.WithLogger(c.cfg.Loggers.Logger(logging.REST)), httpapi.WithLeaderRouting(c.herder), httpapi.WithBrokerGate(c.herder.Health()),
		httpapi.WithSecurity(c.sec.api), c.auditOption(workerID), httpapi.WithMetrics(c.metrics))
	c.srv = httpapi.NewServer(console.Mount(restAPI, console.Options{
		Sessions: console.Sessions{Authenticator: c.sec.api.Authenticator, Manager: c.sec.api.Sessions},
		Logger:   c.cfg.Loggers.Logger(logging.REST),
	}),
		httpapi.Limits{ReadHeaderTimeout: c.cfg.ReadHeaderTimeout, ReadBodyTimeout: c.cfg.ReadBodyTimeout, MaxHeaderBytes: c.cfg.MaxHeaderBytes})
	c.stopAuthWatch = c.watchAuthFile()
	go func() {
		serve := func() error { return c.srv.Serve(ln) }
		if c.sec.tls != nil {
			serve = func() error { return c.srv.ServeTLS(ln, c.sec.tls) }
		}
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.log.Error("REST server stopped", "err", err)
		}
	}()
	// After the REST port serves (/health says "starting" meanwhile), before
	// the audit trail's and the herder's clients start: a refused credential
	// is one clear error, not their endless retries.
	startErr := kafkautil.StartupProbe(ctx, c.log, c.cfg.Brokers, c.cfg.KafkaSecurity, c.cfg.KafkaProbeTimeout)
	if startErr == nil {
		// The internal topics first: the fleet topic marks the topics
		// Sluice relies on, the audit and history topics among them.
		if err := c.herder.Prepare(ctx); err != nil {
			startErr = fmt.Errorf("start coordinator: %w", err)
		}
	}
	if startErr == nil {
		startErr = c.guardRecordTopics(ctx)
	}
	if startErr == nil {
		startErr = c.startAudit(ctx)
	}
	if startErr == nil {
		startErr = c.startHistory(ctx)
	}
	if startErr == nil {
		if err := c.herder.Start(ctx); err != nil {
			startErr = fmt.Errorf("start coordinator: %w", err)
		}
	}
	if startErr != nil {
		_ = c.srv.Close()
		// What the herder opened before it failed (its broker watch, admin
		// client and stores) closes with it.
		_ = c.herder.Stop(ctx)
		c.audit.Close(ctx)
		c.history.Close()
		c.configHistory.Close()
		nc.Close()
		return startErr
	}
	c.log.Info("coordinator ready", "rest", c.URL(), "console", c.URL()+console.Prefix)
	return nil
}

// Leader reports whether this coordinator leads, and the lease it follows.
func (c *Coordinator) Leader() (bool, wire.LeaderLease) { return c.herder.Leader() }

// CommandSigner returns what signs a command to agents of term as this
// coordinator signs its own, while it leads at term (nil otherwise): for a
// test or tool in the same process that stands in for the leader. Agents
// refuse commands no leader signed.
func (c *Coordinator) CommandSigner(term int64) natsrpc.Signer { return c.herder.CommandSigner(term) }

// RegisteredAgents is the number of agents currently registered.
func (c *Coordinator) RegisteredAgents() int { return c.herder.RegisteredAgents() }

// StopAssigning makes the coordinator send no more task assignments. Call
// it before stopping every agent of a cluster that runs in one process
// (sluice dev), so that agents leaving one after the other hand no tasks to
// each other. It is a no-op before Start.
func (c *Coordinator) StopAssigning() {
	if c.herder != nil {
		c.herder.StopAssigning()
	}
}

// Stop stops serving and closes the clients.
func (c *Coordinator) Stop(ctx context.Context) error {
	var errs []error
	if c.srv != nil {
		errs = append(errs, c.srv.Shutdown(ctx))
	}
	if c.stopAuthWatch != nil {
		c.stopAuthWatch()
	}
	if c.audit != nil {
		c.audit.Close(ctx) // after the REST server: its last writes are recorded
	}
	if c.herder != nil {
		errs = append(errs, c.herder.Stop(ctx))
	}
	if c.history != nil {
		c.history.Close() // after the herder: its last markers are written
	}
	if c.configHistory != nil {
		c.configHistory.Close() // after the herder: every write waited for its entries
	}
	if c.nc != nil {
		c.nc.Close()
	}
	return errors.Join(errs...)
}

// services are what the REST API calls, one service per resource: the
// connectors service for a connector's lifecycle, runtime and plugins; the
// offsets service; the fleet's REST face for agents and fleet operations;
// and for admin, health (server info, health, readiness), the log levels
// and the audit trail.
func (c *Coordinator) services() httpapi.Services {
	conns := c.herder.Connectors()
	plugins := pluginsService{Plugins: conns.Plugins(), Admission: conns.Admission()}
	return httpapi.Services{
		Connectors:    conns,
		Runtime:       runtimeService{Service: conns, lag: c.herder.Lag(), lagHistory: c.herder.LagHistory(), gauges: c.herder.Gauges(), signals: c.herder.Signals()},
		Plugins:       plugins,
		Offsets:       offsetsService{Service: c.herder.Offsets(), move: conns},
		ConfigHistory: c.herder.ConfigHistory(),
		Agents:        c.herder.Fleet(),
		Fleet: fleetService{Service: c.herder.Fleet(), bulk: conns, list: c.herder.FleetList(),
			migrations: migrations.New(migrations.Config{AllowURLs: c.cfg.MigrateAllowURLs, Connectors: conns, Plugins: plugins})},
		Admin: adminService{Monitor: c.herder.Health(), Service: c.herder.Loggers(), audit: c.audit, metrics: c.cfg.Metrics},
	}
}

// offsetsService answers the offsets endpoints: the offsets service, and
// the move of a connector with its offsets, which is the connectors
// service's.
type offsetsService struct {
	*offsets.Service
	move interface {
		MoveConnector(ctx context.Context, name string, req api.MoveRequest) (api.MoveResult, error)
	}
}

// MoveConnector answers POST /sluice/connectors/{name}/move.
func (o offsetsService) MoveConnector(ctx context.Context, name string, req api.MoveRequest) (api.MoveResult, error) {
	return o.move.MoveConnector(ctx, name, req)
}

// fleetService answers the fleet endpoints: the fleet's REST face, the
// bulk actions over connectors, which are the connectors service's, and
// the fleet listing (fleetlist).
type fleetService struct {
	*fleetrest.Service
	bulk interface {
		BulkAction(ctx context.Context, action string, sel api.Selector, includeTasks, onlyFailed bool, allow func(connector string) error) (api.BulkResults, error)
	}
	list       *fleetlist.Lister
	migrations *migrations.Service
}

// Migrate answers POST /sluice/migrations.
func (f fleetService) Migrate(ctx context.Context, req api.MigrationRequest, dryRun bool, allow func(connector string) error) (api.MigrationResult, error) {
	return f.migrations.Migrate(ctx, req, dryRun, allow)
}

// FleetConnectors answers GET /sluice/fleet/connectors.
func (f fleetService) FleetConnectors(ctx context.Context, q api.FleetQuery, visible func(connector string) bool) (api.FleetConnectors, error) {
	return f.list.List(ctx, q, visible)
}

// BulkAction answers POST /sluice/connectors/{action}.
func (f fleetService) BulkAction(ctx context.Context, action string, sel api.Selector, includeTasks, onlyFailed bool, allow func(connector string) error) (api.BulkResults, error) {
	return f.bulk.BulkAction(ctx, action, sel, includeTasks, onlyFailed, allow)
}

// runtimeService is a connector's runtime: the connectors service's status
// reads, a sink's lag (lag) and its last hour (lagHistory), the tasks'
// own gauges (gauges) and the signals handed to them (signals).
type runtimeService struct {
	*connectors.Service
	lag interface {
		ConnectorLag(ctx context.Context, name string) (api.ConnectorLag, error)
	}
	lagHistory interface {
		History(ctx context.Context, name string) (api.LagHistory, error)
	}
	gauges interface {
		ConnectorGauges(ctx context.Context, name string) (api.ConnectorGauges, error)
	}
	signals interface {
		Signal(ctx context.Context, name string, sig api.ConnectorSignal) (api.SignalSent, error)
	}
}

// SignalConnector answers POST /sluice/connectors/{name}/signals.
func (r runtimeService) SignalConnector(ctx context.Context, name string, sig api.ConnectorSignal) (api.SignalSent, error) {
	return r.signals.Signal(ctx, name, sig)
}

// ConnectorGauges answers GET /sluice/connectors/{name}/gauges.
func (r runtimeService) ConnectorGauges(ctx context.Context, name string) (api.ConnectorGauges, error) {
	return r.gauges.ConnectorGauges(ctx, name)
}

// ConnectorLagHistory answers GET /sluice/connectors/{name}/lag/history.
func (r runtimeService) ConnectorLagHistory(ctx context.Context, name string) (api.LagHistory, error) {
	return r.lagHistory.History(ctx, name)
}

// ConnectorLag answers GET /sluice/connectors/{name}/lag.
func (r runtimeService) ConnectorLag(ctx context.Context, name string) (api.ConnectorLag, error) {
	return r.lag.ConnectorLag(ctx, name)
}

// pluginsService is /connector-plugins: the connectors service's plugin
// chooser lists the plugins and their keys, its admission validates.
type pluginsService struct {
	*connectors.Plugins
	*connectors.Admission
}

// plugins returns the configured plugin registry, or the built-in one.
func (c *Coordinator) plugins() *plugins.Registry {
	if c.cfg.Plugins != nil {
		return c.cfg.Plugins
	}
	return plugins.Builtin()
}
