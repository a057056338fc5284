package fleetrest

import (
	"context"
	"sort"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/drain"
	"github.com/sluice-io/sluice/coordinator/internal/placements"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// anonymous is the principal of a call without a caller (Config.Principal).
const anonymous = "anonymous"

// Agents as first-class objects (docs/operations.md): the leader's view of
// each agent, and cordons and drains, which live in the fleet topic so that
// a new leader and a restarted agent keep them.

// ListAgents answers GET /sluice/agents: every agent this leader knows —
// registered, presumed from the status topic, or only marked cordoned or
// draining while it is away — sorted by id.
func (s *Service) ListAgents(ctx context.Context) (api.AgentList, error) {
	if err := s.mustLead(); err != nil {
		return api.AgentList{}, err
	}
	marks := s.cfg.Fleet.Agents()
	agents, placed := s.cfg.Agents.AgentsAndPlacements()
	out := api.AgentList{Agents: []api.AgentInfo{}}
	seen := map[string]bool{}
	for _, a := range agents {
		seen[a.ID] = true
		out.Agents = append(out.Agents, s.agentInfo(a, marks[a.ID], placed))
	}
	for id, m := range marks {
		if !seen[id] {
			out.Agents = append(out.Agents, s.agentInfo(registry.Agent{ID: id}, m, placed))
		}
	}
	sort.Slice(out.Agents, func(i, j int) bool { return out.Agents[i].ID < out.Agents[j].ID })
	return out, nil
}

// GetAgent answers GET /sluice/agents/{id}.
func (s *Service) GetAgent(ctx context.Context, id string) (api.AgentInfo, error) {
	list, err := s.ListAgents(ctx)
	if err != nil {
		return api.AgentInfo{}, err
	}
	for _, a := range list.Agents {
		if a.ID == id {
			return a, nil
		}
	}
	return api.AgentInfo{}, agentNotFound(id)
}

func agentNotFound(id string) error { return api.Errorf(api.CodeNotFound, "Agent %s not found", id) }

// agentInfo is a as GET /sluice/agents shows it, with mark m (zero when
// active) and the tasks placed on it or that it reports.
func (s *Service) agentInfo(a registry.Agent, m store.AgentMark, placed map[api.TaskID]placements.Placement) api.AgentInfo {
	info := api.AgentInfo{ID: a.ID, Labels: a.Labels, Version: a.Version, State: api.AgentActive, Registered: a.Registered, Plugins: []string{}, Tasks: []api.AgentTask{}}
	if info.Labels == nil {
		info.Labels = map[string]string{}
	}
	if m.State != "" {
		info.State = m.State
		info.Cordon = &api.AgentCordon{Origin: m.By(), Principal: m.Principal, Since: m.StartedAt}
	}
	if a.Registered {
		info.LeaseExpires = a.LastSeen.Add(s.cfg.AgentLease).UTC()
		info.StartedAt = a.StartedAt
	}
	for class := range a.Plugins {
		info.Plugins = append(info.Plugins, class)
	}
	sort.Strings(info.Plugins)
	ids := map[api.TaskID]bool{}
	for id, p := range placed {
		if p.Agent == a.ID {
			ids[id] = true
		}
	}
	for id := range a.Reported {
		ids[id] = true
	}
	for id := range ids {
		state := api.StateUnassigned // assigned, not yet reported running
		if rt, ok := a.Reported[id]; ok {
			state = rt.State
		}
		info.Tasks = append(info.Tasks, api.AgentTask{Connector: id.Connector, Task: id.Task, State: state})
	}
	sort.Slice(info.Tasks, func(i, j int) bool {
		return reconciler.TaskLess(api.TaskID{Connector: info.Tasks[i].Connector, Task: info.Tasks[i].Task}, api.TaskID{Connector: info.Tasks[j].Connector, Task: info.Tasks[j].Task})
	})
	return info
}

// knownAgent refuses an id this leader neither has registered (or
// presumed) nor holds a mark of.
func (s *Service) knownAgent(id string) error {
	if _, marked := s.cfg.Fleet.Agent(id); marked {
		return nil
	}
	if !s.cfg.Agents.Known(id) {
		return agentNotFound(id)
	}
	return nil
}

// CordonAgent answers PUT /sluice/agents/{id}/cordon: the agent takes no
// new task and keeps those it runs. A draining agent stays draining, but
// the operator's now: a drain its own pre-stop hook started is no longer
// lifted when it comes back.
func (s *Service) CordonAgent(ctx context.Context, id string) (api.AgentInfo, error) {
	want := drain.Mark{State: api.AgentCordoned, Origin: api.CordonOperator}
	if m, ok := s.cfg.Fleet.Agent(id); ok && m.State == api.AgentDraining {
		want.State, want.Force = api.AgentDraining, m.Force
	}
	if err := s.markAgent(ctx, id, want); err != nil {
		return api.AgentInfo{}, err
	}
	return s.GetAgent(ctx, id)
}

// UncordonAgent answers PUT /sluice/agents/{id}/uncordon: the agent takes
// new tasks again, and a drain of it stops (moves under way finish).
func (s *Service) UncordonAgent(ctx context.Context, id string) (api.AgentInfo, error) {
	if err := s.markAgent(ctx, id, drain.Mark{State: api.AgentActive}); err != nil {
		return api.AgentInfo{}, err
	}
	return s.GetAgent(ctx, id)
}

// DrainAgent answers PUT /sluice/agents/{id}/drain: the agent is cordoned
// and its tasks are moved to other agents, drain.Parallel at a time (fleet/drain). A task
// no other agent may run makes it a 409 naming the tasks, unless force,
// which unassigns such tasks instead. origin is who drains it:
// api.CordonOperator, or api.CordonPreStop for the agent's own pre-stop
// hook, whose drain is lifted once the agent is back (fleet/prestop).
func (s *Service) DrainAgent(ctx context.Context, id string, force bool, origin string) (api.DrainStatus, error) {
	if err := s.mustLead(); err != nil {
		return api.DrainStatus{}, err
	}
	if err := s.knownAgent(id); err != nil {
		return api.DrainStatus{}, err
	}
	if !force {
		if blocked := drain.Blocked(s.cfg.Snapshot(), id); len(blocked) > 0 {
			return api.DrainStatus{}, api.Errorf(api.CodeConflict, "Draining agent %s would leave %d task(s) with nowhere to go: %s; drain it with force=true to unassign them",
				id, len(blocked), drain.DescribeBlocked(blocked))
		}
	}
	want := drain.Mark{State: api.AgentDraining, Force: force, Origin: origin}
	if origin == api.CordonPreStop {
		want.AgentStartedAt = s.runningSince(id)
	}
	if err := s.markAgent(ctx, id, want); err != nil {
		return api.DrainStatus{}, err
	}
	return s.DrainStatus(ctx, id)
}

// runningSince is when agent id's running process started, as it said at
// register; zero when it is not registered or did not say.
func (s *Service) runningSince(id string) time.Time {
	agents, _ := s.cfg.Agents.AgentsAndPlacements()
	for _, a := range agents {
		if a.ID == id && a.Registered {
			return a.StartedAt
		}
	}
	return time.Time{}
}

// markAgent writes agent id's mark (the caller's principal added); the
// agent must be known.
func (s *Service) markAgent(ctx context.Context, id string, want drain.Mark) error {
	if err := s.mustLead(); err != nil {
		return err
	}
	if err := s.knownAgent(id); err != nil {
		return err
	}
	want.Principal = s.cfg.Principal(ctx)
	if want.Principal == anonymous {
		want.Principal = ""
	}
	old, ok := s.cfg.Fleet.Agent(id)
	cmd := drain.MarkCommand(id, old, ok, want, s.cfg.Clock())
	if cmd == nil {
		return nil // already so: keep when it started
	}
	if err := s.cfg.Apply(ctx, cmd); err != nil {
		return s.cfg.WriteFailed(err, "Failed to mark agent %s %s", id, want.State)
	}
	s.cfg.Logger.Info("agent marked", "agent", id, "state", want.State, "force", want.Force, "origin", want.Origin)
	s.cfg.Changed()
	return nil
}

// DrainStatus answers GET /sluice/agents/{id}/drain.
func (s *Service) DrainStatus(ctx context.Context, id string) (api.DrainStatus, error) {
	if err := s.mustLead(); err != nil {
		return api.DrainStatus{}, err
	}
	m, ok := s.cfg.Fleet.Agent(id)
	if !ok || m.State != api.AgentDraining {
		if err := s.knownAgent(id); err != nil {
			return api.DrainStatus{}, err
		}
		return api.DrainStatus{}, api.Errorf(api.CodeNotFound, "Agent %s is not draining", id)
	}
	// The snapshot retires the moves done since the fleet loop's last
	// step, so that Moved counts every task that runs elsewhere by now.
	return drain.Status(s.cfg.Snapshot(), id, m), nil
}
