// Package agent is the Sluice agent: the sidecar that runs tasks next to a
// worker host. It registers with the coordinator over NATS, heartbeats, runs
// the tasks it is assigned and carries out offset operations (fencing,
// transactional offset writes, consumer-group changes).
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/agent/internal/javahost"
	"github.com/sluice-io/sluice/agent/internal/liveness"
	"github.com/sluice-io/sluice/agent/internal/metrics"
	"github.com/sluice-io/sluice/agent/internal/offsets"
	"github.com/sluice-io/sluice/agent/internal/readiness"
	"github.com/sluice-io/sluice/agent/internal/runtime"
	"github.com/sluice-io/sluice/agent/internal/transport"
	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect/allowedpaths"
	"github.com/sluice-io/sluice/connect/configprovider"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/kafkametrics"
	"github.com/sluice-io/sluice/shared/kafkasec"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/leasetrust"
	"github.com/sluice-io/sluice/shared/logging"
	"github.com/sluice-io/sluice/shared/natsconn"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/opsserver"
	"github.com/sluice-io/sluice/shared/version"
	"github.com/sluice-io/sluice/shared/wire"
)

// Config configures an agent.
type Config struct {
	// ID names the agent; it must be stable across restarts of the agent.
	ID     string
	Labels map[string]string
	// NATSURL and Brokers locate NATS and Kafka.
	NATSURL string
	// NATSAuth authenticates and secures the NATS connection (the
	// --nats-* flags); zero: anonymous, plain.
	NATSAuth natsconn.Auth
	// LeaderTrustedKeysFile lists the leader public keys (one base64 key a
	// line) whose leases the agent follows: a lease no listed key signed
	// is ignored, with its term and its command key. Empty: every lease is
	// followed, which only a NATS whose permissions keep the lease bucket
	// to coordinators makes safe (docs/security.md).
	LeaderTrustedKeysFile string
	Brokers               string
	// KafkaSecurity secures every Kafka client of the agent — its offsets
	// store, offsets operations, task producers and consumers (TLS, SASL);
	// nil: plaintext without authentication.
	KafkaSecurity *kafkasec.Config
	// KafkaProbeTimeout bounds the start-up check that Kafka accepts the
	// connection's security (zero: kafkautil.DefaultProbeTimeout).
	KafkaProbeTimeout time.Duration
	GroupID           string
	OffsetsTopic      string
	// WorkDir is where relative file paths resolve.
	WorkDir        string
	FlushInterval  time.Duration
	KeyConverter   string
	ValueConverter string
	// HeaderConverter is the worker-level header converter class ("":
	// SimpleHeaderConverter).
	HeaderConverter string
	// ExactlyOnce writes source records and offsets in one transaction.
	ExactlyOnce bool
	// DynamicMembership makes sink tasks dynamic members of their consumer
	// groups, as Kafka Connect's are (--sink-group-membership=dynamic);
	// by default each is a static member with a group.instance.id of its
	// own.
	DynamicMembership bool
	// ShutdownTimeout bounds the final commit of every task on Stop.
	ShutdownTimeout time.Duration
	// ConfigProviders are the config providers whose placeholders in task
	// configs the agent resolves just before a task starts, and the
	// directories the file connectors and the file and directory providers
	// may touch files in. The agent announces those directories, so
	// validation can refuse a path no agent allows.
	ConfigProviders configprovider.Settings
	// Plugins are the plugins this agent can run (nil: the built-in ones).
	// The agent announces them; the coordinator places a task only on an
	// agent that has its plugin.
	Plugins *plugins.Registry
	// Loggers are the process's named loggers (shared/logging); the levels
	// the coordinator sends (PUT /admin/loggers?scope=cluster) are set on
	// them. Nil: loggers of the agent's own, over Logger's handler.
	Loggers *logging.Loggers
	// Logger is where the agent logs when Loggers is nil (nil:
	// slog.Default()).
	Logger *slog.Logger
	// BeforeOffsetCommit is a test seam: see runtime.Config.
	BeforeOffsetCommit func(ctx context.Context, id api.TaskID) error
	// Metrics is the process's Prometheus registry: the agent's series and
	// those of its Kafka clients go there (nil: a registry of the agent's
	// own). Agents sharing one each label their series with their id.
	Metrics *prometheus.Registry
	// MetricsListen, when set, is the host:port of the agent's listener:
	// GET /metrics (Metrics), /healthz and /readyz (opsserver). Empty: no
	// listener (sluice dev serves the shared registry elsewhere).
	MetricsListen string
	// Profiling adds Go's profiles (/debug/pprof/) to the listener of
	// MetricsListen (docs/observability.md).
	Profiling bool
	// ConnectorHost and HostPlugins, when set, are a connector host the
	// agent is given rather than one it runs itself from PluginPath: a
	// seam for tests of the coordinator's side (docs/plugins.md).
	ConnectorHost ConnectorHandler
	HostPlugins   []api.PluginInfo
	// HostTasks, with ConnectorHost, runs the tasks of the given host's
	// plugins (a test seam as ConnectorHost is; nil: they run nowhere).
	HostTasks HostTasks
	// PluginPath is Kafka Connect's plugin.path (--plugin-path): with it
	// the agent runs the Java plugins there in a connector host JVM
	// (docs/plugins.md). Empty: Go plugins only.
	PluginPath []string
	// Java is the java executable of the host (default: $JAVA_HOME/bin/java,
	// then java on PATH).
	Java string
	// ConnectorHostDir holds the built host (make javahost).
	ConnectorHostDir string
	// ConnectorHostHeap is the host JVM's heap option (default -Xmx512m).
	ConnectorHostHeap string
	// OnConnectorEvent receives the events of the connectors the host runs
	// (nil: they are only logged).
	OnConnectorEvent func(wire.PluginConnectorEvent)
}

// Validate checks the config.
func (c *Config) Validate() error {
	var errs []error
	if c.ID == "" {
		errs = append(errs, errors.New("agent id must not be empty"))
	}
	if c.NATSURL == "" {
		errs = append(errs, errors.New("a NATS URL is required"))
	}
	if err := c.NATSAuth.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Brokers == "" {
		errs = append(errs, errors.New("Kafka brokers are required"))
	}
	if c.GroupID == "" || c.OffsetsTopic == "" {
		errs = append(errs, errors.New("group id and offsets topic must not be empty"))
	}
	return errors.Join(errs...)
}

// Agent is a running agent.
type Agent struct {
	cfg       Config
	log       *slog.Logger
	allowed   *allowedpaths.Paths
	providers *configprovider.Transformer
	nc        *nats.Conn
	store     *offsetstore.Store
	stores    *offsetstore.Registry
	exec      *offsets.Executor
	worker    *runtime.Worker
	transport *transport.Transport
	metrics   *metrics.Agent
	kafka     *readiness.Cached
	ops       *opsserver.Server
	// The connector host, with a plugin path (javahost.go).
	host        *javahost.Supervisor
	hostPlugins []api.PluginInfo
	hostTasks   *javahost.Tasks
	connectors  *javahost.Connectors
	// beats keep the agent heard over Kafka; stopFence ends the loop that
	// stops its tasks when it is heard on neither path (fence.go).
	beats     *liveness.Beater
	stopFence context.CancelFunc
	// faults injects a test's faults (WithFaults; nil: none).
	faults faults.Injector
}

// Option configures New beyond its Config: what is no setting of a
// deployment.
type Option func(*Agent)

// WithFaults has inj inject a test's faults at the agent's fault points
// (faults.AgentOffsets, faults.AgentGauges). Production code passes none.
func WithFaults(inj faults.Injector) Option {
	return func(a *Agent) { a.faults = inj }
}

// The Kafka half of readiness: a ping of the agent's admin client, this
// often and bounded by this, so that a probe never waits on Kafka.
const (
	kafkaCheckInterval = 5 * time.Second
	kafkaCheckTimeout  = 3 * time.Second
)

// New makes an agent; Start connects it.
func New(cfg Config, opts ...Option) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("agent config: %w", err)
	}
	if cfg.Loggers == nil {
		if cfg.Logger == nil {
			cfg.Logger = slog.Default()
		}
		cfg.Loggers = logging.FromLogger(cfg.Logger)
	}
	// Absolute (the current directory when unset), as announced: the
	// coordinator judges a task's relative paths against it without
	// knowing this process's directory.
	wd, err := filepath.Abs(cfg.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("agent work dir: %w", err)
	}
	cfg.WorkDir = wd
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	if cfg.Metrics == nil {
		cfg.Metrics = prometheus.NewRegistry()
	}
	a := &Agent{cfg: cfg, log: cfg.logger(logging.Agent)}
	for _, o := range opts {
		o(a)
	}
	if a.providers, a.allowed, err = cfg.ConfigProviders.Build(cfg.logger(logging.AgentTasks)); err != nil {
		return nil, fmt.Errorf("agent config: %w", err)
	}
	return a, nil
}

// logger is the named logger of one of the agent's components, each line
// naming the agent (several may share a process).
func (c *Config) logger(name string) *slog.Logger {
	return c.Loggers.Logger(name).With("agent", c.ID)
}

// ID returns the agent's id.
func (a *Agent) ID() string { return a.cfg.ID }

// Start connects to NATS and Kafka, serves the agent's endpoints and
// registers with the coordinator (retrying until one answers).
func (a *Agent) Start(ctx context.Context) error {
	reg := a.cfg.Plugins
	if reg == nil {
		reg = plugins.Builtin()
	}
	// First: a plugin path the agent cannot serve fails the start before
	// it joins anything.
	if len(a.cfg.PluginPath) > 0 {
		if err := a.startHost(ctx, reg); err != nil {
			return err
		}
	}
	if err := kafkautil.StartupProbe(ctx, a.log, a.cfg.Brokers, a.cfg.KafkaSecurity, a.cfg.KafkaProbeTimeout); err != nil {
		return err
	}
	var trust *leasetrust.Trust
	if a.cfg.LeaderTrustedKeysFile != "" {
		var err error
		if trust, err = leasetrust.ReadTrust(a.cfg.LeaderTrustedKeysFile); err != nil {
			return fmt.Errorf("--leader-trusted-keys-file: %w", err)
		}
	}
	auth := a.cfg.NATSAuth
	auth.InboxPrefix = wire.AgentInboxPrefix(a.cfg.GroupID, a.cfg.ID)
	nc, err := natsconn.Connect(a.cfg.NATSURL, "sluice-agent-"+a.cfg.ID, auth, a.cfg.logger(logging.AgentTransport))
	if err != nil {
		return err
	}
	a.nc = nc
	// Every client of the agent gets an id of its own, starting with this
	// one's, so that its sluice_kafka_… series stand apart.
	base := kafkautil.ClientID("sluice-agent", a.cfg.ID)
	kopts := kafkautil.ClientOpts(a.cfg.Brokers, base, a.cfg.KafkaSecurity)
	kclients := kafkametrics.New(a.cfg.Metrics)
	if a.store, err = offsetstore.New(a.cfg.OffsetsTopic, kclients.With(base, kopts)...); err != nil {
		return err
	}
	if err := a.store.Start(ctx); err != nil {
		// The coordinator creates the topic; tasks read it to its end when they start.
		a.log.Warn("offsets topic not read yet", "err", err)
	}
	// Connectors' own offsets topics (offsets.storage.topic) are followed
	// while a task or an operation needs them, and a minute longer.
	if a.stores, err = offsetstore.NewRegistry(a.store, time.Minute, kclients.With(kafkautil.ClientID(base, "connector-offsets"), kopts)...); err != nil {
		return err
	}
	if a.exec, err = offsets.NewExecutor(a.cfg.logger(logging.AgentOffsets), a.stores, kclients, kafkautil.ClientID(base, "offsets"), kopts...); err != nil {
		return err
	}
	a.beats = liveness.New(a.cfg.GroupID, a.cfg.ID, kclients.With(kafkautil.ClientID(base, "liveness"), kopts), a.cfg.logger(logging.AgentTransport))
	a.metrics = metrics.New(a.cfg.Metrics, a.cfg.ID, a.session)
	var hostTasks runtime.HostTasks // a nil *javahost.Tasks must stay a nil interface
	switch {
	case a.hostTasks != nil:
		hostTasks = a.hostTasks
	case a.cfg.HostTasks != nil:
		hostTasks = a.cfg.HostTasks
	}
	a.worker = runtime.NewWorker(runtime.Config{
		AgentID:               a.cfg.ID,
		GroupID:               a.cfg.GroupID,
		OffsetsTopic:          a.cfg.OffsetsTopic,
		WorkDir:               a.cfg.WorkDir,
		FlushInterval:         a.cfg.FlushInterval,
		KeyConverter:          a.cfg.KeyConverter,
		ValueConverter:        a.cfg.ValueConverter,
		HeaderConverter:       a.cfg.HeaderConverter,
		ExactlyOnce:           a.cfg.ExactlyOnce,
		SinkDynamicMembership: a.cfg.DynamicMembership,
		KafkaOpts:             kopts,
		Brokers:               a.cfg.Brokers,
		Security:              a.cfg.KafkaSecurity,
		KafkaClients:          kclients,
		Metrics:               a.metrics,
		Registry:              reg,
		Providers:             a.providers,
		AllowedPaths:          a.allowed,
		Offsets:               a.stores,
		Logger:                a.cfg.logger(logging.AgentTasks),
		BeforeOffsetCommit:    a.cfg.BeforeOffsetCommit,
		Report:                func(r wire.StatusReport) { a.transport.Report(r) },
		Host:                  hostTasks,
		MayRun:                a.mayRun,
	})
	a.transport = transport.New(transport.Config{AgentID: a.cfg.ID, GroupID: a.cfg.GroupID, Labels: a.cfg.Labels,
		Version: version.Version, Plugins: pluginInfos(reg), Settings: a.settings(), Logger: a.cfg.logger(logging.AgentTransport),
		Loggers: a.cfg.Loggers, HostPlugins: a.hostPluginList(), ConnectorHost: a.connectorHost(),
		LeaderTrust: trust, OnRegistered: a.registered}, nc, a.worker, a.exec, transport.WithFaults(a.faults))
	// NATS is back: read the lease and heartbeat now, not at the next tick.
	nc.SetReconnectHandler(func(*nats.Conn) { a.transport.Poke() })
	if err := a.metrics.Register(); err != nil {
		return err
	}
	a.kafka = readiness.NewCached("kafka", kafkaCheckInterval, kafkaCheckTimeout, a.exec.Ping)
	a.kafka.Start()
	if a.cfg.MetricsListen != "" {
		opts := []opsserver.Option{opsserver.WithChecks(a.Checks), opsserver.WithLiveness(a.Wedged)}
		if a.cfg.Profiling {
			opts = append(opts, opsserver.WithProfiling())
		}
		if a.ops, err = opsserver.Start(a.cfg.MetricsListen, a.cfg.Metrics, a.Ready, opts...); err != nil {
			return fmt.Errorf("agent %s: %w", a.cfg.ID, err)
		}
		a.log.Info("metrics listener started", "addr", a.ops.Addr())
	}
	fctx, fcancel := context.WithCancel(context.Background())
	a.stopFence = fcancel
	go a.fenceLoop(fctx)
	return a.transport.Start()
}

// session is the agent's session with the leader as its gauges show it.
// It runs at every scrape, only once Start has made the transport and the
// worker (the metrics are registered after them).
func (a *Agent) session() metrics.Session {
	acked, lease := a.transport.Session()
	return metrics.Session{Acked: acked, Lease: lease, TasksRunning: a.worker.RunningCount()}
}

// Ready reports why the agent is not ready, or nil: /readyz answers with
// it. An agent is ready once it started, whatever NATS, the leader or
// Kafka do: as a sidecar its readiness is its pod's, and a control-plane
// or broker outage must never take the application beside it out of
// service (its tasks keep running through a NATS outage anyway). Checks
// show what it ignores.
func (a *Agent) Ready(context.Context) error {
	if a.transport == nil || a.kafka == nil {
		return errors.New("agent not started")
	}
	return nil
}

// Connected reports why the agent is not yet part of the cluster, or nil:
// registered with the leader (it acknowledged a heartbeat within the
// lease) and Kafka answering. Readiness does not wait for it (Ready);
// sluice dev does, so that its ready line's agents are there.
func (a *Agent) Connected(context.Context) error {
	if a.transport == nil || a.kafka == nil {
		return errors.New("agent not started")
	}
	return errors.Join(a.transport.Ready(), a.kafka.Err())
}

// Checks are the agent's session with the leader and its Kafka check, for
// /readyz's body: what an operator wants to see, which readiness does not
// depend on (alert on sluice_agent_registered instead).
func (a *Agent) Checks(context.Context) []opsserver.Check {
	if a.transport == nil || a.kafka == nil {
		return nil
	}
	check := func(name string, err error) opsserver.Check {
		c := opsserver.Check{Name: name, OK: err == nil}
		if err != nil {
			c.Message = err.Error()
		}
		return c
	}
	return []opsserver.Check{check("control-plane", a.transport.Ready()), check("kafka", a.kafka.Err())}
}

// Wedged reports why the agent's background loop stopped turning, or nil:
// /healthz answers with it. The Kafka check runs every kafkaCheckInterval,
// each run bounded by its timeout whether Kafka answers or not, so a loop
// that misses many turns is stuck in the process itself.
func (a *Agent) Wedged() error {
	if a.kafka == nil {
		return nil
	}
	return a.kafka.Stuck(10 * (kafkaCheckInterval + kafkaCheckTimeout))
}

// MetricsAddr is the address of the agent's metrics listener ("" when it
// has none).
func (a *Agent) MetricsAddr() string {
	if a.ops == nil {
		return ""
	}
	return a.ops.Addr()
}

// pluginInfos lists what reg holds, as an agent announces it.
func pluginInfos(reg *plugins.Registry) []api.PluginInfo {
	ps := reg.All()
	out := make([]api.PluginInfo, len(ps))
	for i, p := range ps {
		out[i] = api.PluginInfo{Class: p.Class, Type: string(p.Kind), Version: p.Version}
	}
	return out
}

// settings are the agent settings that decide which tasks it accepts, as
// it announces them to the coordinator.
func (a *Agent) settings() map[string]string {
	s := map[string]string{
		"exactly_once_source_support": strconv.FormatBool(a.cfg.ExactlyOnce),
		wire.SettingWorkDir:           a.cfg.WorkDir,
	}
	if a.allowed.Restricted() {
		s[wire.SettingFileAllowedPaths] = a.allowed.String()
	}
	return s
}

// ConnectorEvent tells the leader what a connector the host runs asks for
// on its own (wire.PluginConnectorEvent), best effort. Before Start it does
// nothing: no leader knows the connector.
func (a *Agent) ConnectorEvent(ev wire.PluginConnectorEvent) {
	if a.transport != nil {
		a.transport.ConnectorEvent(ev)
	}
}

// Stop leaves the cluster gracefully: it stops taking commands and
// heartbeating, stops every task (each commits its offsets), then tells the
// coordinator it left — so its tasks move to other agents at once, without
// waiting for the lease — and closes the clients. Commands stop first so the
// coordinator cannot hand a task back to an agent that is shutting down.
func (a *Agent) Stop(ctx context.Context) error {
	if a.stopFence != nil {
		a.stopFence()
	}
	if a.worker != nil {
		a.worker.RefuseAssignments()
	}
	if a.transport != nil {
		a.transport.Stop()
	}
	if a.worker != nil {
		sctx, cancel := context.WithTimeout(ctx, a.cfg.ShutdownTimeout)
		a.worker.StopAll(sctx)
		cancel()
	}
	if a.host != nil {
		a.host.Stop() // after the tasks: their final commits call it
	}
	if a.transport != nil {
		a.transport.Deregister(ctx)
	}
	if a.beats != nil {
		a.beats.Stop()
	}
	if a.exec != nil {
		a.exec.Close()
	}
	if a.stores != nil {
		a.stores.Close()
	}
	if a.store != nil {
		a.store.Close()
	}
	if a.nc != nil {
		a.nc.Close()
	}
	if a.kafka != nil {
		a.kafka.Stop()
	}
	// Last, so that probes answer while the agent shuts down; a stopped
	// agent's series go with it.
	var err error
	if a.ops != nil {
		err = a.ops.Close(ctx)
	}
	a.metrics.Close()
	return err
}
