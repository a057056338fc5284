package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/urfave/cli/v2"
	"go.uber.org/fx"

	"github.com/sluice-io/sluice/agent"
	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/shared/embedded"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/leasetrust"
	"github.com/sluice-io/sluice/shared/logging"
	"github.com/sluice-io/sluice/shared/opsserver"
)

// Dev is `sluice dev`: a whole Sluice in one process, with an embedded
// NATS server and Kafka broker, for a first run.
func Dev() *cli.Command {
	flags := append(coordinatorFlags(),
		&cli.IntFlag{Name: "agents", Value: 2, Usage: "number of agents to run", EnvVars: envflag.Env("agents")},
		envflag.String("data-dir", ".sluice/dev", "where the embedded broker and NATS keep their data (kept across restarts)"),
		envflag.String("nats-listen", "", "address of the embedded NATS server (default: a free loopback port)"),
		envflag.String("kafka-listen", "", "address of the embedded Kafka broker (default: a free loopback port)"),
		workDirFlag, flushFlag, keyConvFlag, valueConvFlag, hdrConvFlag, membershipFlag, devSecureFlag,
		devMetricsListenFlag, pprofFlag,
	)
	return &cli.Command{
		Name:   "dev",
		Usage:  "run everything in one process: embedded NATS and Kafka, a coordinator and agents",
		Flags:  flags,
		Action: runDev,
		// `sluice dev kafka`: the embedded broker alone (devkafka.go).
		Subcommands: []*cli.Command{devKafkaCommand()},
	}
}

// DevConfigs builds the coordinator's and the agents' configs for dev mode.
// They share one set of loggers, the process's: a worker-scope change of
// /admin/loggers applies to the whole dev process, agents included.
func DevConfigs(c *cli.Context, lg *logging.Loggers, natsURL, brokers string) (coordinator.Config, []agent.Config, error) {
	ccfg, err := coordinatorConfig(c, lg)
	if err != nil {
		return ccfg, nil, err
	}
	ccfg.NATSURL, ccfg.Brokers = natsURL, brokers
	var acfgs []agent.Config
	for i := 1; i <= c.Int("agents"); i++ {
		acfg, err := agentConfig(c, lg)
		if err != nil {
			return ccfg, nil, err
		}
		acfg.ID = fmt.Sprintf("agent-%d", i)
		acfg.NATSURL, acfg.Brokers = natsURL, brokers
		acfgs = append(acfgs, acfg)
	}
	return ccfg, acfgs, nil
}

// devFaults is the fault injector of a dev process's agents, when a test
// build supplies one (WithFaults).
type devFaults struct {
	fx.In
	Faults faults.Injector `optional:"true"`
}

// DevApp is the dev process's graph: one coordinator and the agents. The
// agents stop before the coordinator (fx stops in reverse order), and a
// shutdown hands nothing over: the coordinator first stops assigning, then
// every agent stops at once, each stopping its own tasks.
//
// The processes share one Prometheus registry, reg, which the coordinator's
// /metrics serves, and --metrics-listen when set (with opts: --pprof).
func DevApp(ccfg coordinator.Config, acfgs []agent.Config, reg *prometheus.Registry, metricsListen string, opts ...opsserver.Option) []fx.Option {
	agents := make([]*agent.Agent, len(acfgs))
	ccfg.Metrics = reg
	return append(coordinatorApp(ccfg), fx.Invoke(func(lc fx.Lifecycle, coord *coordinator.Coordinator, in devFaults) error {
		for i, cfg := range acfgs {
			cfg.Metrics = reg
			a, err := agent.New(cfg, agent.WithFaults(in.Faults))
			if err != nil {
				return err
			}
			agents[i] = a
		}
		lc.Append(fx.Hook{
			OnStart: func(ctx context.Context) error {
				for i, a := range agents {
					if err := a.Start(ctx); err != nil {
						// fx stops only hooks that started: stop
						// the agents this one started, and a.
						return errors.Join(fmt.Errorf("start agent %s: %w", a.ID(), err), stopAgents(ctx, agents[:i+1]))
					}
				}
				if err := awaitAgents(ctx, agents); err != nil {
					return errors.Join(err, stopAgents(ctx, agents))
				}
				return nil
			},
			OnStop: func(ctx context.Context) error {
				coord.StopAssigning()
				return stopAgents(ctx, agents)
			},
		})
		return nil
	}), devMetricsListener(metricsListen, reg, agents, opts...))
}

// awaitAgents waits until every agent is ready — registered with the
// leader, Kafka answering — so that the ready line's "agents=N" is true when
// it is printed: a request right after it finds the agents there (a file
// connector's path is checked against their --file-allowed-paths, which a
// coordinator that knows no agent yet cannot do). ctx bounds the wait (the
// start timeout); a restart after a crash may wait out the old leader's
// lease first.
func awaitAgents(ctx context.Context, agents []*agent.Agent) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for _, a := range agents {
		for {
			err := a.Connected(ctx)
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("agent %s not ready: %w", a.ID(), err)
			case <-tick.C:
			}
		}
	}
	return nil
}

// stopAgents stops the agents in parallel.
func stopAgents(ctx context.Context, agents []*agent.Agent) error {
	errs := make([]error, len(agents))
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Go(func() {
			if err := a.Stop(ctx); err != nil {
				errs[i] = fmt.Errorf("stop agent %s: %w", a.ID(), err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func runDev(c *cli.Context) error {
	dataDir := c.String("data-dir")
	natsURL, brokers := c.String("nats"), c.String("kafka")
	lg := Loggers(c)
	if brokers == "" && kafkaSecurityOptions(c).Enabled() {
		// Silently dropping them would give a plaintext run the user
		// believes is secured.
		return errors.New("the --kafka-tls* and --kafka-sasl-* flags secure the connection to a Kafka given with --kafka; the embedded broker is plaintext")
	}
	secure := c.Bool("secure")
	// The configs are built before the embedded servers start, so that
	// --secure can make their credentials first; the addresses are filled
	// in once the servers listen.
	ccfg, acfgs, err := DevConfigs(c, lg, natsURL, brokers)
	if err != nil {
		return err
	}
	if natsURL == "" {
		dir := filepath.Join(dataDir, "nats")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		var opts []embedded.NATSOption
		if secure {
			opt, err := devSecureNATS(dataDir, c.String("nats-listen"), &ccfg, acfgs, lg)
			if err != nil {
				return err
			}
			opts = append(opts, opt)
		}
		ns, err := embedded.NATS(c.String("nats-listen"), dir, opts...)
		if err != nil {
			return err
		}
		defer ns.Shutdown()
		natsURL = ns.ClientURL()
	} else if secure {
		// An external NATS server is secured by its own configuration
		// (deploy/nats); the --nats-* flags say how to connect to it.
		rootLogger(lg).Info("sluice dev --secure: NATS is external; connecting with the --nats-* flags", "nats", natsURL)
	}
	if ccfg.RecordSigningKeyFile == "" {
		if ccfg.RecordSigningKeyFile, err = devRecordKey(dataDir); err != nil {
			return err
		}
	}
	keyFile, trustedFile, err := devLeaderKeys(dataDir, ccfg.LeaderKeyFile)
	if err != nil {
		return err
	}
	ccfg.LeaderKeyFile = keyFile
	for i := range acfgs {
		if acfgs[i].LeaderTrustedKeysFile == "" {
			acfgs[i].LeaderTrustedKeysFile = trustedFile
		}
	}

	if secure {
		// The REST half of --secure: authentication with a generated admin
		// credential, printed and written to the data dir. It plugs in
		// here, on the coordinator's config, before the coordinator starts.
		if _, err := secureDevREST(dataDir, &ccfg, os.Stdout); err != nil {
			return err
		}
	}
	if brokers == "" {
		dir := filepath.Join(dataDir, "kafka")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		kc, err := embedded.Kafka(c.String("kafka-listen"), dir)
		if err != nil {
			return err
		}
		defer kc.Close()
		if kc.Recovered() {
			rootLogger(lg).Info("embedded Kafka: the last run did not stop cleanly; its data was recovered", "dir", dir)
		}
		brokers = kc.ListenAddrs()[0]
	}
	ccfg.NATSURL, ccfg.Brokers = natsURL, brokers
	for i := range acfgs {
		acfgs[i].NATSURL, acfgs[i].Brokers = natsURL, brokers
	}
	var coord *coordinator.Coordinator
	opts := append(WithFaults(DevApp(ccfg, acfgs, ccfg.Metrics, c.String("metrics-listen"), profiling(c)...), testFaults(rootLogger(lg))), fx.Populate(&coord))
	return runApp(context.Background(), opts, func() {
		fmt.Printf("sluice dev ready rest=%s nats=%s kafka=%s agents=%d console=%s\n", coord.URL(), natsURL, brokers, len(acfgs), coord.URL()+"/ui/")
	})
}

// devRecordKey is the record signing key of a dev data dir, made on its
// first start (also the first start after an upgrade: the records the
// previous version wrote stay taken, see recordsig) and kept with the data.
func devRecordKey(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "record-signing.key")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	secret, err := newSecretHex()
	if err != nil {
		return "", fmt.Errorf("dev: record signing key: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return "", fmt.Errorf("dev: record signing key: %w", err)
	}
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("dev: record signing key: %w", err)
	}
	return path, nil
}

// devLeaderKeys pins sluice dev's leader key — keyFile, or one made in the
// data dir on its first start: the coordinator signs its leases with it and
// the agents trust its public half (written to the data dir), so even on
// the embedded NATS, open to any local client, nobody else can lead.
func devLeaderKeys(dataDir, keyFile string) (string, string, error) {
	if keyFile == "" {
		keyFile = filepath.Join(dataDir, "leader.key")
	}
	trustedFile := filepath.Join(dataDir, "leader-trusted.keys")
	var (
		s   *leasetrust.Signer
		err error
	)
	if _, statErr := os.Stat(keyFile); statErr == nil {
		s, err = leasetrust.ReadSigner(keyFile)
	} else {
		s, err = leasetrust.WriteKey(keyFile)
	}
	if err != nil {
		return "", "", fmt.Errorf("dev: %w", err)
	}
	if err := leasetrust.WriteTrusted(trustedFile, s); err != nil {
		return "", "", fmt.Errorf("dev: %w", err)
	}
	return keyFile, trustedFile, nil
}

// newSecretHex is 32 bytes from the system's secure random source, in hex.
func newSecretHex() (string, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", err
	}
	return hex.EncodeToString(secret), nil
}
