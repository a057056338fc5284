package coordinator

import (
	"context"

	"go.uber.org/fx"
)

// Module wires a coordinator from a supplied Config.
var Module = fx.Module("coordinator",
	fx.Provide(New),
	fx.Invoke(register),
)

func register(lc fx.Lifecycle, c *Coordinator) {
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error { return c.Start(ctx) },
		OnStop:  func(ctx context.Context) error { return c.Stop(ctx) },
	})
}
