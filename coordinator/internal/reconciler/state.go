package reconciler

import (
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/placements"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
)

// Read-only views of the registry and the placements for the rest of the
// coordinator. Each takes r.mu briefly and returns copies.

// Agents are every agent this leader knows (registered or presumed).
func (r *Reconciler) Agents() []registry.Agent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.agents.Agents()
}

// Placements are every task's placement.
func (r *Reconciler) Placements() map[v1.TaskID]placements.Placement {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.placed.All()
}

// AgentsAndPlacements are both at one instant.
func (r *Reconciler) AgentsAndPlacements() ([]registry.Agent, map[v1.TaskID]placements.Placement) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.agents.Agents(), r.placed.All()
}

// Known reports whether agent id registered or is presumed.
func (r *Reconciler) Known(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.agents.Known(id)
}

// Registered are the registered agents serving every one of features.
func (r *Reconciler) Registered(features ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.agents.Registered(features...)
}

// RegisteredCount counts the agents that registered and hold a lease.
func (r *Reconciler) RegisteredCount() int { return len(r.Registered()) }

// LastSeen is when agent was last heard from; false when unknown.
func (r *Reconciler) LastSeen(agent string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.agents.LastSeen(agent)
}

// TasksOfConnector are the tasks of connector that any agent reports or
// that are placed.
func (r *Reconciler) TasksOfConnector(connector string) []v1.TaskID {
	_, tasks := r.Holders(connector)
	return tasks
}

// Holders are, at one instant, every known agent and the tasks of
// connector that any agent reports or that are placed: who may hold one of
// its tasks.
func (r *Reconciler) Holders(connector string) (agents []string, tasks []v1.TaskID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.agents.Agents() {
		agents = append(agents, a.ID)
	}
	return agents, append(r.agents.ReportedOf(connector), r.placed.OfConnector(connector)...)
}

// ForgetReported drops ids from what agent reports (they stopped).
func (r *Reconciler) ForgetReported(agent string, ids []v1.TaskID) {
	r.mu.Lock()
	r.agents.ForgetReported(agent, ids)
	r.mu.Unlock()
}

// Remove forgets agent id, as a lost agent is forgotten.
func (r *Reconciler) Remove(id string) {
	r.mu.Lock()
	r.agents.Remove(id)
	r.mu.Unlock()
}

// Generation is the highest task generation issued so far.
func (r *Reconciler) Generation() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.placed.Generation()
}

// RestartTasks gives tasks a new generation, so their agents restart them.
func (r *Reconciler) RestartTasks(ids []v1.TaskID) {
	r.mu.Lock()
	for _, id := range ids {
		r.placed.Restart(id)
	}
	r.mu.Unlock()
	r.Trigger()
}

// Plugins are the built-in plugins of the live agents.
func (r *Reconciler) Plugins() map[string]v1.PluginInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.agents.Plugins()
}

// HostPlugins are the Java plugins of live agents' hosts.
func (r *Reconciler) HostPlugins() map[registry.PluginKey]v1.PluginInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.agents.HostPlugins()
}

// KnownHostPlugins are the Java plugins of live agents' hosts and those of
// every host seen since this process started: a connector of one stays a
// Java connector while no agent with it is live.
func (r *Reconciler) KnownHostPlugins() map[registry.PluginKey]v1.PluginInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.agents.HostPlugins()
	for k, info := range r.hostSeen {
		if _, ok := out[k]; !ok {
			out[k] = info
		}
	}
	return out
}

// rememberHostPlugins keeps the Java plugins an agent announced; the
// caller holds r.mu.
func (r *Reconciler) rememberHostPlugins(plugins []v1.PluginInfo) {
	if r.hostSeen == nil {
		r.hostSeen = map[registry.PluginKey]v1.PluginInfo{}
	}
	for _, p := range plugins {
		r.hostSeen[registry.PluginKey{Class: p.Class, Version: p.Version}] = p
	}
}
