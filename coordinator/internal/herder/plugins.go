package herder

import (
	"context"
	"errors"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/validate"
)

// ListPlugins answers GET /connector-plugins.
func (h *Herder) ListPlugins(ctx context.Context, connectorsOnly bool) ([]v1.PluginInfo, error) {
	ps := h.reg.All()
	if connectorsOnly {
		ps = h.reg.Connectors()
	}
	out := make([]v1.PluginInfo, 0, len(ps))
	for _, p := range ps {
		out = append(out, v1.PluginInfo{Class: p.Class, Type: string(p.Kind), Version: p.Version})
	}
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
	infos, _, err := validate.Connector(h.reg, config)
	if err != nil {
		e := v1.AsError(err)
		if errors.Is(err, validate.ErrNoConnectorType) {
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
