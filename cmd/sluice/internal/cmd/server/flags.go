package server

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/agent"
	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/connect/allowedpaths"
	"github.com/sluice-io/sluice/connect/clientoverrides"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/shared/labels"
	"github.com/sluice-io/sluice/shared/logging"
)

const defaultConverter = "org.apache.kafka.connect.storage.StringConverter"

// Flags shared by the commands that run Sluice processes.
var (
	natsFlag              = envflag.String("nats", "", "NATS server URL (nats://host:port)")
	kafkaFlag             = envflag.String("kafka", "", "Kafka bootstrap servers (host:port[,host:port…])")
	groupIDFlag           = envflag.String("group-id", "sluice", "the cluster's id: prefix of transactional ids and group of its internal clients")
	configTopic           = envflag.String("config-topic", "sluice-configs", "config topic (1 partition, compacted; created if it never existed, see --internal-topics-automatic-creation)")
	offsetsTopic          = envflag.String("offsets-topic", "sluice-offsets", "offsets topic (25 partitions, compacted; created if it never existed, see --internal-topics-automatic-creation)")
	statusTopic           = envflag.String("status-topic", "sluice-status", "status topic (5 partitions, compacted; created if it never existed, see --internal-topics-automatic-creation)")
	livenessTopic         = envflag.String("liveness-topic", coordinator.DefaultLivenessTopic, "liveness topic: agents write a beat here every 150ms, so the leader knows one cut off from NATS alone is alive and leaves its tasks where they run (1 partition, an hour's retention; created if it never existed)")
	fleetTopic            = envflag.String("fleet-topic", coordinator.DefaultFleetTopic, "fleet topic: agent cordons and drains, maintenance windows, rollouts (1 partition, compacted; created if it never existed, see --internal-topics-automatic-creation)")
	listenFlag            = envflag.String("listen", "127.0.0.1:8083", "coordinator REST address")
	advertiseFlag         = envflag.String("advertised-address", "", "host:port the other coordinators forward writes to, and the coordinator's worker_id (default: the REST address)")
	labelsFlag            = envflag.String("labels", "", "agent labels for placement (k=v,k=v)")
	idFlag                = envflag.String("id", "", "agent id, stable across restarts (default: the host name)")
	workDirFlag           = envflag.String("work-dir", "", "directory relative file paths resolve against (default: the current directory)")
	leaseFlag             = envflag.Duration("agent-lease", 10*time.Second, "an agent that has not heartbeated for this long is lost")
	shutdownFlag          = envflag.Duration("task-shutdown-timeout", 10*time.Second, "how long an operation waits for tasks to confirm they stopped")
	flushFlag             = envflag.Duration("offset-flush-interval", time.Second, "how often a running task commits its offsets (its first position at once, and always on stop)")
	keyConvFlag           = envflag.String("key-converter", defaultConverter, "worker-level key converter class")
	valueConvFlag         = envflag.String("value-converter", defaultConverter, "worker-level value converter class")
	hdrConvFlag           = envflag.String("header-converter", "org.apache.kafka.connect.storage.SimpleHeaderConverter", "worker-level header converter class: writes the headers transformations make")
	logLevelFlag          = envflag.String("log-level", "info", "log level at start: debug, info, warn, error (or TRACE … OFF); PUT /admin/loggers changes it at run time")
	probeFlag             = envflag.Duration("agent-probe-interval", 100*time.Millisecond, "how often the leader asks NATS whether each agent is still connected: one whose connection closed (missed twice in a row) is lost without waiting out its lease; 0: only the lease")
	settleFlag            = envflag.Duration("placement-settle", 2*time.Second, "when agents come to a leader that has none (it took over, or every agent had left), the tasks no agent ever ran wait this long after the first agent registered, so that agents starting together share them; a task whose agent ran it waits for that agent instead, up to its lease; 0: no wait")
	membershipFlag        = envflag.String("sink-group-membership", "static", "static: each sink task joins its consumer group with a group.instance.id of its own, so a crashed agent's sinks resume elsewhere at once and a zombie is fenced by the broker; dynamic: as Kafka Connect (brokers before Kafka 2.4)")
	leaderLease           = envflag.Duration("leader-lease", 6*time.Second, "a leader coordinator that stops renewing its lease keeps it this long")
	eosFlag               = envflag.String("exactly-once-source-support", "disabled", "enabled: source tasks write records and offsets in one transaction")
	headerTimeout         = envflag.Duration("rest-read-header-timeout", coordinator.DefaultReadHeaderTimeout, "a REST request's line and headers must arrive within this, or the connection is closed")
	bodyTimeout           = envflag.Duration("rest-read-body-timeout", coordinator.DefaultReadBodyTimeout, "a REST request's body must arrive within this once its headers are in, or it is answered 408")
	headerBytes           = envflag.Int("rest-max-header-bytes", coordinator.DefaultMaxHeaderBytes, "largest REST request line and headers, in bytes; larger ones are answered 431")
	overridePolicyFlag    = envflag.String("connector-client-config-override-policy", clientoverrides.PolicyAllowlist, "which client config overrides (producer.override.*, consumer.override.*, admin.override.*) connectors may set: None, All, Allowlist (of --connector-client-config-override-allowlist) or Principal (the deprecated alias of an Allowlist of sasl.jaas.config, sasl.mechanism, security.protocol)")
	overrideAllowlistFlag = envflag.String("connector-client-config-override-allowlist", strings.Join(clientoverrides.DefaultAllowlist, ","), "the client config names (group.id, not consumer.override.group.id) the Allowlist policy lets connectors override, comma-separated; empty: none")
	recordKeyFlag         = envflag.String("record-signing-key-file", "", "file holding the key (32 bytes or more, e.g. from openssl rand -hex 32) coordinators sign the records they write for each other with; a record on the config, status, fleet, offsets history, config history or audit topic no coordinator wrote is then ignored. The same file on every coordinator; sluice dev makes one in its data dir")
	migrateAllowFlag      = &cli.StringSliceFlag{Name: "migrate-allow-url", EnvVars: envflag.Env("migrate-allow-url"), Usage: "a Kafka Connect REST URL (http[s]://host:port) POST /sluice/migrations may read, the console's migration from Kafka Connect; repeat for more. None: migrations from the coordinator are off. The coordinator sends it only the credentials a request gives, never the caller's, and follows no redirect"}
	lagDegradedFlag       = envflag.Int("health-sink-lag-degraded", 100_000, "the fleet listing (GET /sluice/fleet/connectors) calls a running sink degraded from this consumer lag, in records, as the coordinator last read it; 0 or less: never")
	tenantsFileFlag       = envflag.String("tenants-file", "", "YAML file of the cluster's tenants: each a connector-name pattern with the topics, consumer groups and secrets its connectors may use (docs/security.md)")
)

func coordinatorFlags() []cli.Flag {
	return append([]cli.Flag{natsFlag, kafkaFlag, listenFlag, advertiseFlag, groupIDFlag, configTopic, offsetsTopic, statusTopic, fleetTopic, livenessTopic, topicCreationFlag, leaseFlag, probeFlag, settleFlag, shutdownFlag, leaderLease, eosFlag,
		lagDegradedFlag, migrateAllowFlag, headerTimeout, bodyTimeout, headerBytes, logLevelFlag, logFormatFlag,
		natsCredsFlag, natsNkeyFlag, natsUserFlag, natsPasswordFlag, natsTokenFlag, natsTLSCAFlag, natsTLSCertFlag, natsTLSKeyFlag,
		kafkaTLSFlag, kafkaTLSCAFlag, kafkaTLSCertFlag, kafkaTLSKeyFlag, kafkaTLSSkipFlag, kafkaSASLMechFlag, kafkaSASLUserFlag, kafkaSASLPassFlag,
		auditTopicFlag, auditRetentionFlag, auditTimeoutFlag, tenantsFileFlag, overridePolicyFlag, overrideAllowlistFlag, recordKeyFlag,
		leaderKeyFlag, leaderTrustFlag, insecureNATSFlag}, append(append(historyFlags(), providerFlags()...), restSecurityFlags()...)...)
}

func agentFlags() []cli.Flag {
	return append([]cli.Flag{natsFlag, kafkaFlag, idFlag, labelsFlag, workDirFlag, groupIDFlag, offsetsTopic, flushFlag, keyConvFlag, valueConvFlag, hdrConvFlag, membershipFlag, shutdownFlag, eosFlag, logLevelFlag, logFormatFlag,
		natsCredsFlag, natsNkeyFlag, natsUserFlag, natsPasswordFlag, natsTokenFlag, natsTLSCAFlag, natsTLSCertFlag, natsTLSKeyFlag,
		kafkaTLSFlag, kafkaTLSCAFlag, kafkaTLSCertFlag, kafkaTLSKeyFlag, kafkaTLSSkipFlag, kafkaSASLMechFlag, kafkaSASLUserFlag, kafkaSASLPassFlag,
		agentMetricsListenFlag, pprofFlag, leaderTrustFlag, insecureNATSFlag}, append(providerFlags(), hostFlags()...)...)
}

// Loggers are the process's named loggers on stderr (loggersTo). In sluice
// dev, the coordinator and the agents share them, so /admin/loggers there
// covers the whole process. An invalid --log-format cannot reach here:
// the flag's check refused it before the command ran; were it to, the
// lines stay text rather than being lost.
func Loggers(c *cli.Context) *logging.Loggers {
	lg, err := loggersTo(c, os.Stderr)
	if err != nil {
		lg = logging.NewText(os.Stderr, slog.LevelInfo)
		lg.Logger(logging.Root).Error("logging as text", "err", err)
	}
	return lg
}

// rootLogger is lg's root logger, or nil without loggers (tests build
// configs without them).
func rootLogger(lg *logging.Loggers) *slog.Logger {
	if lg == nil {
		return nil
	}
	return lg.Logger(logging.Root)
}

// dynamicMembership reads --sink-group-membership: static (the default)
// or dynamic.
func dynamicMembership(c *cli.Context) (bool, error) {
	return twoWay(c, "sink-group-membership", "dynamic", "static")
}

// exactlyOnce reads --exactly-once-source-support: enabled or disabled
// (the default), as Kafka Connect spells it.
func exactlyOnce(c *cli.Context) (bool, error) {
	return twoWay(c, "exactly-once-source-support", "enabled", "disabled")
}

// twoWay reads a flag that takes one of two words, in any case: on is
// true, off (or nothing) false.
func twoWay(c *cli.Context, name, on, off string) (bool, error) {
	switch v := strings.ToLower(c.String(name)); v {
	case on:
		return true, nil
	case off, "":
		return false, nil
	default:
		return false, fmt.Errorf("--%s must be %s or %s, not %q", name, on, off, v)
	}
}

func coordinatorConfig(c *cli.Context, lg *logging.Loggers) (coordinator.Config, error) {
	eos, err := exactlyOnce(c)
	if err != nil {
		return coordinator.Config{}, err
	}
	ksec, err := kafkaSecurity(c, rootLogger(lg))
	if err != nil {
		return coordinator.Config{}, err
	}
	return coordinator.Config{
		KafkaSecurity:                ksec,
		ExactlyOnce:                  eos,
		ConfigProviders:              providerSettings(c),
		Listen:                       c.String("listen"),
		AdvertisedAddr:               c.String("advertised-address"),
		NATSURL:                      c.String("nats"),
		NATSAuth:                     natsAuth(c),
		Brokers:                      c.String("kafka"),
		GroupID:                      c.String("group-id"),
		ConfigTopic:                  c.String("config-topic"),
		OffsetsTopic:                 c.String("offsets-topic"),
		StatusTopic:                  c.String("status-topic"),
		FleetTopic:                   c.String("fleet-topic"),
		LivenessTopic:                c.String("liveness-topic"),
		DisableInternalTopicCreation: topicCreationDisabled(c),
		AgentLease:                   c.Duration("agent-lease"),
		SinkLagDegraded:              sinkLagDegraded(c.Int("health-sink-lag-degraded")),
		MigrateAllowURLs:             c.StringSlice("migrate-allow-url"),
		AgentProbe:                   c.Duration("agent-probe-interval"),
		PlacementSettle:              c.Duration("placement-settle"),
		TaskShutdownTimeout:          c.Duration("task-shutdown-timeout"),
		LeaderLease:                  c.Duration("leader-lease"),
		ReadHeaderTimeout:            c.Duration("rest-read-header-timeout"),
		ReadBodyTimeout:              c.Duration("rest-read-body-timeout"),
		MaxHeaderBytes:               c.Int("rest-max-header-bytes"),
		Audit:                        auditConfig(c),
		OffsetsHistory:               historyConfig(c),
		ConfigHistory:                configHistoryConfig(c),
		LagHistoryInterval:           c.Duration("lag-history-interval"),
		RESTSecurity:                 restSecurity(c),
		TenantsFile:                  c.String("tenants-file"),
		RecordSigningKeyFile:         c.String("record-signing-key-file"),
		LeaderKeyFile:                c.String("leader-key-file"),
		LeaderTrustedKeysFile:        c.String("leader-trusted-keys-file"),
		ClientOverridePolicy:         c.String("connector-client-config-override-policy"),
		ClientOverrideAllowlist:      allowedpaths.SplitList(c.String("connector-client-config-override-allowlist")),
		Loggers:                      lg,
		Logger:                       rootLogger(lg),
		Metrics:                      NewRegistry(),
	}, nil
}

func agentConfig(c *cli.Context, lg *logging.Loggers) (agent.Config, error) {
	lbls, err := labels.Parse(c.String("labels"))
	if err != nil {
		return agent.Config{}, err
	}
	eos, err := exactlyOnce(c)
	if err != nil {
		return agent.Config{}, err
	}
	dynamic, err := dynamicMembership(c)
	if err != nil {
		return agent.Config{}, err
	}
	ksec, err := kafkaSecurity(c, rootLogger(lg))
	if err != nil {
		return agent.Config{}, err
	}
	id := c.String("id")
	if id == "" {
		if id, err = os.Hostname(); err != nil {
			return agent.Config{}, err
		}
	}
	pluginPath, java, hostDir := hostSettings(c)
	return agent.Config{
		ID:                    id,
		Labels:                lbls,
		NATSURL:               c.String("nats"),
		NATSAuth:              natsAuth(c),
		Brokers:               c.String("kafka"),
		LeaderTrustedKeysFile: c.String("leader-trusted-keys-file"),
		KafkaSecurity:         ksec,
		GroupID:               c.String("group-id"),
		OffsetsTopic:          c.String("offsets-topic"),
		WorkDir:               c.String("work-dir"),
		FlushInterval:         c.Duration("offset-flush-interval"),
		KeyConverter:          c.String("key-converter"),
		ValueConverter:        c.String("value-converter"),
		HeaderConverter:       c.String("header-converter"),
		ShutdownTimeout:       c.Duration("task-shutdown-timeout"),
		ExactlyOnce:           eos,
		DynamicMembership:     dynamic,
		ConfigProviders:       providerSettings(c),
		Loggers:               lg,
		Logger:                rootLogger(lg),
		PluginPath:            pluginPath,
		Java:                  java,
		ConnectorHostDir:      hostDir,
	}, nil
}

// holdOffsetsEnv names a test-only environment variable that only a binary
// built with -tags sluicetest reads (seam_on.go); the shipped binary ignores
// it (seam_off.go).
const holdOffsetsEnv = "SLUICE_TEST_HOLD_OFFSETS"

// sinkLagDegraded is the coordinator's SinkLagDegraded for the flag's
// value: none below 1 (the flag says "never" where the config says
// "default").
func sinkLagDegraded(n int) int64 {
	if n <= 0 {
		return -1
	}
	return int64(n)
}
