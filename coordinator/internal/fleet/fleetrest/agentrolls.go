package fleetrest

// Rolling restarts of agents (POST /sluice/fleet/rolls, docs/operations.md)
// are the leader's agent roll controller's (fleet/agentroll): the service
// resolves and checks the agents, and shows rolls as the REST API has
// them. A roll lives in the fleet topic, so every coordinator answers its
// reads; only the leader, which knows the agents, makes one.

import (
	"context"
	"slices"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/agentroll"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// rollAgents resolves a roll's agents: those named, each known (404
// otherwise), in their order; or every registered agent, by id.
func (s *Service) rollAgents(named []string) ([]string, error) {
	if len(named) > 0 {
		for _, id := range named {
			if err := s.knownAgent(id); err != nil {
				return nil, err
			}
		}
		return named, nil
	}
	agents, _ := s.cfg.Agents.AgentsAndPlacements()
	var ids []string
	for _, a := range agents {
		if a.Registered {
			ids = append(ids, a.ID)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// CreateAgentRoll answers POST /sluice/fleet/rolls: it checks the
// request and its agents and records the roll, which the leader's
// controller then drives (201). An agent already in a roll in progress is
// a 409.
func (s *Service) CreateAgentRoll(ctx context.Context, req api.AgentRollRequest) (api.AgentRoll, error) {
	if err := s.mustLead(); err != nil {
		return api.AgentRoll{}, err
	}
	spec := store.AgentRollSpec{Agents: req.Agents, BatchSize: req.BatchSize, Timeout: req.Timeout}
	if err := agentroll.CheckSpec(&spec); err != nil {
		return api.AgentRoll{}, err
	}
	ids, err := s.rollAgents(spec.Agents)
	if err != nil {
		return api.AgentRoll{}, err
	}
	r, err := s.cfg.AgentRolls.Create(ctx, spec, ids, s.cfg.Principal(ctx))
	if err != nil {
		return api.AgentRoll{}, err
	}
	return agentRollView(r), nil
}

// AgentRolls answers GET /sluice/fleet/rolls: every roll the fleet topic
// keeps, oldest first.
func (s *Service) AgentRolls(ctx context.Context) (api.AgentRollList, error) {
	if err := s.readFleet(ctx); err != nil {
		return api.AgentRollList{}, err
	}
	list := []api.AgentRoll{}
	for _, r := range s.cfg.Fleet.AgentRolls() {
		list = append(list, agentRollView(r))
	}
	return api.AgentRollList{Rolls: list}, nil
}

// AgentRoll answers GET /sluice/fleet/rolls/{id}.
func (s *Service) AgentRoll(ctx context.Context, id string) (api.AgentRoll, error) {
	if err := s.readFleet(ctx); err != nil {
		return api.AgentRoll{}, err
	}
	r, ok := s.cfg.Fleet.AgentRoll(id)
	if !ok {
		return api.AgentRoll{}, agentroll.NotFound(id)
	}
	return agentRollView(r), nil
}

// PauseAgentRoll answers PUT /sluice/fleet/rolls/{id}/pause: a running
// roll takes no further step; drains under way go on.
func (s *Service) PauseAgentRoll(ctx context.Context, id string) (api.AgentRoll, error) {
	return s.changeAgentRoll(ctx, id, s.cfg.AgentRolls.Pause)
}

// ResumeAgentRoll answers PUT /sluice/fleet/rolls/{id}/resume: a paused
// roll goes on where it stopped, its waiting agents given a full timeout
// again.
func (s *Service) ResumeAgentRoll(ctx context.Context, id string) (api.AgentRoll, error) {
	return s.changeAgentRoll(ctx, id, s.cfg.AgentRolls.Resume)
}

// AbortAgentRoll answers PUT /sluice/fleet/rolls/{id}/abort: the roll
// stops for good; its agents stay as they are (uncordon a drained one by
// hand).
func (s *Service) AbortAgentRoll(ctx context.Context, id string) (api.AgentRoll, error) {
	return s.changeAgentRoll(ctx, id, s.cfg.AgentRolls.Abort)
}

// changeAgentRoll has the controller change roll id.
func (s *Service) changeAgentRoll(ctx context.Context, id string, change func(context.Context, string) (store.AgentRoll, error)) (api.AgentRoll, error) {
	if err := s.mustLead(); err != nil {
		return api.AgentRoll{}, err
	}
	r, err := change(ctx, id)
	if err != nil {
		return api.AgentRoll{}, err
	}
	return agentRollView(r), nil
}

// agentRollView is a roll as the REST API shows it, with its progress.
func agentRollView(r store.AgentRoll) api.AgentRoll {
	s := r.Spec
	out := api.AgentRoll{ID: r.ID, State: r.State, Principal: r.Principal, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Batch: r.Batch, Error: r.Error,
		Request:  api.AgentRollRequest{Agents: s.Agents, BatchSize: s.BatchSize, Timeout: s.Timeout},
		Progress: api.AgentRollProgress{Done: r.Done(), Total: len(r.Agents), Current: []api.RollCurrent{}},
		Agents:   make([]api.RolledAgent, len(r.Agents))}
	size := r.BatchSizeOrOne()
	for i, a := range r.Agents {
		out.Agents[i] = api.RolledAgent{ID: a.ID, Batch: i / size, Step: a.Step, Since: a.Since, StartedAt: a.StartedAt, RestartedAt: a.RestartedAt,
			Version: a.Version, Moved: a.Moved, FinishedAt: a.FinishedAt, Error: a.Error}
	}
	if !r.Final() || r.State == store.AgentRollFailed {
		from, to := r.BatchRange(r.Batch)
		for _, a := range r.Agents[from:to] {
			out.Progress.Current = append(out.Progress.Current, api.RollCurrent{Agent: a.ID, Step: a.Step})
		}
	}
	return out
}
