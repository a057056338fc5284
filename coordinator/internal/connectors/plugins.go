package connectors

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/pluginversion"
	"github.com/sluice-io/sluice/connect/validate"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/shared/wire"
)

// ListPlugins answers GET /connector-plugins: the plugins the live agents
// have, since those are what can run (followers forward the request to the
// leader, which holds the agents' registrations): their built-in plugins
// and their connector hosts' Java plugins, each class and version once. A
// class of both, in two versions, is listed twice, as Kafka Connect 4.x
// lists every version it has (by class, then in Maven's version order).
func (p *Plugins) ListPlugins(ctx context.Context, connectorsOnly bool) ([]api.PluginInfo, error) {
	live, host := p.agents.Plugins(), p.agents.HostPlugins()
	out := make([]api.PluginInfo, 0, len(live)+len(host))
	seen := make(map[registry.PluginKey]bool, len(live)+len(host))
	add := func(info api.PluginInfo) {
		k := registry.PluginKey{Class: info.Class, Version: info.Version}
		if seen[k] || connectorsOnly && info.Type != string(connect.KindSource) && info.Type != string(connect.KindSink) {
			return
		}
		seen[k] = true
		out = append(out, info)
	}
	for _, info := range live {
		add(info)
	}
	for _, info := range host {
		add(info)
	}
	slices.SortFunc(out, func(a, b api.PluginInfo) int {
		return cmp.Or(cmp.Compare(a.Class, b.Class), pluginversion.Compare(a.Version, b.Version))
	})
	return out, nil
}

// PluginConfig answers GET /connector-plugins/{plugin}/config: a built-in's
// from its ConfigDef, a Java plugin's own keys from an agent whose host has
// it (config_def), each with the framework keys they do not shadow.
func (p *Plugins) PluginConfig(ctx context.Context, plugin string) ([]api.ConfigKeyInfo, error) {
	if g, ok := p.reg.Lookup(plugin); ok {
		return validate.PluginConfig(g), nil
	}
	c, ok := p.Choice(map[string]string{validate.ConnectorClassConfig: plugin})
	agents := p.hostAgents(c)
	if !ok || !c.Java() || len(agents) == 0 {
		return nil, api.Errorf(api.CodeNotFound, "Unknown plugin %s.", plugin)
	}
	reply, err := p.CallAnyHost(ctx, agents, wire.PluginConnectorRequest{Op: wire.PluginOpConfigDef, Class: c.Class})
	if err != nil {
		return nil, fmt.Errorf("listing the config of %s: %w", c.Class, err)
	}
	own, err := decodeConfigKeys(reply.ConfigInfos)
	if err != nil {
		return nil, fmt.Errorf("listing the config of %s: the agent's answer: %w", c.Class, err)
	}
	return validate.RemotePluginConfig(c.Plugin(), own), nil
}

// decodeConfigKeys reads a host's config_def answer: validate entries
// whose definitions are the keys, or the keys themselves (the host
// protocol's connector.config_def shape), as a list or in "configs".
func decodeConfigKeys(raw json.RawMessage) ([]api.ConfigKeyInfo, error) {
	infos, err := decodeConfigInfos(raw)
	if err != nil {
		return nil, err
	}
	keys := make([]api.ConfigKeyInfo, 0, len(infos))
	for _, i := range infos {
		if i.Definition.Name == "" {
			keys = nil
			break
		}
		keys = append(keys, i.Definition)
	}
	if keys != nil || len(infos) == 0 {
		return keys, nil
	}
	// Not entries: plain definitions.
	var list []api.ConfigKeyInfo
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var obj struct {
		Configs []api.ConfigKeyInfo `json:"configs"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decoding config keys: %w", err)
	}
	return obj.Configs, nil
}

// ValidateConfig answers PUT /connector-plugins/{plugin}/config/validate.
func (a *Admission) ValidateConfig(ctx context.Context, plugin string, config map[string]string) (api.ConfigInfos, error) {
	if err := validate.CheckPluginType(config, plugin); err != nil {
		return api.ConfigInfos{}, err
	}
	infos, _, err := a.validateResolved(ctx, config)
	if err != nil {
		e := api.AsError(err)
		if errors.Is(err, validate.ErrNoConnectorType) || errors.Is(err, errUnresolvable) || e.Code == api.CodeForbidden {
			return api.ConfigInfos{}, e // Sluice's 400 (spec §0), or a secret outside the tenant's: 403
		}
		// Kafka Connect 4.4 raises a bad class as a BadRequestException,
		// which the validate resource wraps: 500 "<exception class>: <message>".
		return api.ConfigInfos{}, api.Errorf(api.CodeInternal, "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: %s", e.Message)
	}
	return infos, nil
}
