package herder

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/validate"
	"github.com/sluice-io/sluice/coordinator/internal/confighistory"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// The config history (coordinator/internal/confighistory) wired to the
// herder: every connector config write of the connectors service and of
// the rollout controller goes through recordConfigs, which records it once
// the config topic committed it.

// ConfigHistory is where the herder records every change of a connector's
// config, and reads it back (confighistory.Log).
type ConfigHistory = confighistory.Store

// ConfigHistory is the config history's REST face: its reads, and the
// restore of an entry through PUT …/config's path.
func (h *Herder) ConfigHistory() *confighistory.Service { return h.confSvc }

// newConfigHistory makes the recorder of config writes (nil without a
// history) and the history's REST face.
func (h *Herder) newConfigHistory() {
	if h.cfg.ConfigHistory == nil {
		h.confSvc = confighistory.NewService(nil, configsPort{h}, h.conns)
		return
	}
	h.confSvc = confighistory.NewService(h.cfg.ConfigHistory, configsPort{h}, h.conns)
	h.confRec = confighistory.NewRecorder(confighistory.RecorderConfig{Log: h.cfg.ConfigHistory, Configs: configsPort{h},
		SecretKeys: h.secretKeys, Principal: principalOf, Logger: h.log})
}

// recordConfigs applies cmds with apply, recording their config writes in
// the config history.
func (h *Herder) recordConfigs(ctx context.Context, apply func(context.Context, ...store.Command) error, cmds ...store.Command) error {
	if h.confRec == nil {
		return apply(ctx, cmds...)
	}
	return h.confRec.Apply(ctx, apply, cmds...)
}

// observeConfigHistory moves the entry id clock past the newest entry as
// this coordinator's term begins: its entries then sort after the previous
// leader's, whatever their clocks say. A failure is only logged: the ids
// are then as this coordinator's clock makes them.
func (h *Herder) observeConfigHistory(ctx context.Context, _ int64) (func(), error) {
	if h.cfg.ConfigHistory != nil {
		if err := h.cfg.ConfigHistory.ObserveNewest(ctx); err != nil {
			h.log.Warn("the config history's newest entry could not be read: new entries are ordered by this coordinator's clock alone", "err", err)
		}
	}
	return func() {}, nil
}

// rolloutChange is what the rollout controller's commands do to a
// connector's config, for its history entry: a batch's patch, or a
// rollback's, by the rollout's creator; nil for other commands.
func (h *Herder) rolloutChange(cmds []store.Command) *confighistory.Change {
	var id, op string
	var batch int
	for _, cmd := range cmds {
		switch c := cmd.(type) {
		case store.ApplyConnector:
			id, op, batch = c.ID, api.ConfigRollout, c.Batch
		case store.RollBackConnector:
			id, op, batch = c.ID, api.ConfigRollback, c.Batch
		}
	}
	if op == "" {
		return nil
	}
	ch := &confighistory.Change{Operation: op, Detail: fmt.Sprintf("rollout %s, batch %d", id, batch+1)}
	if r, ok := h.fleet.State.Rollout(id); ok {
		ch.Principal = r.Principal
	}
	return ch
}

// secretLookupTimeout bounds asking an agent's host for a Java plugin's
// config keys, to find its PASSWORD ones.
const secretLookupTimeout = 10 * time.Second

// secretKeys are the keys of config whose values are secrets: those its
// connector plugin, the framework or its converters declare PASSWORD —
// known here for built-in plugins, asked of an agent's connector host for
// a Java one. When a Java plugin's keys cannot be listed, every key whose
// name says password or secret is taken for one: better a value hidden
// than one kept in clear.
func (h *Herder) secretKeys(ctx context.Context, config map[string]string) []string {
	var keys []string
	for k, v := range validate.MaskPasswords(h.reg, config) {
		if v == connect.Hidden && config[k] != connect.Hidden {
			keys = append(keys, k)
		}
	}
	if !h.plugins.IsJava(config) {
		return keys
	}
	lctx, cancel := context.WithTimeout(ctx, secretLookupTimeout)
	defer cancel()
	infos, err := h.plugins.PluginConfig(lctx, config[validate.ConnectorClassConfig], config[validate.ConnectorVersionConfig])
	if err != nil {
		h.log.Warn("the config history hides every key named like a secret: the Java plugin's config keys could not be listed", "class", config[validate.ConnectorClassConfig], "err", err)
		for k := range config {
			if l := strings.ToLower(k); strings.Contains(l, "password") || strings.Contains(l, "secret") {
				keys = append(keys, k)
			}
		}
	}
	for _, info := range infos {
		if _, ok := config[info.Name]; ok && info.Type == string(connect.TypePassword) {
			keys = append(keys, info.Name)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
