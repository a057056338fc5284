package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/urfave/cli/v2"
	"go.uber.org/fx"

	"github.com/sluice-io/sluice/agent"
	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/shared/opsserver"
)

// The agent's metrics listener: /metrics, /healthz and /readyz
// (docs/observability.md). An agent serves it on loopback unless told
// otherwise; in sluice dev the coordinator's /metrics already serves the
// process's registry, so the listener is off unless asked for.
var (
	agentMetricsListenFlag = envflag.String("metrics-listen", "127.0.0.1:9464",
		"host:port of the agent's listener for GET /metrics, /healthz and /readyz (empty: none; 0.0.0.0:9464 to let Prometheus and the kubelet reach it)")
	devMetricsListenFlag = envflag.String("metrics-listen", "",
		"host:port of a listener for GET /metrics (the whole process), /healthz and /readyz (every agent ready); empty: none")
	// pprofFlag adds Go's profiles to that listener: off unless asked for,
	// as a CPU profile or a trace costs the process while it runs.
	pprofFlag = &cli.BoolFlag{Name: "pprof", EnvVars: envflag.Env("pprof"),
		Usage: "also serve Go's profiles (GET /debug/pprof/…) on the --metrics-listen listener"}
)

// profiling is the listener's options for --pprof.
func profiling(c *cli.Context) []opsserver.Option {
	if c.Bool("pprof") {
		return []opsserver.Option{opsserver.WithProfiling()}
	}
	return nil
}

// devMetricsListener serves reg and the agents' readiness on addr, once
// every agent started (their readiness is read from then on), when addr is
// set.
func devMetricsListener(addr string, reg *prometheus.Registry, agents []*agent.Agent, opts ...opsserver.Option) fx.Option {
	if addr == "" {
		return fx.Options()
	}
	return fx.Invoke(func(lc fx.Lifecycle) {
		var srv *opsserver.Server
		lc.Append(fx.Hook{
			OnStart: func(context.Context) error {
				s, err := opsserver.Start(addr, reg, func(ctx context.Context) error {
					var errs []error
					for _, a := range agents {
						if err := a.Ready(ctx); err != nil {
							// One line per agent: its reasons joined.
							errs = append(errs, fmt.Errorf("agent %s: %s", a.ID(), strings.ReplaceAll(err.Error(), "\n", "; ")))
						}
					}
					return errors.Join(errs...)
				}, opts...)
				srv = s
				return err
			},
			OnStop: func(ctx context.Context) error {
				if srv == nil {
					return nil
				}
				return srv.Close(ctx)
			},
		})
	})
}

// withAgentMetrics gives a sluice agent's config the process's registry
// and its listener.
func withAgentMetrics(c *cli.Context, cfg agent.Config) agent.Config {
	cfg.Metrics = NewRegistry()
	cfg.MetricsListen = c.String("metrics-listen")
	cfg.Profiling = c.Bool("pprof")
	return cfg
}
