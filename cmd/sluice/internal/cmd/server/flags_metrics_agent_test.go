package server

import (
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/agent"
)

// TestAgentMetricsListenFlag checks --metrics-listen: loopback by default
// for sluice agent, off by default for sluice dev, and SLUICE_METRICS_LISTEN
// for both.
func TestAgentMetricsListenFlag(t *testing.T) {
	flagOf := func(cmd *cli.Command) cli.Flag {
		for _, f := range cmd.Flags {
			if f.Names()[0] == "metrics-listen" {
				return f
			}
		}
		t.Fatalf("%s has no --metrics-listen", cmd.Name)
		return nil
	}
	agentCmd := Agent()
	for _, tc := range []struct {
		name, env, want string
		flag            cli.Flag
	}{
		{"agent default", "", "127.0.0.1:9464", flagOf(agentCmd)},
		{"agent from env", "0.0.0.0:9464", "0.0.0.0:9464", flagOf(agentCmd)},
		{"dev default", "", "", flagOf(Dev())},
		{"dev from env", "127.0.0.1:9465", "127.0.0.1:9465", flagOf(Dev())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("SLUICE_METRICS_LISTEN", tc.env)
			}
			c := flagContext(t, tc.flag)
			if got := c.String("metrics-listen"); got != tc.want {
				t.Fatalf("--metrics-listen = %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("agent config", func(t *testing.T) {
		t.Setenv("SLUICE_METRICS_LISTEN", "127.0.0.1:0")
		cfg := withAgentMetrics(flagContext(t, flagOf(agentCmd)), agent.Config{})
		if cfg.MetricsListen != "127.0.0.1:0" || cfg.Metrics == nil {
			t.Fatalf("agent config: listen %q, registry %v", cfg.MetricsListen, cfg.Metrics)
		}
	})
}
