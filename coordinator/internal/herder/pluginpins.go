package herder

import (
	"context"

	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// withPluginPins gives each connector config write among cmds the plugin
// version its config resolves to now (connectors.Plugins.Pin), which the
// config record keeps: every write of a config — create, PUT, PATCH, a
// move, a rollout's patch and its rollback — resolves the version once,
// for the whole fleet, and the connector's tasks then run that version
// only (docs/plugins.md). A command that already carries a pin keeps it.
func (h *Herder) withPluginPins(cmds []store.Command) []store.Command {
	out := make([]store.Command, len(cmds))
	for i, cmd := range cmds {
		switch c := cmd.(type) {
		case store.PutConnectorConfig:
			if c.Plugin == nil {
				c.Plugin = h.plugins.Pin(c.Config)
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
// versions (withPluginPins): the rollout controller's.
type pinningStore struct{ h *Herder }

// Apply implements rollout.Store.
func (s pinningStore) Apply(ctx context.Context, cmds ...store.Command) error {
	return s.h.all.Apply(ctx, s.h.withPluginPins(cmds)...)
}
