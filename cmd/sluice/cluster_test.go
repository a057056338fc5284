package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/urfave/cli/v2"
	"go.uber.org/fx"

	"github.com/sluice-io/sluice/agent"
	"github.com/sluice-io/sluice/cmd/sluice/internal/argv"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/shared/embedded"
	"github.com/sluice-io/sluice/shared/embedded/natstest"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/sluicetest"
)

// testCluster is a whole Sluice in the test process, as `sluice dev` runs
// it: embedded NATS and Kafka (kfake), a coordinator and one agent.
type testCluster struct {
	URL     string
	WorkDir string
	// Brokers is its embedded Kafka's address.
	Brokers string
	// agentCfg is its agent's config, which a test starts more agents
	// with (startFleet).
	agentCfg agent.Config
}

// startCluster starts a test cluster, stopped when the test ends. The
// agent resolves relative file paths against WorkDir; agentOpts change
// its config (a test may give it fewer plugins).
func startCluster(t *testing.T, agentOpts ...func(*agent.Config)) *testCluster {
	t.Helper()
	return startClusterWith(t, nil, agentOpts...)
}

// startClusterWith is startCluster with inj injecting faults into the
// cluster (nil: none).
func startClusterWith(t *testing.T, inj faults.Injector, agentOpts ...func(*agent.Config)) *testCluster {
	t.Helper()
	work := t.TempDir()
	t.Setenv("SLUICE_LISTEN", "127.0.0.1:0")
	t.Setenv("SLUICE_WORK_DIR", work)
	t.Setenv("SLUICE_AGENTS", "1")
	t.Setenv("SLUICE_LOG_LEVEL", "error")
	t.Setenv("SLUICE_FLUSH_INTERVAL", "200ms")
	natsURL := natstest.Start(t)
	kc, err := embedded.Kafka("", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	c := flagContext(t, devCommand().Flags...)
	ccfg, acfgs, err := devConfigs(c, loggers(c), natsURL, kc.ListenAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := range acfgs {
		for _, o := range agentOpts {
			o(&acfgs[i])
		}
	}
	var coord *coordinator.Coordinator
	app := fx.New(append(withFaults(devApp(ccfg, acfgs, newRegistry(), ""), inj), fx.Populate(&coord), fx.NopLogger)...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = app.Stop(ctx)
	})
	// Ready as the harness's clusters are: a leader, and the agent
	// registered (before that, writes are refused with a 409).
	eventually(t, 30*time.Second, func() (bool, string) {
		leader, _ := coord.Leader()
		return leader && coord.RegisteredAgents() >= 1, "no leader or no agent yet"
	})
	// The environment above is the cluster's; the CLI runs must not see it.
	for _, v := range []string{"SLUICE_LISTEN", "SLUICE_WORK_DIR", "SLUICE_AGENTS", "SLUICE_LOG_LEVEL", "SLUICE_FLUSH_INTERVAL"} {
		os.Unsetenv(v)
	}
	// No user config file of the person running the tests may leak in.
	t.Setenv("SLUICE_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	return &testCluster{URL: coord.URL(), WorkDir: work, Brokers: kc.ListenAddrs()[0], agentCfg: acfgs[0]}
}

// runCLI runs the CLI as main does — arguments reordered, errors printed
// as "sluice: …" with their exit code — and returns what it printed.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	app := newApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	if err := app.Run(argvFor(app, args)); err != nil {
		errOut.WriteString("sluice: " + message(err) + "\n")
		code = exitCode(err)
	}
	return out.String(), errOut.String(), code
}

// mustCLI is runCLI that fails the test unless the command succeeds.
func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("sluice %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
	}
	return out
}

// eventually is the test kit's Eventually: it polls cond until it holds
// or d passed.
func eventually(t *testing.T, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	sluicetest.Eventually(t, d, cond)
}

// argvFor is what main passes to app.Run for these arguments.
func argvFor(app *cli.App, args []string) []string {
	return argv.Reorder(app, append([]string{"sluice"}, args...))
}

// createTopic creates topic, of partitions partitions, on brokers.
func createTopic(t *testing.T, brokers, topic string, partitions int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}
