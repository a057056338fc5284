package sluicetest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-io/sluice/agent"
	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect/configprovider"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/shared/embedded"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/leasetrust"
	"github.com/sluice-io/sluice/shared/natsconn"
	"github.com/sluice-io/sluice/shared/natsperm"
	"github.com/sluice-io/sluice/sluicetest/internal/defaults"
)

// KafkaEnv names the environment variable that points the tests at a real
// Kafka broker instead of the embedded one.
const KafkaEnv = "SLUICE_TEST_KAFKA"

// RealKafka reports whether the tests run against a real Kafka broker.
func RealKafka() bool { return os.Getenv(KafkaEnv) != "" }

// Options shape a test cluster.
type Options struct {
	// Agents is the number of agents (default 2).
	Agents int
	// Labels, when set, gives agent i the labels Labels[i].
	Labels []map[string]string
	// Plugins, when set and not nil at i, gives agent i only those plugins.
	Plugins []*plugins.Registry
	// ConnectorHosts, when set and not nil at i, give agent i a connector
	// host: Host serves the leader's operations on Java connectors, whose
	// plugins are Plugins (the agent's HostPlugins).
	ConnectorHosts []*ConnectorHost
	// PluginPath, when set, runs every agent with this --plugin-path and
	// its connector host JVM, built in ConnectorHostDir (make javahost).
	PluginPath       []string
	ConnectorHostDir string
	// CoordinatorPlugins, when set, are the coordinator's plugins.
	CoordinatorPlugins *plugins.Registry
	// Lease is the agent lease (default 3s); ShutdownTimeout the task
	// shutdown timeout (default 5s); FlushInterval the offset flush interval
	// (default 200ms).
	Lease           time.Duration
	ShutdownTimeout time.Duration
	FlushInterval   time.Duration
	// ValueConverter overrides the worker-level value converter.
	ValueConverter string
	// Faults injects faults (test seam, shared/faults) into every
	// coordinator and agent of the cluster: it can fail or hold a named
	// step (a create's, a move's, an offsets change's), the status writer
	// (faults.StatusWrite) and an agent's offsets requests
	// (faults.AgentOffsets).
	Faults faults.Injector
	// BeforeOffsetCommit is passed to every agent (test seam).
	BeforeOffsetCommit func(ctx context.Context, id api.TaskID) error
	// AgentFaults, when set, is agent i's own injector, for tests that
	// hold up one agent and not another; it is asked after Faults.
	AgentFaults func(agent int) faults.Injector
	// Backends, when set, are the NATS server and broker to run on, shared
	// with other clusters; by default the cluster starts its own.
	Backends *Backends
	// ReadHeaderTimeout and ReadBodyTimeout, when set, bound how long the
	// coordinator's REST server waits for a request's headers and body.
	ReadHeaderTimeout time.Duration
	ReadBodyTimeout   time.Duration
	// GroupID overrides the cluster's group id (default: its Prefix). The
	// internal topics are named after the Prefix either way, so clusters
	// sharing a broker never share a topic.
	GroupID string
	// NATSMaxPayload, when set and Backends is not, starts the cluster's
	// NATS server with this max_payload instead of NATS's 1 MiB.
	NATSMaxPayload int32
	// LogLevel is the level the processes log at (nil: warn); every line
	// counts in Cluster.LogLines.
	LogLevel slog.Leveler
	// ConfigProviders are the --config-providers of the coordinator and of
	// every agent.
	ConfigProviders []string
	// FileAllowedPaths, when set and not nil at i, are agent i's
	// --file-allowed-paths.
	FileAllowedPaths [][]string
	// RESTSecurity is every coordinator's REST security (HTTPS, auth).
	RESTSecurity coordinator.RESTSecurity
	// TenantsFile is every coordinator's --tenants-file.
	TenantsFile string
	// RecordSigningKeyFile is every coordinator's --record-signing-key-file
	// (SetRecordSigningKey changes it for the next start).
	RecordSigningKeyFile string
	// OverridePolicy and OverrideAllowlist are every coordinator's client
	// config override policy (empty: Sluice's default).
	OverridePolicy    string
	OverrideAllowlist []string
	// SecureNATS, when Backends is not set, starts the cluster's NATS
	// server with the configuration deploy/nats ships: a user per
	// coordinator and per agent, each with its role's permissions, nkeys
	// in Cluster.NATSCreds. Anonymous clients cannot connect.
	SecureNATS bool
	// AgentMetrics gives every agent a metrics listener on a free loopback
	// port (its /metrics, /healthz and /readyz), over a registry of its
	// own, as each agent were a process: see AgentScrape and AgentProbe.
	AgentMetrics bool
	// ExactlyOnce runs the coordinator and every agent with exactly-once
	// source support: records and offsets in one transaction.
	ExactlyOnce bool
	// AgentNATS gives agent i the NATS URL AgentNATS[i] in place of the
	// cluster's (a proxy a test can cut); "" or beyond: the cluster's.
	AgentNATS []string
	// LeaderLease is every coordinator's --leader-lease (default 2s, short
	// for tests; production's default is 6s).
	LeaderLease time.Duration
	// AgentProbe is the coordinator's --agent-probe-interval: 100ms (the
	// flag's default) unless set; negative: no probes, only the lease.
	AgentProbe time.Duration
	// PlacementSettle is the coordinator's --placement-settle (default 0:
	// a start holds no task back, so that tests place at once).
	PlacementSettle time.Duration
	// MigrateAllowURLs are every coordinator's --migrate-allow-url: the
	// Kafka Connect URLs POST /sluice/migrations may read (a
	// sluicetest/fakeconnect server's, in a test).
	MigrateAllowURLs []string
	// LagHistoryInterval is the coordinator's --lag-history-interval
	// (default 0: the coordinator's, 15s).
	LagHistoryInterval time.Duration
}

// ConnectorHost is an agent's connector host in a test: an implementation
// of the Java plugins' Connector side and the plugins it announces.
type ConnectorHost struct {
	Host    agent.ConnectorHandler
	Plugins []api.PluginInfo
	// Tasks, when set, runs the tasks of Plugins on the agent (nil: the
	// agent runs none of them).
	Tasks agent.HostTasks
}

// Cluster is a running test cluster.
type Cluster struct {
	T      testing.TB
	Prefix string
	// GroupID is the cluster's --group-id: its Prefix unless Options.GroupID
	// set it.
	GroupID string
	NATSURL string
	Brokers string
	// NATSCreds are the nkey seed files of the coordinator (named
	// "coordinator") and of every agent, by id, when Options.SecureNATS
	// secured the NATS server.
	NATSCreds natsperm.Files
	// WorkDir is the agents' working directory: relative file paths of file
	// connectors resolve here.
	WorkDir string
	URL     string
	// Headers go with every request of Do and the helpers built on it
	// (name, value…): a test of a secured cluster puts credentials here.
	Headers []string

	Coordinator *coordinator.Coordinator
	Agents      []*agent.Agent
	// LeaderKey is the leader key the cluster's coordinators sign their
	// leases with; LeaderTrustedKeysFile lists its public half, the only
	// key every process trusts: pinned, as production runs.
	LeaderKey             *leasetrust.Signer
	LeaderTrustedKeysFile string

	opts      Options
	coordCfg  coordinator.Config
	agentCfgs []agent.Config
	logOn     *atomic.Bool
	logs      *logCapture
	// extra counts the coordinators StartExtraCoordinator started.
	extra int
}

// LogLines counts the log lines the cluster's processes wrote so far, at
// Options.LogLevel or above: a test can bound how much a fault makes them log.
func (c *Cluster) LogLines() int64 { return int64(c.logs.count()) }

var unsafe = regexp.MustCompile(`[^a-zA-Z0-9]+`)

// Start starts a cluster and registers its shutdown with t.Cleanup. It
// returns once every agent registered with the coordinator.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	defaults.Fill(&opts.Agents, &opts.Lease, &opts.ShutdownTimeout, &opts.FlushInterval)
	if opts.LogLevel == nil {
		opts.LogLevel = LogLevel
	}
	switch {
	case opts.AgentProbe == 0:
		opts.AgentProbe = 100 * time.Millisecond
	case opts.AgentProbe < 0:
		opts.AgentProbe = 0
	}
	c := &Cluster{T: t, opts: opts, WorkDir: t.TempDir(), Prefix: uniquePrefix(t)}
	c.GroupID = c.Prefix
	if opts.GroupID != "" {
		c.GroupID = opts.GroupID
	}
	if opts.Backends == nil {
		var nopts []embedded.NATSOption
		if opts.SecureNATS {
			nopts = append(nopts, c.secureNATS(opts.Agents))
		}
		if opts.NATSMaxPayload > 0 {
			nopts = append(nopts, embedded.MaxPayload(opts.NATSMaxPayload))
		}
		be := StartBackends(t, nopts...)
		opts.Backends = &be
	}
	c.NATSURL, c.Brokers = opts.Backends.NATSURL, opts.Backends.Brokers
	c.logOn = &atomic.Bool{}
	c.logOn.Store(true)
	c.logs = &logCapture{}
	c.coordCfg = coordinator.Config{
		Listen:                  FreeAddr(t),
		NATSURL:                 c.NATSURL,
		Brokers:                 c.Brokers,
		KafkaSecurity:           SecurityFor(c.Brokers),
		GroupID:                 c.GroupID,
		ConfigTopic:             c.Prefix + "-configs",
		OffsetsTopic:            c.Prefix + "-offsets",
		StatusTopic:             c.Prefix + "-status",
		FleetTopic:              c.Prefix + "-fleet",
		LivenessTopic:           c.Prefix + "-liveness",
		OffsetsPartitions:       5,
		StatusPartitions:        2,
		AgentLease:              opts.Lease,
		AgentProbe:              opts.AgentProbe,
		PlacementSettle:         opts.PlacementSettle,
		TaskShutdownTimeout:     opts.ShutdownTimeout,
		LeaderLease:             cmp.Or(opts.LeaderLease, 2*time.Second),
		ConfigProviders:         configprovider.Settings{Providers: opts.ConfigProviders},
		Plugins:                 opts.CoordinatorPlugins,
		ReadHeaderTimeout:       opts.ReadHeaderTimeout,
		ReadBodyTimeout:         opts.ReadBodyTimeout,
		Audit:                   coordinator.AuditConfig{Topic: c.Prefix + "-audit"},
		OffsetsHistory:          coordinator.OffsetsHistoryConfig{Topic: c.Prefix + "-offsets-history"},
		ConfigHistory:           coordinator.ConfigHistoryConfig{Topic: c.Prefix + "-config-history"},
		LagHistoryInterval:      opts.LagHistoryInterval,
		RESTSecurity:            opts.RESTSecurity,
		TenantsFile:             opts.TenantsFile,
		RecordSigningKeyFile:    opts.RecordSigningKeyFile,
		ClientOverridePolicy:    opts.OverridePolicy,
		ClientOverrideAllowlist: opts.OverrideAllowlist,
		ExactlyOnce:             opts.ExactlyOnce,
		MigrateAllowURLs:        opts.MigrateAllowURLs,
	}
	c.coordCfg.NATSAuth = natsconn.Auth{NkeySeedFile: c.NATSCreds.Coordinators[CoordinatorUser]}
	c.LeaderKey, c.coordCfg.LeaderKeyFile, c.LeaderTrustedKeysFile = pinLeaderKey(t)
	for i := 0; i < opts.Agents; i++ {
		cfg := agent.Config{
			ID:                    agentID(i),
			NATSAuth:              natsconn.Auth{NkeySeedFile: c.NATSCreds.Agents[agentID(i)]},
			NATSURL:               c.NATSURL,
			Brokers:               c.Brokers,
			KafkaSecurity:         SecurityFor(c.Brokers),
			GroupID:               c.GroupID,
			OffsetsTopic:          c.coordCfg.OffsetsTopic,
			WorkDir:               c.WorkDir,
			LeaderTrustedKeysFile: c.LeaderTrustedKeysFile,
			FlushInterval:         opts.FlushInterval,
			KeyConverter:          "org.apache.kafka.connect.storage.StringConverter",
			ValueConverter:        "org.apache.kafka.connect.storage.StringConverter",
			ShutdownTimeout:       opts.ShutdownTimeout,
			BeforeOffsetCommit:    opts.BeforeOffsetCommit,
			ConfigProviders:       configprovider.Settings{Providers: opts.ConfigProviders},
			ExactlyOnce:           opts.ExactlyOnce,
		}
		if opts.AgentMetrics {
			cfg.MetricsListen = "127.0.0.1:0"
		}
		if i < len(opts.AgentNATS) && opts.AgentNATS[i] != "" {
			cfg.NATSURL = opts.AgentNATS[i]
		}
		if i < len(opts.FileAllowedPaths) {
			cfg.ConfigProviders.FileAllowedPaths = opts.FileAllowedPaths[i]
		}
		if opts.ValueConverter != "" {
			cfg.ValueConverter = opts.ValueConverter
		}
		if i < len(opts.Labels) {
			cfg.Labels = opts.Labels[i]
		}
		if i < len(opts.Plugins) {
			cfg.Plugins = opts.Plugins[i]
		}
		cfg.PluginPath, cfg.ConnectorHostDir = opts.PluginPath, opts.ConnectorHostDir
		if i < len(opts.ConnectorHosts) && opts.ConnectorHosts[i] != nil {
			cfg.ConnectorHost, cfg.HostPlugins = opts.ConnectorHosts[i].Host, opts.ConnectorHosts[i].Plugins
			cfg.HostTasks = opts.ConnectorHosts[i].Tasks
		}
		c.agentCfgs = append(c.agentCfgs, cfg)
	}
	t.Cleanup(c.shutdown)
	c.StartCoordinator()
	c.Agents = make([]*agent.Agent, opts.Agents)
	for i := range c.agentCfgs {
		c.StartAgent(i)
	}
	c.WaitAgents(opts.Agents)
	return c
}

// pinLeaderKey makes a cluster's leader key and the file of its public key.
func pinLeaderKey(t testing.TB) (s *leasetrust.Signer, keyFile, trustedFile string) {
	t.Helper()
	dir := t.TempDir()
	keyFile, trustedFile = filepath.Join(dir, "leader.key"), filepath.Join(dir, "leader-trusted.keys")
	s, err := leasetrust.WriteKey(keyFile)
	if err == nil {
		err = leasetrust.WriteTrusted(trustedFile, s)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s, keyFile, trustedFile
}

// agentID is the id of the cluster's agent i.
func agentID(i int) string { return fmt.Sprintf("agent-%d", i+1) }

// CoordinatorUser names the coordinators' NATS user of a cluster with
// Options.SecureNATS.
const CoordinatorUser = "coordinator"

// secureNATS makes the nkeys of the coordinator and of n agents and the
// NATS server's configuration from deploy/nats, and returns the option
// that starts the server with it.
func (c *Cluster) secureNATS(n int) embedded.NATSOption {
	c.T.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = agentID(i)
	}
	files, err := natsperm.Generate(c.T.TempDir(), natsperm.Config{GroupID: c.GroupID}, []string{CoordinatorUser}, ids)
	if err != nil {
		c.T.Fatal(err)
	}
	c.NATSCreds = files
	return embedded.ConfigFile(files.Config)
}

// agentFaults is agent i's injector: the cluster-wide one, then the
// agent's own.
func (c *Cluster) agentFaults(i int) faults.Injector {
	if c.opts.AgentFaults == nil {
		return c.opts.Faults
	}
	return faults.Join(c.opts.Faults, c.opts.AgentFaults(i))
}

func uniquePrefix(t testing.TB) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	name := strings.Trim(unsafe.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(name) > 40 {
		name = name[len(name)-40:]
	}
	return "t-" + name + "-" + hex.EncodeToString(b)
}

// Name returns a name unique to this cluster, for topics and connectors
// that must not collide with other tests on a shared broker.
func (c *Cluster) Name(base string) string { return c.Prefix + "-" + base }

// StartCoordinator starts (or restarts) the coordinator. Each start has
// loggers of its own at the kit's level, as a restarted process would.
func (c *Cluster) StartCoordinator() {
	c.T.Helper()
	co := c.startCoordinator(c.coordCfg, "coordinator")
	c.Coordinator, c.URL = co, co.URL()
	// Later restarts keep the same address, as a real deployment would:
	// one from FreeAddr, below the ephemeral range, which no other test's
	// connection takes while the coordinator is down.
	c.coordCfg.Listen = co.Addr()
}

// SetRecordSigningKey makes the coordinators started from now on sign
// their records with the key in file: a coordinator upgraded to signing.
func (c *Cluster) SetRecordSigningKey(file string) { c.coordCfg.RecordSigningKeyFile = file }

// StartExtraCoordinator starts one more coordinator of the cluster, on a
// port of its own, and stops it at the test's cleanup; it follows the
// leader or takes over as any coordinator does. Its log lines carry
// process=coordinator-<n>, n counting from 2. Requests reach it at the URL
// returned (Do sends them); the cluster's own helpers keep using c.URL.
func (c *Cluster) StartExtraCoordinator() (*coordinator.Coordinator, string) {
	c.T.Helper()
	c.extra++
	cfg := c.coordCfg
	cfg.Listen = "127.0.0.1:0"
	co := c.startCoordinator(cfg, fmt.Sprintf("coordinator-%d", c.extra+1))
	c.T.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = co.Stop(ctx)
	})
	return co, co.URL()
}

// TryStartCoordinator starts (or restarts) the coordinator as
// StartCoordinator does, but returns the error of a start that fails
// instead of failing the test.
func (c *Cluster) TryStartCoordinator() error {
	c.T.Helper()
	co, err := c.tryStartCoordinator(c.coordCfg, "coordinator")
	if err != nil {
		return err
	}
	c.Coordinator, c.URL = co, co.URL()
	c.coordCfg.Listen = co.Addr()
	return nil
}

// ChangeCoordinatorConfig changes the config of the coordinators started
// from now on (a flag changed before a restart).
func (c *Cluster) ChangeCoordinatorConfig(change func(*coordinator.Config)) { change(&c.coordCfg) }

// startCoordinator starts a coordinator of cfg whose logs name process.
func (c *Cluster) startCoordinator(cfg coordinator.Config, process string) *coordinator.Coordinator {
	c.T.Helper()
	co, err := c.tryStartCoordinator(cfg, process)
	if err != nil {
		c.T.Fatal(err)
	}
	return co
}

// tryStartCoordinator starts a coordinator of cfg whose logs name process.
func (c *Cluster) tryStartCoordinator(cfg coordinator.Config, process string) (*coordinator.Coordinator, error) {
	cfg.Loggers = c.loggers(process)
	co, err := coordinator.New(cfg, coordinator.WithFaults(c.opts.Faults))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := co.Start(ctx); err != nil {
		return nil, err
	}
	return co, nil
}

// StopCoordinator stops the coordinator.
func (c *Cluster) StopCoordinator() {
	if c.Coordinator == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = c.Coordinator.Stop(ctx)
	c.Coordinator = nil
}

// StartAgent starts (or restarts) agent i, with loggers of its own at the
// kit's level, as a restarted process would.
func (c *Cluster) StartAgent(i int) {
	c.T.Helper()
	if err := c.startAgent(i); err != nil {
		c.T.Fatal(err)
	}
}

// startAgent starts agent i; safe to call for several agents at once.
func (c *Cluster) startAgent(i int) error {
	cfg := c.agentCfgs[i]
	cfg.Loggers = c.loggers(cfg.ID)
	a, err := agent.New(cfg, agent.WithFaults(c.agentFaults(i)))
	if err != nil {
		return fmt.Errorf("agent %s: %w", cfg.ID, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := a.Start(ctx); err != nil {
		return fmt.Errorf("start agent %s: %w", cfg.ID, err)
	}
	c.Agents[i] = a
	return nil
}

// StartAgents starts (or restarts) the agents ids at once, each in a
// goroutine of its own, as agents that start together do, and returns once
// every one has started.
func (c *Cluster) StartAgents(ids ...int) {
	c.T.Helper()
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for n, i := range ids {
		wg.Go(func() { errs[n] = c.startAgent(i) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.T.Fatal(err)
	}
}

// StopAgent stops agent i gracefully: its tasks commit and stop.
func (c *Cluster) StopAgent(i int) {
	if c.Agents[i] == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = c.Agents[i].Stop(ctx)
	c.Agents[i] = nil
}

// StopAgents stops the agents ids gracefully at once, as a fleet that
// restarts together (or sluice dev stopping) does.
func (c *Cluster) StopAgents(ids ...int) {
	var wg sync.WaitGroup
	for _, i := range ids {
		a := c.Agents[i]
		if a == nil {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = a.Stop(ctx)
		})
		c.Agents[i] = nil
	}
	wg.Wait()
}

// WaitAgents waits until n agents are registered, as GET /health's sibling
// NATS service discovery shows them.
func (c *Cluster) WaitAgents(n int) {
	c.T.Helper()
	Eventually(c.T, 20*time.Second, func() (bool, string) {
		got := c.Coordinator.RegisteredAgents()
		return got >= n, fmt.Sprintf("%d of %d agents registered", got, n)
	})
}

func (c *Cluster) shutdown() {
	for i := range c.Agents {
		c.StopAgent(i)
	}
	c.StopCoordinator()
	c.logOn.Store(false)
}
