package server

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"
	"go.uber.org/dig"
	"go.uber.org/fx"

	"github.com/sluice-io/sluice/agent"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/shared/faults"
)

// stopTimeout bounds a graceful stop: tasks commit their offsets within it.
const stopTimeout = 30 * time.Second

func coordinatorApp(cfg coordinator.Config) []fx.Option {
	return []fx.Option{fx.NopLogger, fx.Supply(cfg), coordinator.Module}
}

func agentApp(cfg agent.Config) []fx.Option {
	return []fx.Option{fx.NopLogger, fx.Supply(cfg), agent.Module}
}

// WithFaults is app with inj, when there is one, as the fault injector of
// its coordinator and agents (testFaults: only a test build has one).
func WithFaults(app []fx.Option, inj faults.Injector) []fx.Option {
	if inj == nil {
		return app
	}
	return append(app, fx.Supply(fx.Annotate(inj, fx.As(new(faults.Injector)))))
}

// Coordinator is `sluice coordinator`: runs a coordinator.
func Coordinator() *cli.Command {
	return &cli.Command{
		Name:  "coordinator",
		Usage: "run a coordinator: the REST API, configs, scheduling",
		Flags: coordinatorFlags(),
		Action: func(c *cli.Context) error {
			lg := Loggers(c)
			tuneMemoryLimit(rootLogger(lg))
			cfg, err := coordinatorConfig(c, lg)
			if err != nil {
				return err
			}
			if err := checkNATSTrust(c.Context, c, cfg.NATSAuth, cfg.LeaderKeyFile != "" || cfg.LeaderTrustedKeysFile != "", rootLogger(lg)); err != nil {
				return err
			}
			return runApp(c.Context, coordinatorApp(cfg), nil)
		},
	}
}

// Agent is `sluice agent`: runs an agent.
func Agent() *cli.Command {
	return &cli.Command{
		Name:  "agent",
		Usage: "run an agent: the sidecar that runs tasks",
		Flags: agentFlags(),
		Action: func(c *cli.Context) error {
			tuneAgentGC()
			lg := Loggers(c)
			tuneMemoryLimit(rootLogger(lg))
			cfg, err := agentConfig(c, lg)
			if err != nil {
				return err
			}
			if err := checkNATSTrust(c.Context, c, cfg.NATSAuth, cfg.LeaderTrustedKeysFile != "", rootLogger(lg)); err != nil {
				return err
			}
			return runApp(c.Context, WithFaults(agentApp(withAgentMetrics(c, cfg)), testFaults(rootLogger(lg))), nil)
		},
	}
}

// runApp starts an fx app, calls ready, waits for SIGINT/SIGTERM and stops
// the app gracefully.
func runApp(ctx context.Context, opts []fx.Option, ready func()) error {
	app := fx.New(opts...)
	if err := app.Err(); err != nil {
		// The constructor's own error names what is wrong (a bad file,
		// its line); fx's wrapping around it names only the graph.
		return dig.RootCause(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := app.Start(sctx); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	if ready != nil {
		ready()
	}
	<-app.Wait()
	stopCtx, cancelStop := context.WithTimeout(context.Background(), stopTimeout)
	defer cancelStop()
	return app.Stop(stopCtx)
}
