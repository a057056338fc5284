package herder

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/auth"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/drain"
	"github.com/sluice-io/sluice/coordinator/internal/placements"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// Agents as first-class objects (docs/operations.md): the leader's view of
// each agent, and cordons and drains, which live in the fleet topic so that
// a new leader and a restarted agent keep them.

// ListAgents answers GET /sluice/agents: every agent this leader knows —
// registered, presumed from the status topic, or only marked cordoned or
// draining while it is away — sorted by id.
func (h *Herder) ListAgents(ctx context.Context) (v1.AgentList, error) {
	if err := h.mustLead(); err != nil {
		return v1.AgentList{}, err
	}
	marks := h.fleet.State.Agents()
	agents, placed := h.agents.AgentsAndPlacements()
	out := v1.AgentList{Agents: []v1.AgentInfo{}}
	seen := map[string]bool{}
	for _, a := range agents {
		seen[a.ID] = true
		out.Agents = append(out.Agents, h.agentInfo(a, marks[a.ID], placed))
	}
	for id, m := range marks {
		if !seen[id] {
			out.Agents = append(out.Agents, h.agentInfo(registry.Agent{ID: id}, m, placed))
		}
	}
	sort.Slice(out.Agents, func(i, j int) bool { return out.Agents[i].ID < out.Agents[j].ID })
	return out, nil
}

// GetAgent answers GET /sluice/agents/{id}.
func (h *Herder) GetAgent(ctx context.Context, id string) (v1.AgentInfo, error) {
	list, err := h.ListAgents(ctx)
	if err != nil {
		return v1.AgentInfo{}, err
	}
	for _, a := range list.Agents {
		if a.ID == id {
			return a, nil
		}
	}
	return v1.AgentInfo{}, agentNotFound(id)
}

func agentNotFound(id string) error { return v1.Errorf(v1.CodeNotFound, "Agent %s not found", id) }

// mustLead refuses an agent operation on a coordinator that does not lead:
// only the leader knows the agents. The REST layer forwards these requests
// to the leader, so a follower sees one only while leadership changes.
func (h *Herder) mustLead() error {
	if h.term.Load() == 0 {
		return v1.Errorf(v1.CodeConflict, staleMessage)
	}
	return nil
}

// agentInfo is a as GET /sluice/agents shows it, with mark m (zero when
// active) and the tasks placed on it or that it reports.
func (h *Herder) agentInfo(a registry.Agent, m store.AgentMark, placed map[v1.TaskID]placements.Placement) v1.AgentInfo {
	info := v1.AgentInfo{ID: a.ID, Labels: a.Labels, Version: a.Version, State: v1.AgentActive, Registered: a.Registered, Plugins: []string{}, Tasks: []v1.AgentTask{}}
	if info.Labels == nil {
		info.Labels = map[string]string{}
	}
	if m.State != "" {
		info.State = m.State
	}
	if a.Registered {
		info.LeaseExpires = a.LastSeen.Add(h.cfg.AgentLease).UTC()
		info.StartedAt = a.StartedAt
	}
	for class := range a.Plugins {
		info.Plugins = append(info.Plugins, class)
	}
	sort.Strings(info.Plugins)
	ids := map[v1.TaskID]bool{}
	for id, p := range placed {
		if p.Agent == a.ID {
			ids[id] = true
		}
	}
	for id := range a.Reported {
		ids[id] = true
	}
	for id := range ids {
		state := v1.StateUnassigned // assigned, not yet reported running
		if rt, ok := a.Reported[id]; ok {
			state = rt.State
		}
		info.Tasks = append(info.Tasks, v1.AgentTask{Connector: id.Connector, Task: id.Task, State: state})
	}
	sort.Slice(info.Tasks, func(i, j int) bool {
		return reconciler.TaskLess(v1.TaskID{Connector: info.Tasks[i].Connector, Task: info.Tasks[i].Task}, v1.TaskID{Connector: info.Tasks[j].Connector, Task: info.Tasks[j].Task})
	})
	return info
}

// knownAgent refuses an id this leader neither has registered (or
// presumed) nor holds a mark of.
func (h *Herder) knownAgent(id string) error {
	if _, marked := h.fleet.State.Agent(id); marked {
		return nil
	}
	if !h.agents.Known(id) {
		return agentNotFound(id)
	}
	return nil
}

// CordonAgent answers PUT /sluice/agents/{id}/cordon: the agent takes no
// new task and keeps those it runs. A draining agent stays draining.
func (h *Herder) CordonAgent(ctx context.Context, id string) (v1.AgentInfo, error) {
	if m, ok := h.fleet.State.Agent(id); !ok || m.State != v1.AgentDraining {
		if err := h.markAgent(ctx, id, v1.AgentCordoned, false); err != nil {
			return v1.AgentInfo{}, err
		}
	}
	return h.GetAgent(ctx, id)
}

// UncordonAgent answers PUT /sluice/agents/{id}/uncordon: the agent takes
// new tasks again, and a drain of it stops (moves under way finish).
func (h *Herder) UncordonAgent(ctx context.Context, id string) (v1.AgentInfo, error) {
	if err := h.markAgent(ctx, id, v1.AgentActive, false); err != nil {
		return v1.AgentInfo{}, err
	}
	return h.GetAgent(ctx, id)
}

// DrainAgent answers PUT /sluice/agents/{id}/drain: the agent is cordoned
// and its tasks are moved to other agents, drain.Parallel at a time (fleet/drain). A task
// no other agent may run makes it a 409 naming the tasks, unless force,
// which unassigns such tasks instead.
func (h *Herder) DrainAgent(ctx context.Context, id string, force bool) (v1.DrainStatus, error) {
	if err := h.mustLead(); err != nil {
		return v1.DrainStatus{}, err
	}
	if err := h.knownAgent(id); err != nil {
		return v1.DrainStatus{}, err
	}
	if !force {
		if blocked := drain.Blocked(h.rec.Snapshot(), id); len(blocked) > 0 {
			names := make([]string, len(blocked))
			for i, b := range blocked {
				names[i] = fmt.Sprintf("%s/%d (%s)", b.Connector, b.Task, b.Reason)
			}
			return v1.DrainStatus{}, v1.Errorf(v1.CodeConflict, "Draining agent %s would leave %d task(s) with nowhere to go: %s; drain it with force=true to unassign them",
				id, len(blocked), strings.Join(names, ", "))
		}
	}
	if err := h.markAgent(ctx, id, v1.AgentDraining, force); err != nil {
		return v1.DrainStatus{}, err
	}
	return h.DrainStatus(ctx, id)
}

// markAgent writes agent id's mark; the agent must be known.
func (h *Herder) markAgent(ctx context.Context, id, state string, force bool) error {
	if err := h.mustLead(); err != nil {
		return err
	}
	if err := h.knownAgent(id); err != nil {
		return err
	}
	mark := store.AgentMark{State: state, Force: force, StartedAt: time.Now().UTC()}
	if p, ok := auth.PrincipalFrom(ctx); ok {
		mark.Principal = p
	}
	if old, ok := h.fleet.State.Agent(id); ok && old.State == state && old.Force == force {
		return nil // already so: keep when it started
	}
	if err := h.fleet.Apply(ctx, store.MarkAgent{ID: id, Mark: mark}); err != nil {
		return writeFailed(err, "Failed to mark agent %s %s", id, state)
	}
	h.log.Info("agent marked", "agent", id, "state", state, "force", force)
	h.trigger()
	return nil
}

// DrainStatus answers GET /sluice/agents/{id}/drain.
func (h *Herder) DrainStatus(ctx context.Context, id string) (v1.DrainStatus, error) {
	if err := h.mustLead(); err != nil {
		return v1.DrainStatus{}, err
	}
	m, ok := h.fleet.State.Agent(id)
	if !ok || m.State != v1.AgentDraining {
		if err := h.knownAgent(id); err != nil {
			return v1.DrainStatus{}, err
		}
		return v1.DrainStatus{}, v1.Errorf(v1.CodeNotFound, "Agent %s is not draining", id)
	}
	// The snapshot retires the moves done since the fleet loop's last
	// step, so that Moved counts every task that runs elsewhere by now.
	return drain.Status(h.rec.Snapshot(), id, m), nil
}
