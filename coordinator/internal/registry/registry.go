// Package registry is the leader's table of agents: which agents registered,
// the labels they are placed by, when each was last heard from (its lease)
// and the tasks each last reported running.
//
//	status topic names an owner ─► Presume ─► (not registered: gets no new tasks)
//	register ─────────────────────► Observe(register) ─► registered
//	heartbeat ────────────────────► Observe ─► lease renewed, report replaced
//	lease runs out ───────────────► Expire ─► gone (its tasks move)
//	graceful leave ───────────────► Remove ─► gone at once
//
// A Registry is plain data and is not safe for concurrent use: the herder
// guards it and the placements with one mutex, so that a plan sees agents
// and placements at the same instant. Time is passed in, never read.
package registry

import (
	"maps"
	"sort"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// Agent is what the coordinator knows of one agent.
type Agent struct {
	ID     string
	Labels map[string]string
	// Registered is false for an agent only presumed alive because the
	// status topic says it ran tasks: it keeps those tasks, but gets no new
	// ones until it registers.
	Registered bool
	// LastSeen is when the agent last registered or heartbeated.
	LastSeen time.Time
	// Reported is the agent's last account of the tasks it runs.
	Reported map[api.TaskID]wire.RunningTask
	// Version, Plugins (full class name → plugin) and Settings are what
	// the agent said it is and can run when it last registered or
	// heartbeated.
	Version  string
	Plugins  map[string]api.PluginInfo
	Settings map[string]string
	// HostPlugins are the Java plugins the agent's connector host runs, by
	// class and version (a host may have several versions of a class).
	HostPlugins map[PluginKey]api.PluginInfo
	// StartedAt is when the agent process started, as it said.
	StartedAt time.Time
}

// Has reports whether the agent can run the plugin of class.
func (a Agent) Has(class string) bool {
	_, ok := a.Plugins[class]
	return ok
}

// PluginKey names one version of a plugin.
type PluginKey struct{ Class, Version string }

// HasHost reports whether the agent's connector host runs the Java plugin
// class, of version when version is not empty.
func (a Agent) HasHost(class, version string) bool {
	if version != "" {
		_, ok := a.HostPlugins[PluginKey{class, version}]
		return ok
	}
	for k := range a.HostPlugins {
		if k.Class == class {
			return true
		}
	}
	return false
}

// HostPluginPlacement is how placement names a Java plugin (version empty:
// any version of the class), apart from a built-in Go plugin of the same
// class: a Java connector's tasks run only where the host has its plugin.
// It reads as the plugin in a task's "No live agent has the plugin …".
func HostPluginPlacement(class, version string) string {
	if version == "" {
		return class + " (Java)"
	}
	return class + " version " + version + " (Java)"
}

// PlacementPlugins are the plugins the agent can run as placement names
// them: the classes of its built-in plugins, and each Java plugin of its
// host by class alone and by class and version (HostPluginPlacement).
func (a Agent) PlacementPlugins() map[string]bool {
	out := make(map[string]bool, len(a.Plugins)+2*len(a.HostPlugins))
	for class := range a.Plugins {
		out[class] = true
	}
	for k := range a.HostPlugins {
		out[HostPluginPlacement(k.Class, "")] = true
		out[HostPluginPlacement(k.Class, k.Version)] = true
	}
	return out
}

// Registry holds the agents of one leadership term.
type Registry struct {
	lease  time.Duration
	agents map[string]*Agent
}

// New returns an empty registry whose agents lose their lease after lease
// without a heartbeat.
func New(lease time.Duration) *Registry {
	return &Registry{lease: lease, agents: map[string]*Agent{}}
}

// Observe records a registration (register true) or a heartbeat at now.
// A heartbeat from an agent the registry does not know, or only presumes,
// is not accepted (known false): the agent must register. changed reports
// whether anything a plan depends on changed: a new agent, other labels,
// or a report that differs from the previous one.
func (r *Registry) Observe(req *wire.RegisterRequest, register bool, now time.Time) (known, changed bool) {
	a := r.agents[req.AgentID]
	if a == nil || !a.Registered {
		if !register {
			return false, false
		}
		if a == nil {
			a = &Agent{ID: req.AgentID}
			r.agents[req.AgentID] = a
		}
		changed = true
	}
	reported := make(map[api.TaskID]wire.RunningTask, len(req.Tasks))
	for _, t := range req.Tasks {
		reported[t.ID] = t
	}
	plugins := make(map[string]api.PluginInfo, len(req.Plugins))
	for _, p := range req.Plugins {
		plugins[p.Class] = p
	}
	hostPlugins := make(map[PluginKey]api.PluginInfo, len(req.HostPlugins))
	for _, p := range req.HostPlugins {
		hostPlugins[PluginKey{p.Class, p.Version}] = p
	}
	changed = changed || !maps.Equal(a.Labels, req.Labels) || !maps.Equal(a.Reported, reported) ||
		!maps.Equal(a.Plugins, plugins) || !maps.Equal(a.HostPlugins, hostPlugins) || !maps.Equal(a.Settings, req.Settings) || a.Version != req.Version
	a.Registered = true
	a.Labels = maps.Clone(req.Labels)
	a.LastSeen = now
	a.Reported = reported
	a.Version, a.Plugins, a.HostPlugins, a.Settings = req.Version, plugins, hostPlugins, maps.Clone(req.Settings)
	a.StartedAt = req.StartedAt
	return true, changed
}

// Touch records that the agent was heard at now on another path than NATS
// (its liveness beat on Kafka): it keeps its lease. An agent the registry
// does not know is not added: it must register.
func (r *Registry) Touch(id string, now time.Time) bool {
	a := r.agents[id]
	if a == nil {
		return false
	}
	if now.After(a.LastSeen) {
		a.LastSeen = now
	}
	return true
}

// Presume adds an agent the status topic names as a task owner, as if heard
// from at now, unless the registry knows it already. A restarted leader
// uses it so that tasks are neither marked unassigned nor moved before
// their agents had a lease's time to report.
func (r *Registry) Presume(id string, now time.Time) {
	if _, ok := r.agents[id]; !ok {
		r.agents[id] = &Agent{ID: id, LastSeen: now, Reported: map[api.TaskID]wire.RunningTask{}}
	}
}

// Remove forgets an agent at once (it left gracefully). It reports whether
// the agent was known.
func (r *Registry) Remove(id string) bool {
	_, ok := r.agents[id]
	delete(r.agents, id)
	return ok
}

// Expire removes and returns the agents not heard from within the lease
// before now, sorted by id.
func (r *Registry) Expire(now time.Time) []Agent {
	var lost []Agent
	for id, a := range r.agents {
		if now.Sub(a.LastSeen) > r.lease {
			lost = append(lost, copyAgent(a))
			delete(r.agents, id)
		}
	}
	sort.Slice(lost, func(i, j int) bool { return lost[i].ID < lost[j].ID })
	return lost
}

// NextExpiry returns the earliest instant at which Expire would remove an
// agent, if no agent is heard from before it, and whether the registry
// holds any agent.
func (r *Registry) NextExpiry() (time.Time, bool) {
	var next time.Time
	for _, a := range r.agents {
		// Expire takes an agent once more than a lease has passed.
		if at := a.LastSeen.Add(r.lease + time.Nanosecond); next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next, !next.IsZero()
}

// Get returns a copy of an agent.
func (r *Registry) Get(id string) (Agent, bool) {
	a, ok := r.agents[id]
	if !ok {
		return Agent{}, false
	}
	return copyAgent(a), true
}

// LastSeen returns when the agent last registered or heartbeated, and
// whether the registry holds it.
func (r *Registry) LastSeen(id string) (time.Time, bool) {
	a, ok := r.agents[id]
	if !ok {
		return time.Time{}, false
	}
	return a.LastSeen, true
}

// Known reports whether the registry holds the agent, registered or presumed.
func (r *Registry) Known(id string) bool {
	_, ok := r.agents[id]
	return ok
}

// Agents returns copies of every agent, sorted by id.
func (r *Registry) Agents() []Agent {
	out := make([]Agent, 0, len(r.agents))
	for _, a := range r.agents {
		out = append(out, copyAgent(a))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Registered returns the ids of the agents that registered, sorted.
func (r *Registry) Registered() []string {
	var ids []string
	for id, a := range r.agents {
		if a.Registered {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// ForgetReported drops tasks from an agent's last report: the agent
// confirmed they stopped, or it is gone and they are fenced.
func (r *Registry) ForgetReported(agent string, ids []api.TaskID) {
	if a := r.agents[agent]; a != nil {
		for _, id := range ids {
			delete(a.Reported, id)
		}
	}
}

// Plugins returns the union of the plugins of the registered agents, by
// class: what the cluster can run now.
func (r *Registry) Plugins() map[string]api.PluginInfo {
	out := map[string]api.PluginInfo{}
	for _, a := range r.agents {
		if a.Registered {
			maps.Copy(out, a.Plugins)
		}
	}
	return out
}

// HostPlugins returns the union of the Java plugins of the registered
// agents' connector hosts, by class and version.
func (r *Registry) HostPlugins() map[PluginKey]api.PluginInfo {
	out := map[PluginKey]api.PluginInfo{}
	for _, a := range r.agents {
		if a.Registered {
			maps.Copy(out, a.HostPlugins)
		}
	}
	return out
}

// ReportedOf returns every task of connector that any agent last reported.
func (r *Registry) ReportedOf(connector string) []api.TaskID {
	var out []api.TaskID
	for _, a := range r.agents {
		for id := range a.Reported {
			if id.Connector == connector {
				out = append(out, id)
			}
		}
	}
	return out
}

func copyAgent(a *Agent) Agent {
	c := *a
	c.Labels = maps.Clone(a.Labels)
	c.Reported = maps.Clone(a.Reported)
	c.Plugins = maps.Clone(a.Plugins)
	c.HostPlugins = maps.Clone(a.HostPlugins)
	c.Settings = maps.Clone(a.Settings)
	return c
}
