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

// PluginConfig answers GET /connector-plugins/{plugin}/config[?version=]:
// a built-in's from its ConfigDef, a Java plugin's own keys from an agent
// whose host has the version (config_def), each with the framework keys
// they do not shadow. version is read as connector.plugin.version is
// (Resolve): a requirement no version meets is Kafka Connect's 400.
func (p *Plugins) PluginConfig(ctx context.Context, plugin, version string) ([]api.ConfigKeyInfo, error) {
	req, has, err := pluginversion.Requirement(version)
	if err != nil {
		return nil, api.Errorf(api.CodeBadRequest, "%s", err.Error())
	}
	g, builtin := p.reg.Lookup(plugin)
	if !builtin || g.Kind == connect.KindSource || g.Kind == connect.KindSink {
		// A connector: a built-in's class may have Java versions too.
		c, ok := p.Resolve(map[string]string{validate.ConnectorClassConfig: plugin, validate.ConnectorVersionConfig: version})
		switch {
		case ok && c.Unmet != "":
			return nil, api.Errorf(api.CodeBadRequest, "%s", c.Unmet)
		case ok && c.Java():
			return p.hostPluginConfig(ctx, c, plugin)
		case !builtin:
			return nil, api.Errorf(api.CodeNotFound, "Unknown plugin %s.", plugin)
		}
	}
	if has && !req.Contains(g.Version) {
		return nil, api.Errorf(api.CodeBadRequest, "%s", validate.VersionNotFound(g.Class, req, []string{g.Version}))
	}
	return validate.PluginConfig(g), nil
}

// hostPluginConfig is the config of the Java plugin c, from an agent whose
// host has its version.
func (p *Plugins) hostPluginConfig(ctx context.Context, c Choice, plugin string) ([]api.ConfigKeyInfo, error) {
	agents := p.hostAgents(c)
	if len(agents) == 0 {
		return nil, api.Errorf(api.CodeNotFound, "Unknown plugin %s.", plugin)
	}
	reply, err := p.CallAnyHost(ctx, agents, wire.PluginConnectorRequest{Op: wire.PluginOpConfigDef, Class: c.Class, Version: c.Pinned})
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
