package connectors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/allowedpaths"
	"github.com/sluice-io/sluice/connect/pluginversion"
	"github.com/sluice-io/sluice/connect/validate"
	"github.com/sluice-io/sluice/shared/labels"
	"github.com/sluice-io/sluice/shared/wire"
)

// Admission decides what a connector config may be and touch: its
// plugin's validation (a Java plugin's on an agent's host), the paths its
// file keys name, the reserved topics, its tenant's topics, groups,
// principal and secrets, client overrides, the uniqueness of a sink's
// consumer group, and the sizes the config topic takes. It judges the
// effective config — the merged one after a PATCH or a rollout's patch —
// with its providers' placeholders resolved.
type Admission struct {
	cfg     Config
	plugins *Plugins
}

// Validate runs the plugin's validation and the admission checks, and
// turns errors into the create-time 400 (or a tenancy refusal's 403).
func (a *Admission) Validate(ctx context.Context, props map[string]string) error {
	infos, resolved, err := a.validateResolved(ctx, props)
	if err != nil {
		return err
	}
	sink := a.plugins.Type(props) == api.TypeSink
	if err := a.checkTenantOwnership(resolved, sink); err != nil {
		return err
	}
	if infos.ErrorCount > 0 {
		return api.Errorf(api.CodeBadRequest, "%s", validate.ErrorMessage(infos))
	}
	if sink {
		if err := checkGroupID(props["name"], resolved); err != nil {
			return err
		}
		return a.checkGroupOwner(props["name"], resolved)
	}
	return nil
}

// errUnresolvable marks a config whose placeholders a provider could not
// resolve: the request's fault (a 400), never the validate endpoint's 500.
var errUnresolvable = errors.New("unresolvable config placeholder")

// validateResolved validates a connector config as Kafka Connect's
// AbstractHerder.validateConnectorConfig does: on the config with its
// config providers' placeholders resolved (a provider that cannot read what
// a placeholder names is a 400 naming it). On top, a path a file key names
// that no agent able to run the connector allows is an error on that key,
// and so is a topic no connector may use (reserved.go) or its tenant does
// not let it use (tenancy.go), and so is a client override the policy or
// the framework refuses. Placeholders resolve within the tenant's secrets.
// The config itself stays as given: only validation sees what it resolves
// to.
//
// It returns the resolved config too, for the checks a write makes on top
// (its group, its tenant): they judge what the connector will use.
func (a *Admission) validateResolved(ctx context.Context, props map[string]string) (api.ConfigInfos, map[string]string, error) {
	resolved, err := a.resolveScoped(props)
	if err != nil {
		return api.ConfigInfos{}, nil, err
	}
	if _, ok := resolved[validate.ConnectorClassConfig]; ok {
		// Kafka Connect reads connector.plugin.version before anything
		// else, and a spec Maven cannot read fails the request with
		// Maven's message.
		if _, _, err := pluginversion.Requirement(resolved[validate.ConnectorVersionConfig]); err != nil {
			return api.ConfigInfos{}, nil, api.Errorf(api.CodeBadRequest, "%s", err.Error())
		}
		c, ok := a.plugins.Resolve(resolved)
		if ok && c.Unmet != "" {
			return a.unmetVersion(c, resolved), resolved, nil
		}
		if ok && c.Java() {
			infos, err := a.validateJava(ctx, c, resolved)
			if err != nil {
				return infos, nil, err
			}
			a.checkTouched(&infos, resolved)
			return infos, resolved, nil
		}
	}
	infos, p, err := validate.Connector(a.cfg.Registry, resolved, validate.WithExactlyOnce(a.cfg.ExactlyOnce))
	if err != nil {
		return api.ConfigInfos{}, nil, err
	}
	a.checkFilePaths(&infos, p, resolved)
	a.checkTouched(&infos, resolved)
	return infos, resolved, nil
}

// unmetVersion is the validation of a config whose
// connector.plugin.version no live version satisfies, as Kafka Connect
// answers it: the framework keys only (it loads no plugin to ask), with the
// version error on both connector.class and connector.plugin.version.
func (a *Admission) unmetVersion(c Choice, props map[string]string) api.ConfigInfos {
	infos := validate.Remote(a.cfg.Registry, c.Plugin(), props, nil, validate.WithExactlyOnce(a.cfg.ExactlyOnce))
	addKeyError(&infos, validate.ConnectorClassConfig, c.Unmet)
	addKeyError(&infos, validate.ConnectorVersionConfig, c.Unmet)
	return infos
}

// checkTouched adds the errors of what a config makes its connector
// touch: reserved topics, its tenant's topics, client overrides.
func (a *Admission) checkTouched(infos *api.ConfigInfos, resolved map[string]string) {
	a.checkReservedTopics(infos, resolved)
	a.checkTenantTopics(infos, resolved)
	a.checkOverrides(infos, resolved)
}

// validateJava validates the config of a Java plugin's connector: the
// framework keys here, its own keys on an agent whose host has the plugin
// (Connector.validate runs there, never here). With no such agent live the
// result has an error on connector.class saying so, which makes a create
// or config update a 400.
func (a *Admission) validateJava(ctx context.Context, c Choice, props map[string]string) (api.ConfigInfos, error) {
	agents := a.plugins.hostAgents(c)
	if len(agents) == 0 {
		infos := validate.Remote(a.cfg.Registry, c.Plugin(), props, nil, validate.WithExactlyOnce(a.cfg.ExactlyOnce))
		addKeyError(&infos, validate.ConnectorClassConfig, noHostAgent(c))
		return infos, nil
	}
	reply, err := a.plugins.CallAnyHost(ctx, agents, wire.PluginConnectorRequest{Op: wire.PluginOpValidate, Class: c.Class, Version: c.Pinned, Config: props})
	if err != nil {
		return api.ConfigInfos{}, fmt.Errorf("validating the config of %s: %w", c.Class, err)
	}
	own, err := decodeConfigInfos(reply.ConfigInfos)
	if err != nil {
		return api.ConfigInfos{}, fmt.Errorf("validating the config of %s: the agent's answer: %w", c.Class, err)
	}
	return validate.Remote(a.cfg.Registry, c.Plugin(), props, own, validate.WithExactlyOnce(a.cfg.ExactlyOnce), validate.WithPreflight(reply.Preflight)), nil
}

// decodeConfigInfos reads a host's validate entries: a list of ConfigInfo,
// or an object holding them in "configs" (the host protocol's shape).
func decodeConfigInfos(raw json.RawMessage) ([]api.ConfigInfo, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []api.ConfigInfo
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var obj struct {
		Configs []api.ConfigInfo `json:"configs"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decoding config infos: %w", err)
	}
	return obj.Configs, nil
}

// checkFilePaths adds an error to each of the plugin's file keys whose
// path no eligible agent allows: registered, with the plugin, matching the
// connector's selector. Agents announce their --file-allowed-paths and
// working directory; the path is judged lexically here ("..", relative
// paths), and the agent judges it again, symlinks resolved, before a task
// opens it. With no eligible agent there is nobody to ask, and nothing is
// added: an agent that registers later still refuses the task itself.
func (a *Admission) checkFilePaths(infos *api.ConfigInfos, p *connect.Plugin, props map[string]string) {
	if p == nil || len(p.FileConfigs) == 0 {
		return
	}
	sel, err := labels.Parse(props[labels.SelectorKey])
	if err != nil {
		return // validation reported the selector already
	}
	agents := a.cfg.Agents.Agents()
	type agentPaths struct {
		workDir string
		dirs    []string
	}
	var eligible []agentPaths
	for _, ag := range agents {
		if ag.Registered && ag.Has(p.Class) && labels.Matches(sel, ag.Labels) {
			eligible = append(eligible, agentPaths{workDir: ag.Settings[wire.SettingWorkDir], dirs: allowedpaths.SplitList(ag.Settings[wire.SettingFileAllowedPaths])})
		}
	}
	if len(eligible) == 0 {
		return
	}
	for _, key := range p.FileConfigs {
		path := strings.TrimSpace(props[key])
		if path == "" {
			continue
		}
		var dirs []string
		allowed := slices.ContainsFunc(eligible, func(ap agentPaths) bool {
			for _, d := range ap.dirs {
				if !slices.Contains(dirs, d) {
					dirs = append(dirs, d)
				}
			}
			return allowedpaths.AllowsLexically(path, ap.workDir, ap.dirs)
		})
		if allowed {
			continue
		}
		slices.Sort(dirs)
		addKeyError(infos, key, "The path "+path+" is not under the allowed paths of any agent that can run this connector ("+
			strings.Join(dirs, ",")+"); agents allow only the directories of their --file-allowed-paths")
	}
}
