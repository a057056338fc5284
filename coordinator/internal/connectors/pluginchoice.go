package connectors

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/connect/validate"
	"github.com/sluice-io/sluice/coordinator/internal/instances"
	"github.com/sluice-io/sluice/coordinator/internal/offsets"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/shared/wire"
)

// Choice is the plugin a connector config uses: a built-in Go plugin,
// which the coordinator runs itself, or a Java plugin of agents' connector
// hosts, whose code runs only on those agents.
type Choice struct {
	// Go is the built-in plugin; nil for a Java plugin.
	Go *connect.Plugin
	// Class is the full class name and Kind its kind.
	Class string
	Kind  connect.Kind
	// Version is the version that runs: the built-in's, or for a Java
	// plugin the one the config resolved to (Pinned).
	Version string
	// Pinned is the Java plugin's version the connector runs, on agents
	// whose hosts have it; empty when no live agent has any version of
	// the class and the config asks for none in particular.
	Pinned string
	// Unmet, when set, is Kafka Connect's message for a
	// connector.plugin.version that no live version satisfies (the
	// choice is then the built-in, or the Java class at no version).
	Unmet string
}

// Java reports whether the connector is a Java plugin's.
func (c Choice) Java() bool { return c.Go == nil }

// Plugin is the choice as the herder's offsets, status and placement code
// reads a plugin: the built-in itself, or, for a Java plugin, its class,
// kind and version only (it has no code here).
func (c Choice) Plugin() *connect.Plugin {
	if c.Go != nil {
		return c.Go
	}
	return &connect.Plugin{Class: c.Class, Kind: c.Kind, Version: c.Version}
}

// Placement is how placement names the plugin: a Java plugin apart from a
// built-in of the same class, and by the version it resolved to.
func (c Choice) Placement() string {
	if c.Java() {
		return registry.HostPluginPlacement(c.Class, c.Pinned)
	}
	return c.Class
}

// Plugins chooses the plugin of a connector config (Choice), knows which
// agents' connector hosts have a Java plugin, and calls them. It is the
// instances.Agents of the leader's RemoteHost, and the offsets service's
// Plugins and Hosts.
type Plugins struct {
	reg     *plugins.Registry
	agents  Agents
	configs Configs
	rpc     HostRPC
	term    func() int64
}

var (
	_ instances.Agents = (*Plugins)(nil)
	_ offsets.Plugins  = (*Plugins)(nil)
	_ offsets.Hosts    = (*Plugins)(nil)
)

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

// hostAgents are the registered agents whose hosts have the Java plugin of
// c, sorted by id.
func (p *Plugins) hostAgents(c Choice) []string {
	var ids []string
	for _, a := range p.agents.Agents() {
		if a.Registered && a.HasHost(c.Class, c.Pinned) {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// noHostAgent is why a Java connector has nowhere to run.
func noHostAgent(c Choice) string {
	return "No live agent has the plugin " + c.Placement()
}

// remoteCallTimeout bounds one connector operation on an agent's host: a
// plugin that hangs fails its call, and the Manager retries after its
// backoff.
const remoteCallTimeout = 60 * time.Second

// callHost sends a connector operation of this leadership's term to
// agent; its error is the agent's (or NATS's), which callers put in
// context.
func (p *Plugins) callHost(ctx context.Context, agent string, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error) {
	ctx, cancel := context.WithTimeout(ctx, remoteCallTimeout)
	defer cancel()
	req.Term = p.term()
	return p.rpc.Connector(ctx, agent, req)
}

// CallAnyHost sends req to the first of agents that answers: one that
// cannot be reached is skipped, an answer (an error included) is final.
func (p *Plugins) CallAnyHost(ctx context.Context, agents []string, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error) {
	err := fmt.Errorf("no agent to send %s to", req.Op)
	for _, a := range agents {
		reply, callErr := p.callHost(ctx, a, req)
		if callErr == nil {
			return reply, nil
		}
		err = fmt.Errorf("%s on agent %s: %w", req.Op, a, callErr)
		if !api.IsCode(callErr, api.CodeUnavailable) {
			break
		}
	}
	return wire.PluginConnectorReply{}, err
}

// Locate implements instances.Agents.
func (p *Plugins) Locate(props map[string]string) (instances.RemotePlugin, []string, error) {
	c, ok := p.Choice(props)
	if !ok || !c.Java() {
		return instances.RemotePlugin{}, nil, fmt.Errorf("connector class %s is not a Java plugin of any agent", props[validate.ConnectorClassConfig])
	}
	rp := instances.RemotePlugin{Plugin: instances.Plugin{Class: c.Class, Kind: c.Kind, Remote: true}, Version: c.Pinned}
	agents := p.hostAgents(c)
	if len(agents) == 0 {
		return rp, nil, api.Errorf(api.CodeUnavailable, "%s", noHostAgent(c))
	}
	return rp, agents, nil
}

// Call implements instances.Agents.
func (p *Plugins) Call(ctx context.Context, agent string, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error) {
	return p.callHost(ctx, agent, req)
}

// IsJava reports whether a connector config names a Java plugin: what the
// DispatchHost starts on an agent.
func (p *Plugins) IsJava(props map[string]string) bool {
	c, ok := p.Choice(props)
	return ok && c.Java()
}

// Choose implements offsets.Plugins: the choice as the offsets service
// reads it.
func (p *Plugins) Choose(config map[string]string) (offsets.Plugin, bool) {
	c, ok := p.Choice(config)
	if !ok {
		return offsets.Plugin{}, false
	}
	return offsets.Plugin{Plugin: c.Plugin(), Java: c.Java(), Pinned: c.Pinned}, true
}

// HostAgents implements offsets.Hosts: the registered agents whose hosts
// have the Java plugin class (at pinned, when given), and why there is
// none when there is none.
func (p *Plugins) HostAgents(class, pinned string) ([]string, string) {
	c := Choice{Class: class, Pinned: pinned}
	return p.hostAgents(c), noHostAgent(c)
}

// UnknownConnectorMessage implements offsets.Plugins: Kafka Connect's
// message for a connector class nobody has.
func (p *Plugins) UnknownConnectorMessage(class string) string {
	return p.reg.UnknownConnectorMessage(class)
}

// Type is the REST type of a config: source, sink or unknown.
func (p *Plugins) Type(props map[string]string) string {
	pl, ok := p.reg.Lookup(props["connector.class"])
	if c, java := p.Choice(props); java && c.Java() {
		pl, ok = c.Plugin(), true // a Java plugin's kind, as its host announced it
	}
	if !ok {
		return api.TypeUnknown
	}
	switch pl.Kind {
	case connect.KindSource:
		return api.TypeSource
	case connect.KindSink:
		return api.TypeSink
	}
	return api.TypeUnknown
}

// PluginOf returns the connector plugin of a config (Choice): for a Java
// plugin its class, kind and version only, as its code runs on agents.
func (p *Plugins) PluginOf(props map[string]string) (*connect.Plugin, bool) {
	c, ok := p.Choice(props)
	if !ok {
		return nil, false
	}
	return c.Plugin(), true
}

// Version is the version of a config's connector plugin, which statuses
// show (KIP-891); empty when the class is unknown.
func (p *Plugins) Version(props map[string]string) string {
	if pl, ok := p.PluginOf(props); ok {
		return pl.Version
	}
	return ""
}
