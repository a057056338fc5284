package server

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
	"go.uber.org/fx"

	"github.com/sluice-io/sluice/agent"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/logging"
)

// TestFxGraphs checks that every binary's dependency graph is complete.
func TestFxGraphs(t *testing.T) {
	ccfg := coordinator.Config{NATSURL: "nats://127.0.0.1:4222", Brokers: "127.0.0.1:9092", GroupID: "g",
		ConfigTopic: "c", OffsetsTopic: "o", StatusTopic: "s", AgentLease: time.Second, TaskShutdownTimeout: time.Second}
	acfg := agent.Config{ID: "a", NATSURL: "nats://127.0.0.1:4222", Brokers: "127.0.0.1:9092", GroupID: "g", OffsetsTopic: "o"}
	for name, opts := range map[string][]fx.Option{
		"coordinator": coordinatorApp(ccfg),
		"agent":       agentApp(acfg),
		"dev":         DevApp(ccfg, []agent.Config{acfg, acfg}, NewRegistry(), "127.0.0.1:0"),
	} {
		if err := fx.ValidateApp(opts...); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestFlagsFromEnvironment checks the SLUICE_<FLAG> convention and defaults.
func TestFlagsFromEnvironment(t *testing.T) {
	t.Setenv("SLUICE_GROUP_ID", "from-env")
	t.Setenv("SLUICE_AGENT_LEASE", "7s")
	t.Setenv("SLUICE_LABELS", "zone=a,host=h1")
	t.Setenv("SLUICE_REST_READ_BODY_TIMEOUT", "5s")
	t.Setenv("SLUICE_SINK_GROUP_MEMBERSHIP", "dynamic")
	c := flagContext(t, append(coordinatorFlags(), labelsFlag, idFlag, workDirFlag, flushFlag, keyConvFlag, valueConvFlag, membershipFlag)...)
	ccfg, err := coordinatorConfig(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ccfg.GroupID != "from-env" || ccfg.AgentLease != 7*time.Second || ccfg.ConfigTopic != "sluice-configs" ||
		ccfg.TaskShutdownTimeout != 10*time.Second || ccfg.Listen != "127.0.0.1:8083" ||
		ccfg.ReadHeaderTimeout != 10*time.Second || ccfg.ReadBodyTimeout != 5*time.Second || ccfg.MaxHeaderBytes != 64<<10 ||
		ccfg.AgentProbe != 100*time.Millisecond {
		t.Fatalf("coordinator config: %+v", ccfg)
	}
	acfg, err := agentConfig(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acfg.Labels["zone"] != "a" || acfg.Labels["host"] != "h1" || acfg.FlushInterval != time.Second ||
		acfg.ValueConverter != "org.apache.kafka.connect.storage.StringConverter" || acfg.ID == "" ||
		!acfg.DynamicMembership {
		t.Fatalf("agent config: %+v", acfg)
	}
}

// flagContext is FlagContext, failing the test on an error.
func flagContext(t *testing.T, flags ...cli.Flag) *cli.Context {
	t.Helper()
	c, err := FlagContext(flags...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newApp is an app of the process commands, as main runs them (its exit
// code left to the caller).
func newApp() *cli.App {
	return &cli.App{Name: "sluice", ExitErrHandler: func(*cli.Context, error) {},
		Commands: []*cli.Command{Coordinator(), Agent(), Dev(), NATSConfig(), LeaderKey(), Auth()}}
}

// seamFaults builds the agent's config and the process's fault injector
// with SLUICE_TEST_HOLD_OFFSETS set to a marker file, and returns the
// injector, the marker and what was logged.
func seamFaults(t *testing.T) (faults.Injector, string, string) {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "held")
	t.Setenv(holdOffsetsEnv, marker)
	var logs bytes.Buffer
	lg := logging.NewText(&logs, slog.LevelInfo)
	if _, err := agentConfig(flagContext(t, agentFlags()...), lg); err != nil {
		t.Fatal(err)
	}
	return testFaults(rootLogger(lg)), marker, logs.String()
}

// TestLogLevelFlag: --log-level takes slog's names and Kafka Connect's, and
// sets the root logger that /admin/loggers shows.
func TestLogLevelFlag(t *testing.T) {
	for flagValue, want := range map[string]string{
		"info": "INFO", "debug": "DEBUG", "WARN": "WARN", "trace": "TRACE", "OFF": "OFF", "debug+2": "DEBUG+2", "loud": "INFO",
	} {
		t.Run(flagValue, func(t *testing.T) {
			t.Setenv("SLUICE_LOG_LEVEL", flagValue)
			info, _ := Loggers(flagContext(t, logLevelFlag)).Level(logging.Root)
			if info.Level != want {
				t.Fatalf("root level %q, want %q", info.Level, want)
			}
		})
	}
}

// TestDevSharesLoggers: in sluice dev the coordinator and every agent log
// through the same loggers, the process's, which a worker-scope
// /admin/loggers change sets.
func TestDevSharesLoggers(t *testing.T) {
	c := flagContext(t, Dev().Flags...)
	ccfg, acfgs, err := DevConfigs(c, Loggers(c), "nats://127.0.0.1:4222", "127.0.0.1:9092")
	if err != nil {
		t.Fatal(err)
	}
	if ccfg.Loggers == nil || len(acfgs) == 0 {
		t.Fatalf("coordinator loggers %v, %d agents", ccfg.Loggers, len(acfgs))
	}
	for _, acfg := range acfgs {
		if acfg.Loggers != ccfg.Loggers {
			t.Fatalf("agent %s has loggers of its own", acfg.ID)
		}
	}
}

// TestNATSConfigCommand: `sluice nats-config` writes the server's
// configuration and a seed per user, and names the flag each process
// takes; without an agent it refuses to run.
func TestNATSConfigCommand(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	a := newApp()
	a.Writer = &out
	if err := a.Run([]string{"sluice", "nats-config", "--group-id", "prod", "--agent", "a1", "--agent", "a2", "--out", dir}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"nats-server.conf", "coordinator-coordinator.nk", "agent-a1.nk", "agent-a2.nk"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(out.String(), "a2: --nats-nkey-seed "+filepath.Join(dir, "agent-a2.nk")) {
		t.Errorf("output %q", out.String())
	}
	a = newApp()
	a.Writer, a.ErrWriter = &bytes.Buffer{}, &bytes.Buffer{}
	if err := a.Run([]string{"sluice", "nats-config", "--out", t.TempDir()}); err == nil {
		t.Error("nats-config without an agent ran")
	}
}

// TestNATSFlags: the --nats-* flags, from their SLUICE_* variables, reach
// the coordinator's and the agent's configs, and two ways of
// authenticating at once are refused when the config is checked.
func TestNATSFlags(t *testing.T) {
	t.Setenv("SLUICE_NATS_USER", "u")
	t.Setenv("SLUICE_NATS_PASSWORD_FILE", "/run/secrets/pw")
	t.Setenv("SLUICE_NATS_TLS_CA", "/ca.pem")
	c := flagContext(t, coordinatorFlags()...)
	ccfg, err := coordinatorConfig(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	acfg, err := agentConfig(flagContext(t, agentFlags()...), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct{ user, pw, ca string }{
		{ccfg.NATSAuth.User, ccfg.NATSAuth.PasswordFile, ccfg.NATSAuth.TLSCA},
		{acfg.NATSAuth.User, acfg.NATSAuth.PasswordFile, acfg.NATSAuth.TLSCA},
	} {
		if a.user != "u" || a.pw != "/run/secrets/pw" || a.ca != "/ca.pem" {
			t.Fatalf("nats auth %+v", a)
		}
	}
	t.Setenv("SLUICE_NATS_TOKEN_FILE", "/tok")
	acfg, _ = agentConfig(flagContext(t, agentFlags()...), nil)
	acfg.NATSURL, acfg.Brokers = "nats://x", "k:9092"
	if err := acfg.Validate(); err == nil || !strings.Contains(err.Error(), "not several") {
		t.Fatalf("two ways of authenticating: %v", err)
	}
}
