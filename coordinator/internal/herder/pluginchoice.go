package herder

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/validate"
	"github.com/sluice-io/sluice/coordinator/internal/instances"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
)

// pluginChoice is the plugin a connector config uses: a built-in Go plugin,
// which the coordinator runs itself, or a Java plugin of agents' connector
// hosts, whose code runs only on those agents.
type pluginChoice struct {
	// Go is the built-in plugin; nil for a Java plugin.
	Go *connect.Plugin
	// Class is the full class name and Kind its kind.
	Class string
	Kind  connect.Kind
	// Version is the version that runs: the built-in's, or for a Java
	// plugin the one asked for (Pinned) or else the one the hosts have.
	Version string
	// Pinned is the connector.plugin.version asked for (KIP-891); empty:
	// none, or a version range, which any version satisfies here.
	Pinned string
}

// java reports whether the connector is a Java plugin's.
func (c pluginChoice) java() bool { return c.Go == nil }

// plugin is the choice as the herder's offsets, status and placement code
// reads a plugin: the built-in itself, or, for a Java plugin, its class,
// kind and version only (it has no code here).
func (c pluginChoice) plugin() *connect.Plugin {
	if c.Go != nil {
		return c.Go
	}
	return &connect.Plugin{Class: c.Class, Kind: c.Kind, Version: c.Version}
}

// placement is how placement names the plugin: a Java plugin apart from a
// built-in of the same class, and by version when one is asked for.
func (c pluginChoice) placement() string {
	if c.java() {
		return registry.HostPluginPlacement(c.Class, c.Pinned)
	}
	return c.Class
}

// choosePlugin decides which plugin a connector config uses; it is the one
// place that decides it. A class with a built-in Go plugin is the built-in,
// unless connector.plugin.version names another version that a host plugin
// of the class has; a class only agents' hosts have (live ones, or ones seen
// this process's lifetime, so that a connector whose agents are all down is
// still known as Java) is Java. ok is false for a class nobody has.
func (h *Herder) choosePlugin(props map[string]string) (pluginChoice, bool) {
	cls := connect.JavaTrim(props[validate.ConnectorClassConfig])
	pinned := connect.JavaTrim(props[validate.ConnectorVersionConfig])
	if strings.ContainsAny(pinned, "[(") {
		pinned = "" // a range: Sluice runs whichever version it has
	}
	known := h.agents.KnownHostPlugins()
	if g, ok := h.reg.LookupConnector(cls); ok {
		if pinned == "" || pinned == g.Version {
			return pluginChoice{Go: g, Class: g.Class, Kind: g.Kind, Version: g.Version}, true
		}
		if info, ok := known[registry.PluginKey{Class: g.Class, Version: pinned}]; ok {
			return pluginChoice{Class: g.Class, Kind: connect.Kind(info.Type), Version: pinned, Pinned: pinned}, true
		}
		// Validation tells that the version is not found.
		return pluginChoice{Go: g, Class: g.Class, Kind: g.Kind, Version: g.Version}, true
	}
	var match []v1.PluginInfo
	for _, info := range known {
		if hostPluginNamed(info.Class, cls) && !slices.ContainsFunc(match, func(m v1.PluginInfo) bool { return m.Class == info.Class }) {
			match = append(match, info)
		}
	}
	if len(match) != 1 {
		return pluginChoice{}, false // unknown, or an ambiguous alias
	}
	c := pluginChoice{Class: match[0].Class, Kind: connect.Kind(match[0].Type), Pinned: pinned, Version: pinned}
	if c.Version == "" {
		c.Version = liveHostVersion(h.agents.HostPlugins(), c.Class)
	}
	return c, true
}

// hostPluginNamed reports whether name names the Java connector class: in
// full, by simple name, or by simple name without "Connector", as Kafka
// Connect resolves connector.class.
func hostPluginNamed(class, name string) bool {
	if class == name {
		return true
	}
	simple := class[strings.LastIndex(class, ".")+1:]
	return simple == name || simple == name+"Connector"
}

// liveHostVersion is the newest-sorting version of class the live hosts
// have (a status shows it); empty when none has it.
func liveHostVersion(live map[registry.PluginKey]v1.PluginInfo, class string) string {
	var versions []string
	for k := range live {
		if k.Class == class {
			versions = append(versions, k.Version)
		}
	}
	if len(versions) == 0 {
		return ""
	}
	slices.Sort(versions)
	return versions[len(versions)-1]
}

// hostAgents are the registered agents whose hosts have the Java plugin of
// c, sorted by id.
func (h *Herder) hostAgents(c pluginChoice) []string {
	var ids []string
	for _, a := range h.agents.Agents() {
		if a.Registered && a.HasHost(c.Class, c.Pinned) {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// noHostAgent is why a Java connector has nowhere to run.
func noHostAgent(c pluginChoice) string {
	return "No live agent has the plugin " + c.placement()
}

// remoteCallTimeout bounds one connector operation on an agent's host: a
// plugin that hangs fails its call, and the Manager retries after its
// backoff.
const remoteCallTimeout = 60 * time.Second

// callHost sends a connector operation of this leadership's term to
// agent; its error is the agent's (or NATS's), which callers put in
// context.
func (h *Herder) callHost(ctx context.Context, agent string, req v1.PluginConnectorRequest) (v1.PluginConnectorReply, error) {
	ctx, cancel := context.WithTimeout(ctx, remoteCallTimeout)
	defer cancel()
	req.Term = h.term.Load()
	return h.rpc.Connector(ctx, agent, req)
}

// callAnyHost sends req to the first of agents that answers: one that
// cannot be reached is skipped, an answer (an error included) is final.
func (h *Herder) callAnyHost(ctx context.Context, agents []string, req v1.PluginConnectorRequest) (v1.PluginConnectorReply, error) {
	err := fmt.Errorf("no agent to send %s to", req.Op)
	for _, a := range agents {
		reply, callErr := h.callHost(ctx, a, req)
		if callErr == nil {
			return reply, nil
		}
		err = fmt.Errorf("%s on agent %s: %w", req.Op, a, callErr)
		if !v1.IsCode(callErr, v1.CodeUnavailable) {
			break
		}
	}
	return v1.PluginConnectorReply{}, err
}

// remoteAgents is the herder as a RemoteHost sees the cluster.
type remoteAgents struct{ h *Herder }

var _ instances.Agents = remoteAgents{}

// Locate implements instances.Agents.
func (r remoteAgents) Locate(props map[string]string) (instances.RemotePlugin, []string, error) {
	c, ok := r.h.choosePlugin(props)
	if !ok || !c.java() {
		return instances.RemotePlugin{}, nil, fmt.Errorf("connector class %s is not a Java plugin of any agent", props[validate.ConnectorClassConfig])
	}
	p := instances.RemotePlugin{Plugin: instances.Plugin{Class: c.Class, Kind: c.Kind, Remote: true}, Version: c.Pinned}
	agents := r.h.hostAgents(c)
	if len(agents) == 0 {
		return p, nil, v1.Errorf(v1.CodeUnavailable, "%s", noHostAgent(c))
	}
	return p, agents, nil
}

// Call implements instances.Agents.
func (r remoteAgents) Call(ctx context.Context, agent string, req v1.PluginConnectorRequest) (v1.PluginConnectorReply, error) {
	return r.h.callHost(ctx, agent, req)
}

// isJava reports whether a connector config names a Java plugin: what the
// DispatchHost starts on an agent.
func (h *Herder) isJava(props map[string]string) bool {
	c, ok := h.choosePlugin(props)
	return ok && c.java()
}
