package herder

import (
	"cmp"
	"context"
	"errors"
	"slices"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/validate"
)

// ListPlugins answers GET /connector-plugins: the plugins the live agents
// have, since those are what can run (followers forward the request to the
// leader, which holds the agents' registrations).
func (h *Herder) ListPlugins(ctx context.Context, connectorsOnly bool) ([]v1.PluginInfo, error) {
	h.mu.Lock()
	live := h.agents.Plugins()
	h.mu.Unlock()
	out := make([]v1.PluginInfo, 0, len(live))
	for _, p := range live {
		if connectorsOnly && p.Type != string(connect.KindSource) && p.Type != string(connect.KindSink) {
			continue
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b v1.PluginInfo) int { return cmp.Compare(a.Class, b.Class) })
	return out, nil
}

// PluginConfig answers GET /connector-plugins/{plugin}/config.
func (h *Herder) PluginConfig(ctx context.Context, plugin string) ([]v1.ConfigKeyInfo, error) {
	p, ok := h.reg.Lookup(plugin)
	if !ok {
		return nil, v1.Errorf(v1.CodeNotFound, "Unknown plugin %s.", plugin)
	}
	return validate.PluginConfig(p), nil
}

// ValidateConfig answers PUT /connector-plugins/{plugin}/config/validate.
func (h *Herder) ValidateConfig(ctx context.Context, plugin string, config map[string]string) (v1.ConfigInfos, error) {
	if err := validate.CheckPluginType(config, plugin); err != nil {
		return v1.ConfigInfos{}, err
	}
	infos, err := h.validateResolved(config)
	if err != nil {
		e := v1.AsError(err)
		if errors.Is(err, validate.ErrNoConnectorType) || errors.Is(err, errUnresolvable) {
			return v1.ConfigInfos{}, e // Sluice's 400 (spec §0)
		}
		// Kafka Connect 4.4 raises a bad class as a BadRequestException,
		// which the validate resource wraps: 500 "<exception class>: <message>".
		return v1.ConfigInfos{}, v1.Errorf(v1.CodeInternal, "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: %s", e.Message)
	}
	return infos, nil
}

// pluginOf returns the connector plugin of a config.
func (h *Herder) pluginOf(props map[string]string) (*connect.Plugin, bool) {
	return h.reg.LookupConnector(props["connector.class"])
}
