package agent

import (
	"context"

	"go.uber.org/fx"
)

// Module wires one agent from a supplied Config.
var Module = fx.Module("agent",
	fx.Provide(New),
	fx.Invoke(register),
)

func register(lc fx.Lifecycle, a *Agent) {
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error { return a.Start(ctx) },
		OnStop:  func(ctx context.Context) error { return a.Stop(ctx) },
	})
}
