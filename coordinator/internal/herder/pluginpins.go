package herder

import (
	"context"

	"github.com/sluice-io/sluice/coordinator/internal/confighistory"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// withPluginPins gives each connector config write among cmds its plugin
// version, which the config record keeps: a create's resolved now
// (connectors.Plugins.Pin), a config write's kept from the connector's
// record while the class and version spec stay the same and else resolved
// now (PinFor) — once, for the whole fleet, so that the connector's tasks
// run that version only (docs/plugins.md). A command that already
// carries a pin (a rollback's, a move's) keeps it.
func (h *Herder) withPluginPins(cmds []store.Command) []store.Command {
	out := make([]store.Command, len(cmds))
	for i, cmd := range cmds {
		switch c := cmd.(type) {
		case store.PutConnectorConfig:
			if c.Plugin == nil {
				c.Plugin = h.plugins.PinFor(c.Name, c.Config)
			}
			cmd = c
		case store.CreateConnector:
			if c.Plugin == nil {
				c.Plugin = h.plugins.Pin(c.Config)
			}
			cmd = c
		}
		out[i] = cmd
	}
	return out
}

// pinningStore is a store whose connector config writes get their plugin
// versions (withPluginPins) and are recorded in the config history as the
// rollout's: the rollout controller's.
type pinningStore struct{ h *Herder }

// Apply implements rollout.Store.
func (s pinningStore) Apply(ctx context.Context, cmds ...store.Command) error {
	if ch := s.h.rolloutChange(cmds); ch != nil {
		ctx = confighistory.WithChange(ctx, ch)
	}
	return s.h.recordConfigs(ctx, func(ctx context.Context, cmds ...store.Command) error {
		return s.h.all.Apply(ctx, s.h.withPluginPins(cmds)...)
	}, cmds...)
}
