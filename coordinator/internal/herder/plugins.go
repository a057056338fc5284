package herder

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/validate"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
)

// ListPlugins answers GET /connector-plugins: the plugins the live agents
// have, since those are what can run (followers forward the request to the
// leader, which holds the agents' registrations): their built-in plugins
// and their connector hosts' Java plugins, each class and version once. A
// class of both, in two versions, is listed twice, as Kafka Connect 4.x
// lists every version it has.
func (h *Herder) ListPlugins(ctx context.Context, connectorsOnly bool) ([]v1.PluginInfo, error) {
	live, host := h.agents.Plugins(), h.agents.HostPlugins()
	out := make([]v1.PluginInfo, 0, len(live)+len(host))
	seen := make(map[registry.PluginKey]bool, len(live)+len(host))
	add := func(p v1.PluginInfo) {
		k := registry.PluginKey{Class: p.Class, Version: p.Version}
		if seen[k] || connectorsOnly && p.Type != string(connect.KindSource) && p.Type != string(connect.KindSink) {
			return
		}
		seen[k] = true
		out = append(out, p)
	}
	for _, p := range live {
		add(p)
	}
	for _, p := range host {
		add(p)
	}
	slices.SortFunc(out, func(a, b v1.PluginInfo) int {
		return cmp.Or(cmp.Compare(a.Class, b.Class), cmp.Compare(a.Version, b.Version))
	})
	return out, nil
}

// PluginConfig answers GET /connector-plugins/{plugin}/config: a built-in's
// from its ConfigDef, a Java plugin's own keys from an agent whose host has
// it (config_def), each with the framework keys they do not shadow.
func (h *Herder) PluginConfig(ctx context.Context, plugin string) ([]v1.ConfigKeyInfo, error) {
	if p, ok := h.reg.Lookup(plugin); ok {
		return validate.PluginConfig(p), nil
	}
	c, ok := h.choosePlugin(map[string]string{validate.ConnectorClassConfig: plugin})
	agents := h.hostAgents(c)
	if !ok || !c.java() || len(agents) == 0 {
		return nil, v1.Errorf(v1.CodeNotFound, "Unknown plugin %s.", plugin)
	}
	reply, err := h.callAnyHost(ctx, agents, v1.PluginConnectorRequest{Op: v1.PluginOpConfigDef, Class: c.Class})
	if err != nil {
		return nil, fmt.Errorf("listing the config of %s: %w", c.Class, err)
	}
	own, err := decodeConfigKeys(reply.ConfigInfos)
	if err != nil {
		return nil, fmt.Errorf("listing the config of %s: the agent's answer: %w", c.Class, err)
	}
	return validate.RemotePluginConfig(c.plugin(), own), nil
}

// decodeConfigKeys reads a host's config_def answer: validate entries
// whose definitions are the keys, or the keys themselves (the host
// protocol's connector.config_def shape), as a list or in "configs".
func decodeConfigKeys(raw json.RawMessage) ([]v1.ConfigKeyInfo, error) {
	infos, err := decodeConfigInfos(raw)
	if err != nil {
		return nil, err
	}
	keys := make([]v1.ConfigKeyInfo, 0, len(infos))
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
	var list []v1.ConfigKeyInfo
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var obj struct {
		Configs []v1.ConfigKeyInfo `json:"configs"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decoding config keys: %w", err)
	}
	return obj.Configs, nil
}

// ValidateConfig answers PUT /connector-plugins/{plugin}/config/validate.
func (h *Herder) ValidateConfig(ctx context.Context, plugin string, config map[string]string) (v1.ConfigInfos, error) {
	if err := validate.CheckPluginType(config, plugin); err != nil {
		return v1.ConfigInfos{}, err
	}
	infos, _, err := h.validateResolved(ctx, config)
	if err != nil {
		e := v1.AsError(err)
		if errors.Is(err, validate.ErrNoConnectorType) || errors.Is(err, errUnresolvable) || e.Code == v1.CodeForbidden {
			return v1.ConfigInfos{}, e // Sluice's 400 (spec §0), or a secret outside the tenant's: 403
		}
		// Kafka Connect 4.4 raises a bad class as a BadRequestException,
		// which the validate resource wraps: 500 "<exception class>: <message>".
		return v1.ConfigInfos{}, v1.Errorf(v1.CodeInternal, "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: %s", e.Message)
	}
	return infos, nil
}

// pluginOf returns the connector plugin of a config (choosePlugin): for a
// Java plugin its class, kind and version only, as its code runs on agents.
func (h *Herder) pluginOf(props map[string]string) (*connect.Plugin, bool) {
	c, ok := h.choosePlugin(props)
	if !ok {
		return nil, false
	}
	return c.plugin(), true
}
