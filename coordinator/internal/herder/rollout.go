package herder

// Health-gated config rollouts (POST /sluice/rollouts,
// docs/operations-rollouts.part.md) are the leader's rollout controller's
// (fleet/rollout): the herder resolves the selector, checks the caller's
// grants, and shows rollouts as the REST API has them.

import (
	"context"
	"slices"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/connectors"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/rollout"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// rolloutTargets resolves a selector to the connectors it names, sorted:
// exactly one of names (each must exist) and match (a glob that must match
// at least one connector).
func (h *Herder) rolloutTargets(sel v1.Selector) ([]string, error) {
	names, err := h.conns.Select(sel)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := h.configs.State.Get(n); !ok {
			return nil, connectors.NotFound(n)
		}
	}
	slices.Sort(names)
	return names, nil
}

// mergePatch is config with patch merged in as PATCH
// /connectors/{name}/config merges it (rollout.MergePatch).
func mergePatch(name string, config map[string]string, patch map[string]*string) map[string]string {
	return rollout.MergePatch(name, config, patch)
}

// CreateRollout answers POST /sluice/rollouts: it checks the request,
// computes every connector's config before and after the patch, validates
// each (any invalid: 400 listing them, nothing recorded), and records the
// rollout, which the leader's controller then drives. allow is the caller's
// grant check (nil allows all): a connector it refuses refuses the rollout.
func (h *Herder) CreateRollout(ctx context.Context, req v1.RolloutRequest, allow func(connector string) error) (v1.Rollout, error) {
	spec := specRecord(req)
	if err := rollout.CheckSpec(&spec); err != nil {
		return v1.Rollout{}, err
	}
	names, err := h.rolloutTargets(req.Selector)
	if err != nil {
		return v1.Rollout{}, err
	}
	if err := connectors.CheckGrants(allow, names); err != nil {
		return v1.Rollout{}, err
	}
	r, err := h.rollouts.Create(ctx, spec, names, principalOf(ctx))
	if err != nil {
		return v1.Rollout{}, err
	}
	return rolloutView(r), nil
}

// Rollouts answers GET /sluice/rollouts: every rollout the fleet topic
// keeps, oldest first.
func (h *Herder) Rollouts(ctx context.Context) (v1.RolloutList, error) {
	if err := h.fleet.ReadToEnd(ctx); err != nil {
		return v1.RolloutList{}, v1.Errorf(v1.CodeInternal, "Failed to read the fleet topic: %v", err)
	}
	list := []v1.Rollout{}
	for _, r := range h.fleet.State.Rollouts() {
		list = append(list, rolloutView(r))
	}
	return v1.RolloutList{Rollouts: list}, nil
}

// Rollout answers GET /sluice/rollouts/{id}.
func (h *Herder) Rollout(ctx context.Context, id string) (v1.Rollout, error) {
	if err := h.fleet.ReadToEnd(ctx); err != nil {
		return v1.Rollout{}, v1.Errorf(v1.CodeInternal, "Failed to read the fleet topic: %v", err)
	}
	r, ok := h.fleet.State.Rollout(id)
	if !ok {
		return v1.Rollout{}, rollout.NotFound(id)
	}
	return rolloutView(r), nil
}

// PauseRollout answers PUT /sluice/rollouts/{id}/pause: a running rollout
// stops before its next connector (a connector being written is written).
func (h *Herder) PauseRollout(ctx context.Context, id string, allow func(connector string) error) (v1.Rollout, error) {
	return h.changeRollout(ctx, id, allow, h.rollouts.Pause)
}

// ResumeRollout answers PUT /sluice/rollouts/{id}/resume: a paused
// rollout goes on where it stopped; a batch that had failed its health
// gate is verified again, from the start of its running_for.
func (h *Herder) ResumeRollout(ctx context.Context, id string, allow func(connector string) error) (v1.Rollout, error) {
	return h.changeRollout(ctx, id, allow, h.rollouts.Resume)
}

// AbortRollout answers PUT /sluice/rollouts/{id}/abort: the rollout stops
// at once and for good; what it applied stays applied.
func (h *Herder) AbortRollout(ctx context.Context, id string, allow func(connector string) error) (v1.Rollout, error) {
	return h.changeRollout(ctx, id, allow, h.rollouts.Abort)
}

// changeRollout checks the caller's grants (allow) over rollout id's
// connectors, then has the controller change it.
func (h *Herder) changeRollout(ctx context.Context, id string, allow func(connector string) error, change func(context.Context, string) (store.Rollout, error)) (v1.Rollout, error) {
	r, ok := h.fleet.State.Rollout(id)
	if !ok {
		return v1.Rollout{}, rollout.NotFound(id)
	}
	if err := connectors.CheckGrants(allow, r.Names()); err != nil {
		return v1.Rollout{}, err
	}
	r, err := change(ctx, id)
	if err != nil {
		return v1.Rollout{}, err
	}
	return rolloutView(r), nil
}
