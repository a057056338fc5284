package fleetrest

// Health-gated config rollouts (POST /sluice/rollouts,
// docs/operations.md) are the leader's rollout controller's
// (fleet/rollout): the service resolves the selector, checks the caller's
// grants, and shows rollouts as the REST API has them.

import (
	"context"
	"slices"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/rollout"
	"github.com/sluice-io/sluice/coordinator/internal/grants"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// rolloutTargets resolves a selector to the connectors it names, sorted:
// exactly one of names (each must exist) and match (a glob that must match
// at least one connector).
func (s *Service) rolloutTargets(sel api.Selector) ([]string, error) {
	names, err := s.cfg.Select(sel)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if !s.cfg.Exists(n) {
			return nil, api.Errorf(api.CodeNotFound, "Connector %s not found", n)
		}
	}
	slices.Sort(names)
	return names, nil
}

// CreateRollout answers POST /sluice/rollouts: it checks the request,
// computes every connector's config before and after the patch, validates
// each (any invalid: 400 listing them, nothing recorded), and records the
// rollout, which the leader's controller then drives. allow is the caller's
// grant check (nil allows all): a connector it refuses refuses the rollout.
func (s *Service) CreateRollout(ctx context.Context, req api.RolloutRequest, allow func(connector string) error) (api.Rollout, error) {
	return s.rollout(ctx, req, allow, s.cfg.Rollouts.Create)
}

// PlanRollout answers POST /sluice/rollouts?dry_run=true: the rollout
// CreateRollout would record — its batches, every connector's config
// before and after, each validated — with the same refusals, recording
// nothing. Its state is api.RolloutPlanned and it has no id.
func (s *Service) PlanRollout(ctx context.Context, req api.RolloutRequest, allow func(connector string) error) (api.Rollout, error) {
	r, err := s.rollout(ctx, req, allow, s.cfg.Rollouts.Plan)
	r.State = api.RolloutPlanned
	return r, err
}

// rollout checks req and the caller's grants (allow), then has the
// controller create or plan the rollout (build).
func (s *Service) rollout(ctx context.Context, req api.RolloutRequest, allow func(connector string) error,
	build func(context.Context, store.RolloutSpec, []string, string) (store.Rollout, error)) (api.Rollout, error) {
	spec := specRecord(req)
	if err := rollout.CheckSpec(&spec); err != nil {
		return api.Rollout{}, err
	}
	names, err := s.rolloutTargets(req.Selector)
	if err != nil {
		return api.Rollout{}, err
	}
	if err := grants.Allow(allow).All(names); err != nil {
		return api.Rollout{}, err
	}
	r, err := build(ctx, spec, names, s.cfg.Principal(ctx))
	if err != nil {
		return api.Rollout{}, err
	}
	return rolloutView(r), nil
}

// Rollouts answers GET /sluice/rollouts: every rollout the fleet topic
// keeps, oldest first.
func (s *Service) Rollouts(ctx context.Context) (api.RolloutList, error) {
	if err := s.readFleet(ctx); err != nil {
		return api.RolloutList{}, err
	}
	list := []api.Rollout{}
	for _, r := range s.cfg.Fleet.Rollouts() {
		list = append(list, rolloutView(r))
	}
	return api.RolloutList{Rollouts: list}, nil
}

// Rollout answers GET /sluice/rollouts/{id}.
func (s *Service) Rollout(ctx context.Context, id string) (api.Rollout, error) {
	if err := s.readFleet(ctx); err != nil {
		return api.Rollout{}, err
	}
	r, ok := s.cfg.Fleet.Rollout(id)
	if !ok {
		return api.Rollout{}, rollout.NotFound(id)
	}
	return rolloutView(r), nil
}

// PauseRollout answers PUT /sluice/rollouts/{id}/pause: a running rollout
// stops before its next connector (a connector being written is written).
func (s *Service) PauseRollout(ctx context.Context, id string, allow func(connector string) error) (api.Rollout, error) {
	return s.changeRollout(ctx, id, allow, s.cfg.Rollouts.Pause)
}

// ResumeRollout answers PUT /sluice/rollouts/{id}/resume: a paused
// rollout goes on where it stopped; a batch that had failed its health
// gate is verified again, from the start of its running_for.
func (s *Service) ResumeRollout(ctx context.Context, id string, allow func(connector string) error) (api.Rollout, error) {
	return s.changeRollout(ctx, id, allow, s.cfg.Rollouts.Resume)
}

// AbortRollout answers PUT /sluice/rollouts/{id}/abort: the rollout stops
// at once and for good; what it applied stays applied.
func (s *Service) AbortRollout(ctx context.Context, id string, allow func(connector string) error) (api.Rollout, error) {
	return s.changeRollout(ctx, id, allow, s.cfg.Rollouts.Abort)
}

// changeRollout checks the caller's grants (allow) over rollout id's
// connectors, then has the controller change it.
func (s *Service) changeRollout(ctx context.Context, id string, allow func(connector string) error, change func(context.Context, string) (store.Rollout, error)) (api.Rollout, error) {
	r, ok := s.cfg.Fleet.Rollout(id)
	if !ok {
		return api.Rollout{}, rollout.NotFound(id)
	}
	if err := grants.Allow(allow).All(r.Names()); err != nil {
		return api.Rollout{}, err
	}
	r, err := change(ctx, id)
	if err != nil {
		return api.Rollout{}, err
	}
	return rolloutView(r), nil
}
