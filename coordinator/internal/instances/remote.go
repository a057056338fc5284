package instances

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/configprovider"
	"github.com/sluice-io/sluice/shared/wire"
)

// RemotePlugin is the Java plugin a connector config uses.
type RemotePlugin struct {
	Plugin
	// Version is the version the connector resolved to (its
	// connector.plugin.version, read once for the fleet); empty: whichever
	// the agent has.
	Version string
}

// Agents is what a RemoteHost needs of the cluster.
type Agents interface {
	// Locate names the Java plugin of a connector config and the live
	// agents whose connector hosts have it. An error (no live agent has
	// it) fails the start, which the Manager retries after its backoff.
	Locate(props map[string]string) (RemotePlugin, []string, error)
	// Call sends a connector operation to agent's connector host; it fills
	// in the term.
	Call(ctx context.Context, agent string, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error)
}

// RemoteHost runs Java connectors' instances on agents, over NATS: the
// coordinator runs no code of a Java plugin. Start picks a live agent with
// the plugin, preferring the one that ran the connector last (its host may
// still hold the plugin's caches), and TaskConfigs and Stop go to that
// agent. An agent that fails a call is tried last at the next Start, so a
// lost or unreachable agent costs one backoff, not every retry. It is safe
// for concurrent use.
type RemoteHost struct {
	agents    Agents
	providers *configprovider.Transformer

	mu      sync.Mutex
	running map[string]*remoteInstance
	// last is the agent that last ran each connector; avoid the agent whose
	// call failed.
	last, avoid map[string]string
	// waiting are the connectors whose last start found no agent with
	// their plugin (Waiting).
	waiting map[string]bool
}

// remoteInstance is a connector started on an agent.
type remoteInstance struct {
	agent         string
	plugin        RemotePlugin
	cc            connect.ConnectorContext
	raw, resolved map[string]string
	// lost: the agent or its host went away; Stop has nobody to tell.
	lost bool
	// gone is closed when lost is set: it ends the calls still waiting
	// for the agent (call).
	gone chan struct{}
}

// errInstanceGone ends a call to an instance whose agent or host went
// away meanwhile: its answer would never come, and the call would hold the
// connector (which the Manager starts again elsewhere only once the call
// returns) until its timeout, a minute.
var errInstanceGone = api.Errorf(api.CodeUnavailable, "the agent running the connector went away")

// call sends req to in's agent; it ends with errInstanceGone as soon as
// the instance is lost.
func (h *RemoteHost) call(ctx context.Context, in *remoteInstance, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-in.gone:
			cancel(errInstanceGone)
		case <-ctx.Done():
		}
	}()
	reply, err := h.agents.Call(ctx, in.agent, req)
	if err != nil && errors.Is(context.Cause(ctx), errInstanceGone) {
		return reply, errInstanceGone
	}
	return reply, err
}

var _ Host = (*RemoteHost)(nil)

// NewRemoteHost returns a host that runs instances on the agents agents
// names. As LocalHost does, it hands the plugin the config with the
// providers' placeholders resolved (providers may be nil: none are) and
// puts them back into the task configs.
func NewRemoteHost(agents Agents, providers *configprovider.Transformer) *RemoteHost {
	return &RemoteHost{agents: agents, providers: providers, running: map[string]*remoteInstance{},
		last: map[string]string{}, avoid: map[string]string{}, waiting: map[string]bool{}}
}

// Start implements Host.
func (h *RemoteHost) Start(ctx context.Context, name string, props map[string]string, cc connect.ConnectorContext) (Plugin, error) {
	plugin, candidates, err := h.agents.Locate(props)
	if err == nil && len(candidates) == 0 {
		err = fmt.Errorf("no live agent has the plugin %s", plugin.Class)
	}
	h.mu.Lock()
	if err != nil {
		h.waiting[name] = true
	} else {
		delete(h.waiting, name)
	}
	h.mu.Unlock()
	if err != nil {
		return Plugin{}, err
	}
	resolved, err := h.providers.Transform(props)
	if err != nil {
		return Plugin{}, fmt.Errorf("resolving the config of %s: %w", plugin.Class, err)
	}
	h.mu.Lock()
	if _, running := h.running[name]; running {
		h.mu.Unlock()
		return Plugin{}, fmt.Errorf("connector %s is already started", name)
	}
	agent := pick(candidates, h.last[name], h.avoid[name])
	h.mu.Unlock()
	_, err = h.agents.Call(ctx, agent, wire.PluginConnectorRequest{Op: wire.PluginOpStart, Name: name, Class: plugin.Class,
		Version: plugin.Version, Config: maps.Clone(resolved)})
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.avoid[name] = agent
		return Plugin{}, fmt.Errorf("starting %s on agent %s: %w", plugin.Class, agent, err)
	}
	delete(h.avoid, name)
	h.last[name] = agent
	h.running[name] = &remoteInstance{agent: agent, plugin: plugin, cc: cc, raw: maps.Clone(props), resolved: resolved,
		gone: make(chan struct{})}
	return plugin.Plugin, nil
}

// pick is the agent to start a connector on: the one that ran it last if
// it can, else the first; the one whose call failed last only when there
// is no other.
func pick(candidates []string, last, avoid string) string {
	sorted := slices.Sorted(slices.Values(candidates))
	if last != "" && last != avoid && slices.Contains(sorted, last) {
		return last
	}
	for _, a := range sorted {
		if a != avoid {
			return a
		}
	}
	return sorted[0]
}

// TaskConfigs implements Host. A failed call is the instance's loss when
// the agent could not be reached: the Manager then starts the connector
// again, elsewhere if it can, instead of asking an agent that is gone.
func (h *RemoteHost) TaskConfigs(ctx context.Context, name string, maxTasks int) ([]map[string]string, error) {
	h.mu.Lock()
	in := h.running[name]
	h.mu.Unlock()
	if in == nil {
		return nil, fmt.Errorf("connector %s is not started", name)
	}
	reply, err := h.call(ctx, in, wire.PluginConnectorRequest{Op: wire.PluginOpTaskConfigs, Name: name,
		Class: in.plugin.Class, Version: in.plugin.Version, MaxTasks: resolvedMaxTasks(in.raw, in.resolved, maxTasks)})
	if err != nil {
		if unreachable(err) {
			h.lose(in, name)
		}
		return nil, fmt.Errorf("computing the task configs of connector %s on agent %s: %w", name, in.agent, err)
	}
	return configprovider.ReverseTransform(in.raw, reply.TaskConfigs), nil
}

// unreachable reports whether err says the agent, not the plugin, failed:
// nobody answered, or not in time.
func unreachable(err error) bool {
	return api.IsCode(err, api.CodeUnavailable) || errors.Is(err, context.DeadlineExceeded) ||
		api.IsCode(err, api.CodeTimeout)
}

// Stop implements Host.
func (h *RemoteHost) Stop(ctx context.Context, name string) error {
	h.mu.Lock()
	in := h.running[name]
	delete(h.running, name)
	lost := in != nil && in.lost
	h.mu.Unlock()
	if in == nil || lost {
		return nil
	}
	if _, err := h.call(ctx, in, wire.PluginConnectorRequest{Op: wire.PluginOpStop, Name: name,
		Class: in.plugin.Class, Version: in.plugin.Version}); err != nil {
		return fmt.Errorf("stopping connector %s on agent %s: %w", name, in.agent, err)
	}
	return nil
}

// Event hands what a connector asked for on its own to its instance: a
// task reconfiguration, an error it raised, or its host's death, after
// which it is started again. An event of an instance that is no longer
// running there (stopped, started elsewhere since) is dropped.
func (h *RemoteHost) Event(ev wire.PluginConnectorEvent) {
	h.mu.Lock()
	in := h.running[ev.Name]
	h.mu.Unlock()
	if in == nil || in.agent != ev.AgentID {
		return
	}
	switch ev.Kind {
	case wire.PluginEventReconfigure:
		in.cc.RequestTaskReconfiguration()
	case wire.PluginEventError:
		msg := ev.Message
		if ev.Trace != "" {
			msg += "\n" + ev.Trace
		}
		in.cc.RaiseError(errors.New(msg))
	case wire.PluginEventHostLost:
		h.lose(in, ev.Name)
	}
}

// Waiting returns, and forgets, the connectors whose last start found no
// agent with their plugin: when an agent with Java plugins registers, the
// caller restarts them at once rather than after their backoff.
func (h *RemoteHost) Waiting() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	names := slices.Sorted(maps.Keys(h.waiting))
	clear(h.waiting)
	return names
}

// AgentsGone loses every instance that ran on one of agents: they left or
// their leases expired, and their connectors start again elsewhere.
func (h *RemoteHost) AgentsGone(agents []string) {
	h.mu.Lock()
	var lost []*remoteInstance
	var names []string
	for name, in := range h.running {
		if slices.Contains(agents, in.agent) {
			lost, names = append(lost, in), append(names, name)
		}
	}
	h.mu.Unlock()
	for i, in := range lost {
		h.lose(in, names[i])
	}
}

// lose marks in as gone with its agent and asks the Manager to start its
// connector again.
func (h *RemoteHost) lose(in *remoteInstance, name string) {
	h.mu.Lock()
	if !in.lost {
		close(in.gone)
	}
	in.lost = true
	h.avoid[name] = in.agent
	h.mu.Unlock()
	if l, ok := in.cc.(instanceLoser); ok {
		l.InstanceLost()
	}
}

// instanceLoser is the ConnectorContext the Manager hands an instance:
// InstanceLost says the instance is gone (its host died), and the Manager
// starts the connector again.
type instanceLoser interface{ InstanceLost() }

// DispatchHost runs each connector on the host its plugin calls for: a
// built-in Go plugin on local, a Java plugin on remote.
type DispatchHost struct {
	local, remote Host
	isRemote      func(props map[string]string) bool

	mu sync.Mutex
	by map[string]Host
}

var _ Host = (*DispatchHost)(nil)

// NewDispatchHost returns a host that starts a connector on remote when
// isRemote says its config names a Java plugin, else on local.
func NewDispatchHost(local, remote Host, isRemote func(props map[string]string) bool) *DispatchHost {
	return &DispatchHost{local: local, remote: remote, isRemote: isRemote, by: map[string]Host{}}
}

// Start implements Host.
func (d *DispatchHost) Start(ctx context.Context, name string, props map[string]string, cc connect.ConnectorContext) (Plugin, error) {
	host := d.local
	if d.isRemote(props) {
		host = d.remote
	}
	p, err := host.Start(ctx, name, props, cc)
	if err != nil {
		return Plugin{}, err
	}
	d.mu.Lock()
	d.by[name] = host
	d.mu.Unlock()
	return p, nil
}

// TaskConfigs implements Host.
func (d *DispatchHost) TaskConfigs(ctx context.Context, name string, maxTasks int) ([]map[string]string, error) {
	d.mu.Lock()
	host := d.by[name]
	d.mu.Unlock()
	if host == nil {
		return nil, fmt.Errorf("connector %s is not started", name)
	}
	return host.TaskConfigs(ctx, name, maxTasks)
}

// Stop implements Host.
func (d *DispatchHost) Stop(ctx context.Context, name string) error {
	d.mu.Lock()
	host := d.by[name]
	delete(d.by, name)
	d.mu.Unlock()
	if host == nil {
		return nil
	}
	return host.Stop(ctx, name)
}
