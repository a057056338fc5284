package herder

// Health-gated config rollouts (POST /sluice/rollouts, docs/operations-rollouts.part.md):
// a patch is merged into many connectors' configs batch by batch, each
// batch held to a health gate before the next starts. The rollout and its
// progress live in the fleet topic, so a new leader carries on where the
// last one stopped (rollout_run.go drives it).

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// DefaultRolloutRunningFor is health.running_for when a request leaves it
// out: long enough for a task that fails on its first records to show it.
const DefaultRolloutRunningFor = 30 * time.Second

// rolloutsLock keys, in the per-connector lock map, the lock every change
// of a rollout record is made under: the controller and the REST calls
// (pause, resume, abort, create) read, change and write records, and must
// not lose each other's changes. A connector name cannot hold a NUL.
const rolloutsLock = "\x00rollouts"

// rolloutTargets resolves a selector to the connectors it names, sorted:
// exactly one of names (each must exist) and match (a glob that must match
// at least one connector).
func (h *Herder) rolloutTargets(sel v1.Selector) ([]string, error) {
	names, err := h.selectConnectors(sel)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := h.configs.State.Get(n); !ok {
			return nil, notFound(n)
		}
	}
	slices.Sort(names)
	return names, nil
}

// rolloutBatchSizes turns batch specs into the sizes of the batches of n
// connectors: a positive integer, a share "P%" (1 to 100, of n, rounded
// up) or "rest". Once the specs are used up, what is left is one last
// batch; batches that would be empty (the connectors ran out) are dropped.
func rolloutBatchSizes(specs []json.RawMessage, n int) ([]int, error) {
	var sizes []int
	left := n
	for _, raw := range specs {
		size, err := batchSize(raw, n, left)
		if err != nil {
			return nil, err
		}
		if size = min(size, left); size > 0 {
			sizes = append(sizes, size)
			left -= size
		}
	}
	if left > 0 {
		sizes = append(sizes, left)
	}
	return sizes, nil
}

// batchSize is the size one batch spec asks for.
func batchSize(raw json.RawMessage, n, left int) (int, error) {
	bad := v1.Errorf(v1.CodeBadRequest, "Invalid batch %s: give a number of connectors (1 or more), a share such as \"25%%\", or \"rest\"", strings.TrimSpace(string(raw)))
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		k, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err != nil || k < 1 {
			return 0, bad
		}
		return k, nil
	}
	if s == "rest" {
		return left, nil
	}
	pct, ok := strings.CutSuffix(s, "%")
	p, err := strconv.ParseFloat(pct, 64)
	if !ok || err != nil || p <= 0 || p > 100 {
		return 0, bad
	}
	return int(math.Ceil(p * float64(n) / 100)), nil
}

// mergePatch is config with patch merged in as PATCH
// /connectors/{name}/config merges it: a nil value removes the key, and
// the name is kept.
func mergePatch(name string, config map[string]string, patch map[string]*string) map[string]string {
	merged := maps.Clone(config)
	for k, v := range patch {
		if v == nil {
			delete(merged, k)
		} else {
			merged[k] = *v
		}
	}
	if _, ok := merged["name"]; !ok {
		merged["name"] = name
	}
	return merged
}

// checkRolloutRequest checks what a rollout's request asks for beyond its
// connectors, and fills in the defaults.
func checkRolloutRequest(req *v1.RolloutRequest) error {
	if len(req.Patch) == 0 {
		return v1.Errorf(v1.CodeBadRequest, "The patch is empty: give the config keys to set (or null to remove)")
	}
	if req.Health.RunningFor == "" {
		req.Health.RunningFor = DefaultRolloutRunningFor.String()
	}
	if d, err := time.ParseDuration(req.Health.RunningFor); err != nil || d < 0 {
		return v1.Errorf(v1.CodeBadRequest, "Invalid health.running_for '%s': give a duration such as 30s or 2m", req.Health.RunningFor)
	}
	if req.Health.MaxFailedTasks < 0 {
		return v1.Errorf(v1.CodeBadRequest, "Invalid health.max_failed_tasks %d: must be 0 or more", req.Health.MaxFailedTasks)
	}
	switch req.OnFailure {
	case "":
		req.OnFailure = "pause"
	case "pause", "rollback":
	default:
		return v1.Errorf(v1.CodeBadRequest, "Invalid on_failure '%s': must be pause or rollback", req.OnFailure)
	}
	return nil
}

// rolloutFinal reports whether a rollout state is an end: nothing more
// happens to it, and its connectors are free for another rollout.
func rolloutFinal(state string) bool {
	switch state {
	case v1.RolloutDone, v1.RolloutRolledBack, v1.RolloutAborted:
		return true
	}
	return false
}

// CreateRollout answers POST /sluice/rollouts: it checks the request,
// computes every connector's config before and after the patch, validates
// each (any invalid: 400 listing them, nothing recorded), and records the
// rollout, which the leader's controller then drives. allow is the caller's
// grant check (nil allows all): a connector it refuses refuses the rollout.
func (h *Herder) CreateRollout(ctx context.Context, req v1.RolloutRequest, allow func(connector string) error) (v1.Rollout, error) {
	if err := checkRolloutRequest(&req); err != nil {
		return v1.Rollout{}, err
	}
	names, err := h.rolloutTargets(req.Selector)
	if err != nil {
		return v1.Rollout{}, err
	}
	if err := checkGrants(allow, names); err != nil {
		return v1.Rollout{}, err
	}
	sizes, err := rolloutBatchSizes(req.Batches, len(names))
	if err != nil {
		return v1.Rollout{}, err
	}
	conns := make([]v1.RolloutConnector, 0, len(names))
	var invalid []string
	for _, n := range names {
		c, ok := h.configs.State.Get(n)
		if !ok {
			return v1.Rollout{}, notFound(n)
		}
		after := mergePatch(n, c.Config, req.Patch)
		if err := h.validateConfig(ctx, after); err != nil {
			invalid = append(invalid, n+": "+errorMessage(err))
			continue
		}
		if err := h.checkConfigSize(ctx, store.PutConnectorConfig{Name: n, Config: after}); err != nil {
			invalid = append(invalid, n+": "+errorMessage(err))
			continue
		}
		conns = append(conns, v1.RolloutConnector{Name: n, Before: c.Config, After: after, State: v1.BatchPending})
	}
	if len(invalid) > 0 {
		return v1.Rollout{}, v1.Errorf(v1.CodeBadRequest, "The patch leaves %d of the %d matched connectors with an invalid config; nothing was applied:\n%s",
			len(invalid), len(names), strings.Join(invalid, "\n"))
	}
	now := time.Now().UTC()
	r := v1.Rollout{ID: operationID(now), State: v1.RolloutRunning, Request: req, Principal: principalOf(ctx),
		CreatedAt: now, UpdatedAt: now}
	for _, size := range sizes {
		r.Batches = append(r.Batches, v1.RolloutBatch{State: v1.BatchPending, Connectors: conns[:size:size]})
		conns = conns[size:]
	}
	unlock := h.locks.Lock(rolloutsLock)
	defer unlock()
	if err := h.checkRolloutOverlap(names); err != nil {
		return v1.Rollout{}, err
	}
	if err := h.fleet.Apply(ctx, store.PutRollout{Rollout: r}); err != nil {
		return v1.Rollout{}, writeFailed(err, "Failed to record rollout %s", r.ID)
	}
	return r, nil
}

// checkRolloutOverlap refuses connectors that a rollout still in progress
// holds; the caller holds rolloutsLock.
func (h *Herder) checkRolloutOverlap(names []string) error {
	for _, r := range h.fleet.State.Rollouts() {
		if rolloutFinal(r.State) {
			continue
		}
		for _, b := range r.Batches {
			for _, c := range b.Connectors {
				if _, found := slices.BinarySearch(names, c.Name); found {
					return v1.Errorf(v1.CodeConflict, "Connector %s is already in rollout %s (%s): wait for it to end or abort it", c.Name, r.ID, r.State)
				}
			}
		}
	}
	return nil
}

// errorMessage is the message of a REST error, or the error's text.
func errorMessage(err error) string {
	if e, ok := err.(*v1.Error); ok {
		return e.Message
	}
	return err.Error()
}

// Rollouts answers GET /sluice/rollouts: every rollout the fleet topic
// keeps, oldest first.
func (h *Herder) Rollouts(ctx context.Context) (v1.RolloutList, error) {
	if err := h.fleet.ReadToEnd(ctx); err != nil {
		return v1.RolloutList{}, v1.Errorf(v1.CodeInternal, "Failed to read the fleet topic: %v", err)
	}
	list := h.fleet.State.Rollouts()
	if list == nil {
		list = []v1.Rollout{}
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
		return v1.Rollout{}, rolloutNotFound(id)
	}
	return r, nil
}

func rolloutNotFound(id string) error { return v1.Errorf(v1.CodeNotFound, "Rollout %s not found", id) }

// PauseRollout answers PUT /sluice/rollouts/{id}/pause: a running rollout
// stops before its next connector (a connector being written is written).
func (h *Herder) PauseRollout(ctx context.Context, id string, allow func(connector string) error) (v1.Rollout, error) {
	return h.changeRolloutAllowed(ctx, id, allow, func(r *v1.Rollout) error {
		if r.State != v1.RolloutRunning {
			return v1.Errorf(v1.CodeConflict, "Rollout %s is %s: only a running rollout can be paused", id, r.State)
		}
		r.State = v1.RolloutPaused
		return nil
	})
}

// ResumeRollout answers PUT /sluice/rollouts/{id}/resume: a paused
// rollout goes on where it stopped; a batch that had failed its health
// gate is verified again, from the start of its running_for.
func (h *Herder) ResumeRollout(ctx context.Context, id string, allow func(connector string) error) (v1.Rollout, error) {
	return h.changeRolloutAllowed(ctx, id, allow, func(r *v1.Rollout) error {
		if r.State != v1.RolloutPaused {
			return v1.Errorf(v1.CodeConflict, "Rollout %s is %s: only a paused rollout can be resumed", id, r.State)
		}
		r.State, r.Error = v1.RolloutRunning, ""
		if r.Batch < len(r.Batches) && (r.Batches[r.Batch].State == v1.BatchFailed || r.Batches[r.Batch].State == v1.BatchVerifying) {
			// Verified afresh: the time paused counts neither toward the
			// health gate nor toward its bound.
			b := &r.Batches[r.Batch]
			b.State, b.HealthySince, b.VerifyingSince = v1.BatchVerifying, time.Time{}, time.Time{}
		}
		return nil
	})
}

// AbortRollout answers PUT /sluice/rollouts/{id}/abort: the rollout stops
// at once and for good; what it applied stays applied.
func (h *Herder) AbortRollout(ctx context.Context, id string, allow func(connector string) error) (v1.Rollout, error) {
	return h.changeRolloutAllowed(ctx, id, allow, func(r *v1.Rollout) error {
		if rolloutFinal(r.State) {
			return v1.Errorf(v1.CodeConflict, "Rollout %s is %s already", id, r.State)
		}
		r.State = v1.RolloutAborted
		return nil
	})
}

// changeRollout changes a rollout record under rolloutsLock and writes it;
// change's error is returned as it is, nothing written. (The controller
// changes rollouts without a caller to check.)
func (h *Herder) changeRollout(ctx context.Context, id string, change func(*v1.Rollout) error) (v1.Rollout, error) {
	return h.changeRolloutAllowed(ctx, id, nil, change)
}

// changeRolloutAllowed is changeRollout for a caller: allow must allow
// every connector of the rollout (nil allows all).
func (h *Herder) changeRolloutAllowed(ctx context.Context, id string, allow func(connector string) error, change func(*v1.Rollout) error) (v1.Rollout, error) {
	unlock := h.locks.Lock(rolloutsLock)
	defer unlock()
	r, ok := h.fleet.State.Rollout(id)
	if !ok {
		return v1.Rollout{}, rolloutNotFound(id)
	}
	var names []string
	for _, b := range r.Batches {
		for _, c := range b.Connectors {
			names = append(names, c.Name)
		}
	}
	if err := checkGrants(allow, names); err != nil {
		return v1.Rollout{}, err
	}
	r = cloneRollout(r)
	if err := change(&r); err != nil {
		return v1.Rollout{}, err
	}
	r.UpdatedAt = time.Now().UTC()
	if err := h.fleet.Apply(ctx, store.PutRollout{Rollout: r}); err != nil {
		return v1.Rollout{}, writeFailed(err, "Failed to record rollout %s", id)
	}
	return r, nil
}

// cloneRollout copies the parts of a rollout a change writes to, so that
// the fleet state's copy stays as it was until the write is read back.
func cloneRollout(r v1.Rollout) v1.Rollout {
	r.Batches = slices.Clone(r.Batches)
	for i := range r.Batches {
		r.Batches[i].Connectors = slices.Clone(r.Batches[i].Connectors)
	}
	return r
}

// describeConnector names a rollout connector in an error.
func describeConnector(name, what string, err error) string {
	return fmt.Sprintf("%s: %s: %s", name, what, errorMessage(err))
}
