package coordinator

import (
	"context"

	"go.uber.org/fx"

	"github.com/sluice-io/sluice/shared/faults"
)

// Module wires a coordinator from a supplied Config. A faults.Injector in
// the graph, when a test supplies one, is the coordinator's (WithFaults).
var Module = fx.Module("coordinator",
	fx.Provide(newFromGraph),
	fx.Invoke(register),
)

// graphIn is what the coordinator takes from the fx graph.
type graphIn struct {
	fx.In
	Config Config
	Faults faults.Injector `optional:"true"`
}

func newFromGraph(in graphIn) (*Coordinator, error) {
	return New(in.Config, WithFaults(in.Faults))
}

func register(lc fx.Lifecycle, c *Coordinator) {
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error { return c.Start(ctx) },
		OnStop:  func(ctx context.Context) error { return c.Stop(ctx) },
	})
}
