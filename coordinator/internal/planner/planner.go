// Package planner turns what should run into the commands that make it so.
// Plan is a pure function of the desired tasks, the agents and the current
// placements: no I/O, no clock, no locks, so every case — zombies, holds,
// generations, selectors — is a table test.
//
//	desired tasks ─┐
//	agents ────────┼─► Plan ─► revokes (stop first) ─► assigns ─► new placements
//	placements ────┘           unassigned / removed (statuses to write)
//
// Placement itself is the scheduler's (sticky, back to the agent that last
// ran a task, else least loaded); the planner decides which commands a
// change of placement, config or target calls for, which unplaced tasks
// wait (for their last agent, or for a start to settle), and issues
// generations.
package planner

import (
	"sort"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/placements"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/shared/labels"
	"github.com/sluice-io/sluice/shared/wire"
)

// Desired is a task that should run, from the committed configs.
type Desired struct {
	ID         api.TaskID
	ConnConfig map[string]string
	TaskConfig map[string]string
	// Hash identifies ConnConfig and TaskConfig; a change restarts the task.
	Hash     string
	Paused   bool
	Selector map[string]string
	// SelectorError is why the connector's sluice.agent.selector does not
	// parse; such a task runs nowhere (placement fails closed) until its
	// config is fixed.
	SelectorError string
	// Plugin is the full class of the connector: only an agent that has it
	// runs the task.
	Plugin string
	// Hold keeps a running task as it is: its connector's new task configs
	// are not committed yet, and restarting it now with the old ones would
	// only restart it again once they are.
	Hold bool
	// ReservedTopics are the topics the task may not use, sent with its
	// assignment (wire.TaskAssignment.ReservedTopics); not part of Hash.
	ReservedTopics map[string]string
	// Tenant is what the task's tenant lets it touch (nil: no tenant);
	// its fingerprint is part of Hash.
	Tenant *wire.TenantPolicy
	// LastAgent is the agent that last ran the task (its status's worker
	// id), "" when none has. An unplaced task goes back to it when it is
	// registered and can take it; while it is only presumed (it may come
	// back within its lease), the task waits for it.
	LastAgent string
}

// Input is everything a plan depends on.
type Input struct {
	Desired map[api.TaskID]Desired
	// Agents are the agents that hold a lease, registered or presumed.
	Agents     []registry.Agent
	Placements map[api.TaskID]placements.Placement
	// Generation is the highest generation issued so far.
	Generation int64
	// Cordoned are the ids of the agents that keep their tasks but are
	// given no new ones.
	Cordoned map[string]bool
	// Moves take tasks off their agents (a drain, a rebalance): see
	// scheduler.Assign. A moved task is revoked before it is assigned
	// elsewhere, at a new generation, like any moved task.
	Moves map[api.TaskID]scheduler.Move
	// Settling are unplaced tasks that no agent ran which a start holds
	// back until the agents starting together have registered, so that
	// the first to register does not take them all (reconciler/startup.go).
	Settling map[api.TaskID]bool
}

// Output is what the herder sends and writes.
type Output struct {
	// Revokes are sent first, and waited for: a moved task stops before it
	// starts elsewhere.
	Revokes map[string][]api.TaskID
	Assigns map[string][]wire.TaskAssignment
	// Unassigned are desired tasks that no agent can run now; Reasons says
	// why, for each, in words for the task's status trace.
	Unassigned []api.TaskID
	Reasons    map[api.TaskID]string
	// Removed are placed tasks that are no longer desired.
	Removed []api.TaskID
	// Placements is the new placement table; Generation the highest
	// generation issued.
	Placements map[api.TaskID]placements.Placement
	Generation int64
}

// Plan works out the commands that make the agents run the desired tasks.
// Each list in the output is sorted, so the same input gives the same
// output.
func Plan(in Input) Output {
	out := Output{
		Revokes:    map[string][]api.TaskID{},
		Assigns:    map[string][]wire.TaskAssignment{},
		Placements: make(map[api.TaskID]placements.Placement, len(in.Placements)),
		Reasons:    map[api.TaskID]string{},
		Generation: in.Generation,
	}
	for id, p := range in.Placements {
		out.Placements[id] = p
	}
	agents := byID(in.Agents)
	tasks, live, current := SchedulerInput(in)
	target := scheduler.Assign(tasks, live, current, in.Moves)

	// Tasks that must stop where they are: no longer desired, moved, or
	// their agent is gone.
	for _, id := range sortedIDs(in.Placements) {
		p := in.Placements[id]
		d, want := in.Desired[id]
		if want && presumedPlacement(agents, p) && d.SelectorError == "" {
			continue
		}
		if agent, ok := target[id]; want && ok && agent == p.Agent {
			continue
		}
		if _, ok := agents[p.Agent]; ok {
			out.Revokes[p.Agent] = append(out.Revokes[p.Agent], id)
		}
		delete(out.Placements, id)
		if !want {
			out.Removed = append(out.Removed, id)
		}
	}
	for _, id := range sortedIDs(in.Desired) {
		d := in.Desired[id]
		agent, ok := target[id]
		if !ok {
			if _, placed := out.Placements[id]; !placed {
				out.Unassigned = append(out.Unassigned, id)
				out.Reasons[id] = unplacedReason(d, live, movedOff(in, current, id))
				if why := waiting(in, agents, live, d); why != "" && d.SelectorError == "" {
					out.Reasons[id] = why
				}
			}
			continue
		}
		p, placed := out.Placements[id]
		switch {
		case placed && d.Hold && p.Paused == d.Paused && runs(agents[agent], id, p.Generation):
			// Held only while it runs: a task its agent lost (the agent
			// restarted) is started again with what is committed.
			continue
		case !placed || p.Hash != d.Hash:
			out.Generation = placements.NextGeneration(out.Generation)
			p = placements.Placement{Agent: agent, Generation: out.Generation, Hash: d.Hash, Paused: d.Paused}
			out.Placements[id] = p
		case p.Paused != d.Paused:
			p.Paused = d.Paused
			out.Placements[id] = p
		default:
			// Resend only what the agent does not report running at this generation.
			if rt, ok := agents[agent].Reported[id]; ok && rt.Generation == p.Generation && (rt.State == api.StatePaused) == p.Paused {
				continue
			}
		}
		out.Assigns[agent] = append(out.Assigns[agent], wire.TaskAssignment{ID: id, Generation: p.Generation,
			ConnectorConfig: d.ConnConfig, TaskConfig: d.TaskConfig, ConfigHash: d.Hash, Paused: d.Paused, ReservedTopics: d.ReservedTopics, Tenant: d.Tenant})
	}
	// Tasks an agent runs that are not placed on it: zombies. (A task placed
	// on it at a newer generation is restarted by its assignment instead.)
	for _, a := range in.Agents {
		if !a.Registered {
			continue
		}
		for _, id := range sortedIDs(a.Reported) {
			if p, ok := out.Placements[id]; (!ok || p.Agent != a.ID) && !contains(out.Revokes[a.ID], id) {
				out.Revokes[a.ID] = append(out.Revokes[a.ID], id)
			}
		}
	}
	return out
}

// SchedulerInput returns what Plan gives the scheduler: the tasks it
// places (desired, with a valid selector, not left with a presumed agent),
// the registered agents (cordons applied) and where those tasks are placed
// now. Callers that ask the scheduler about the same instant (Eligible,
// Rebalance, Loads) use it, so that they see what Plan sees.
func SchedulerInput(in Input) (tasks []scheduler.Task, agents []scheduler.Agent, current map[api.TaskID]string) {
	for _, a := range in.Agents {
		if !a.Registered {
			continue
		}
		agents = append(agents, scheduler.Agent{ID: a.ID, Labels: a.Labels, Plugins: a.PlacementPlugins(), Cordoned: in.Cordoned[a.ID]})
	}
	byAgent := byID(in.Agents)
	current = map[api.TaskID]string{}
	tasks = make([]scheduler.Task, 0, len(in.Desired))
	for _, id := range sortedIDs(in.Desired) {
		d := in.Desired[id]
		if d.SelectorError != "" {
			continue // placed nowhere: Plan revokes it wherever it runs
		}
		p, ok := in.Placements[id]
		if ok && presumedPlacement(byAgent, p) {
			continue // left where it is until its agent registers or its lease runs out
		}
		if !ok && waiting(in, byAgent, agents, d) != "" {
			continue // waits for its agent, or for the agents that start together
		}
		if ok {
			current[id] = p.Agent
		}
		tasks = append(tasks, scheduler.Task{ID: id, Selector: d.Selector, Plugin: d.Plugin, Prefer: d.LastAgent})
	}
	return tasks, agents, current
}

// waiting says why unplaced task d is not placed yet although an agent
// might take it, "" when it is not held back: its last agent is presumed
// (named by the status topic, or gone gracefully as the whole fleet
// stopped) and may still come back within its lease, or it never ran and a
// start is settling while a live agent (of live, the registered ones) could
// run it — one that no agent can run says why instead, so that its status
// does not change back and forth at every start.
func waiting(in Input, agents map[string]registry.Agent, live []scheduler.Agent, d Desired) string {
	if a, ok := agents[d.LastAgent]; ok && !a.Registered {
		return "Waiting for agent " + d.LastAgent + ", which ran the task last, to register again: the task goes back to it, or elsewhere once its lease runs out"
	}
	if in.Settling[d.ID] && len(scheduler.Eligible(scheduler.Task{ID: d.ID, Selector: d.Selector, Plugin: d.Plugin}, live, "")) > 0 {
		return "Waiting for the agents that start together to register: the task is placed once they have, or once the start's placement settle window has passed"
	}
	return ""
}

// presumedPlacement reports whether p places its task on an agent the
// status topic names but that has not registered yet. Such a task is left
// where it is until the agent registers or its lease runs out.
func presumedPlacement(agents map[string]registry.Agent, p placements.Placement) bool {
	a, ok := agents[p.Agent]
	return ok && !a.Registered
}

// movedOff returns the agent a move of task id takes it off, if the move
// applies as scheduler.Assign applies it (the task is on that agent): an
// unplaced task is then unplaced because of the move.
func movedOff(in Input, current map[api.TaskID]string, id api.TaskID) string {
	m, ok := in.Moves[id]
	if agent, placed := current[id]; ok && placed && agent == m.From {
		return m.From
	}
	return ""
}

func byID(agents []registry.Agent) map[string]registry.Agent {
	m := make(map[string]registry.Agent, len(agents))
	for _, a := range agents {
		m[a.ID] = a
	}
	return m
}

// unplacedReason says why no agent runs d.
func unplacedReason(d Desired, live []scheduler.Agent, movedFrom string) string {
	if d.SelectorError != "" {
		return "The task runs nowhere: its connector's sluice.agent.selector is invalid (" + d.SelectorError + ")"
	}
	if len(live) == 0 {
		return "No agent is registered with the coordinator"
	}
	t := scheduler.Task{ID: d.ID, Selector: d.Selector, Plugin: d.Plugin}
	var fit []string
	hasPlugin := false
	for _, a := range live {
		if scheduler.Fits(t, a) {
			fit = append(fit, a.ID)
		}
		hasPlugin = hasPlugin || d.Plugin == "" || a.Plugins[d.Plugin]
	}
	switch {
	case movedFrom != "":
		return "The task was moved off agent " + movedFrom + " and no other live agent that is not cordoned can run it"
	case len(fit) > 0:
		sort.Strings(fit)
		return "Every live agent that can run the task is cordoned: " + strings.Join(fit, ", ")
	case !hasPlugin:
		return "No live agent has the plugin " + d.Plugin
	}
	return "No live agent matches sluice.agent.selector " + labels.Format(d.Selector)
}

// runs reports whether a reports task id running at generation gen.
func runs(a registry.Agent, id api.TaskID, gen int64) bool {
	rt, ok := a.Reported[id]
	return ok && rt.Generation == gen
}

func contains(ids []api.TaskID, id api.TaskID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// sortedIDs returns a map's task ids in connector, then task order.
func sortedIDs[V any](m map[api.TaskID]V) []api.TaskID {
	ids := make([]api.TaskID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].Connector != ids[j].Connector {
			return ids[i].Connector < ids[j].Connector
		}
		return ids[i].Task < ids[j].Task
	})
	return ids
}
