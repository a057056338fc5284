package main

import (
	"bytes"
	"flag"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
	"go.uber.org/fx"

	"github.com/sluice-io/sluice/agent"
	"github.com/sluice-io/sluice/coordinator"
)

// TestFxGraphs checks that every binary's dependency graph is complete.
func TestFxGraphs(t *testing.T) {
	ccfg := coordinator.Config{NATSURL: "nats://127.0.0.1:4222", Brokers: "127.0.0.1:9092", GroupID: "g",
		ConfigTopic: "c", OffsetsTopic: "o", StatusTopic: "s", AgentLease: time.Second, TaskShutdownTimeout: time.Second}
	acfg := agent.Config{ID: "a", NATSURL: "nats://127.0.0.1:4222", Brokers: "127.0.0.1:9092", GroupID: "g", OffsetsTopic: "o"}
	for name, opts := range map[string][]fx.Option{
		"coordinator": coordinatorApp(ccfg),
		"agent":       agentApp(acfg),
		"dev":         devApp(ccfg, []agent.Config{acfg, acfg}),
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
	c := flagContext(t, append(coordinatorFlags(), labelsFlag, idFlag, workDirFlag, flushFlag, keyConvFlag, valueConvFlag)...)
	ccfg, err := coordinatorConfig(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ccfg.GroupID != "from-env" || ccfg.AgentLease != 7*time.Second || ccfg.ConfigTopic != "sluice-configs" ||
		ccfg.TaskShutdownTimeout != 10*time.Second || ccfg.Listen != "127.0.0.1:8083" ||
		ccfg.ReadHeaderTimeout != 10*time.Second || ccfg.ReadBodyTimeout != 5*time.Second || ccfg.MaxHeaderBytes != 64<<10 {
		t.Fatalf("coordinator config: %+v", ccfg)
	}
	acfg, err := agentConfig(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acfg.Labels["zone"] != "a" || acfg.Labels["host"] != "h1" || acfg.FlushInterval != time.Second ||
		acfg.ValueConverter != "org.apache.kafka.connect.storage.StringConverter" || acfg.ID == "" {
		t.Fatalf("agent config: %+v", acfg)
	}
}

// flagContext is a CLI context with flags applied, as a command would get
// with no arguments: values come from the environment or the defaults.
func flagContext(t *testing.T, flags ...cli.Flag) *cli.Context {
	t.Helper()
	app := cli.NewApp()
	app.Writer = &bytes.Buffer{}
	set := flag.NewFlagSet("test", flag.ContinueOnError)
	for _, f := range flags {
		if err := f.Apply(set); err != nil {
			t.Fatal(err)
		}
	}
	return cli.NewContext(app, set, nil)
}

// seamAgentConfig builds the agent's config with SLUICE_TEST_HOLD_OFFSETS
// set to a marker file, and returns it, the marker and what was logged.
func seamAgentConfig(t *testing.T) (agent.Config, string, string) {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "held")
	t.Setenv(holdOffsetsEnv, marker)
	var logs bytes.Buffer
	acfg, err := agentConfig(flagContext(t, agentFlags()...), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return acfg, marker, logs.String()
}
