package server

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/shared/logging"
	"github.com/sluice-io/sluice/shared/logging/logtest"
)

// TestLogFormatJSON: with --log-format json (SLUICE_LOG_FORMAT) the
// coordinator's, the agent's and dev's loggers write one JSON object a
// line, named loggers and --log-level included, through the loggers the
// process's configs carry.
func TestLogFormatJSON(t *testing.T) {
	for name, cmd := range map[string]func() []string{
		"coordinator": func() []string { return flagNames(Coordinator().Flags) },
		"agent":       func() []string { return flagNames(Agent().Flags) },
		"dev":         func() []string { return flagNames(Dev().Flags) },
	} {
		if !slices.Contains(cmd(), "log-format") {
			t.Errorf("sluice %s has no --log-format", name)
		}
	}
	restoreFlags(t, logFormatFlag, logLevelFlag)
	t.Setenv("SLUICE_LOG_FORMAT", "json")
	t.Setenv("SLUICE_LOG_LEVEL", "warn")
	c := flagContext(t, Dev().Flags...)
	var out bytes.Buffer
	lg, err := loggersTo(c, &out)
	if err != nil {
		t.Fatal(err)
	}
	ccfg, acfgs, err := DevConfigs(c, lg, "nats://127.0.0.1:4222", "127.0.0.1:9092")
	if err != nil {
		t.Fatal(err)
	}
	ccfg.Logger.Warn("from the coordinator's root", "connector", "c1")
	ccfg.Loggers.Logger(logging.Herder).Info("below --log-level")
	acfgs[0].Loggers.Logger(logging.AgentTasks).Error("task failed", "connector", "c1", "task", 2)

	recs := logtest.Records(t, out.String(), "")
	if len(recs) != 2 {
		t.Fatalf("%d lines, want 2 (the INFO one is below --log-level warn):\n%s", len(recs), out.String())
	}
	if recs[0]["level"] != "WARN" || recs[0]["logger"] != logging.Root || recs[0]["connector"] != "c1" {
		t.Errorf("first line %v", recs[0])
	}
	if recs[1]["level"] != "ERROR" || recs[1]["logger"] != logging.AgentTasks || recs[1]["task"] != json.Number("2") {
		t.Errorf("second line %v", recs[1])
	}
}

// TestLogFormatRefused: a --log-format other than text or json stops each
// process command with an error naming the flag, before it connects to
// anything.
func TestLogFormatRefused(t *testing.T) {
	for _, cmd := range []string{"coordinator", "agent", "dev"} {
		t.Run(cmd, func(t *testing.T) {
			err := newApp().Run([]string{"sluice", cmd, "--log-format", "yaml"})
			if err == nil || !strings.Contains(err.Error(), "--log-format") || !strings.Contains(err.Error(), "text or json") {
				t.Fatalf("sluice %s --log-format yaml: %v, want an error naming --log-format and its values", cmd, err)
			}
		})
	}
	restoreFlags(t, logFormatFlag)
	t.Setenv("SLUICE_LOG_FORMAT", "xml")
	if err := newApp().Run([]string{"sluice", "agent"}); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Fatalf("SLUICE_LOG_FORMAT=xml: %v, want the value refused", err)
	}
}

func flagNames(flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	return names
}

// restoreFlags puts flags back as they were once the test ends: urfave/cli
// stores a value read from the environment in the flag itself, and these
// flags are shared by every command and test.
func restoreFlags(t *testing.T, flags ...*cli.StringFlag) {
	for _, f := range flags {
		saved := *f
		t.Cleanup(func() { *f = saved })
	}
}
