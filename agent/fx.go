package agent

import (
	"context"

	"go.uber.org/fx"

	"github.com/sluice-io/sluice/shared/faults"
)

// Module wires one agent from a supplied Config. A faults.Injector in the
// graph, when a test binary supplies one, is the agent's (WithFaults).
var Module = fx.Module("agent",
	fx.Provide(newFromGraph),
	fx.Invoke(register),
)

// graphIn is what the agent takes from the fx graph.
type graphIn struct {
	fx.In
	Config Config
	Faults faults.Injector `optional:"true"`
}

func newFromGraph(in graphIn) (*Agent, error) {
	return New(in.Config, WithFaults(in.Faults))
}

func register(lc fx.Lifecycle, a *Agent) {
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error { return a.Start(ctx) },
		OnStop:  func(ctx context.Context) error { return a.Stop(ctx) },
	})
}
