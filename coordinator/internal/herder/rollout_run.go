package herder

// The rollout controller runs on the leader only (started from lead) and
// drives every rollout in progress, one step at a time:
//
//	batch pending ─► applying (start generation, each connector's
//	  was_running recorded) ─► each connector: after written unless
//	  already there, applied
//	  ─► verifying ─► healthy for running_for ─► done ─► next batch
//	                 └► unhealthy (a FAILED task beyond the limit, or the
//	                    bound passes) ─► failed: pause, or roll back
//
// Every step is written to the fleet topic before the next is taken, so a
// new leader resumes at the step the last one recorded: a connector marked
// applied is not written again, and one written but not yet marked is
// found already at its after config and only marked.

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// rolloutTick is how often the controller looks at rollouts when nothing
// in the fleet topic changed: the health gate needs the clock.
const rolloutTick = 250 * time.Millisecond

// minVerifyBound is the least time a batch may take to become healthy
// before it fails; the bound is the larger of it and five running_for.
const minVerifyBound = 2 * time.Minute

// verifyBound is how long a batch may verify before it fails.
func verifyBound(runningFor time.Duration) time.Duration {
	return max(5*runningFor, minVerifyBound)
}

// startRollouts starts the controller and returns what waits for it to
// stop, which it does when ctx ends.
func (h *Herder) startRollouts(ctx context.Context) (wait func()) {
	done := make(chan struct{})
	go func() { defer close(done); h.runRollouts(ctx) }()
	return func() { <-done }
}

// runRollouts drives the rollouts in progress until ctx ends.
func (h *Herder) runRollouts(ctx context.Context) {
	t := time.NewTicker(rolloutTick)
	defer t.Stop()
	for ctx.Err() == nil {
		changed := h.fleet.State.Changed()
		// One copy of the rollouts a pass: the kept finished ones, with
		// every connector's configs, are only counted for pruning.
		rollouts := h.fleet.State.Rollouts()
		for _, r := range rollouts {
			if rolloutFinished(r) {
				continue
			}
			if err := h.stepRollout(ctx, r.ID); err != nil && ctx.Err() == nil {
				h.log.Warn("rollout step failed; retrying", "rollout", r.ID, "err", err)
			}
		}
		h.pruneRollouts(ctx, rollouts)
		select {
		case <-ctx.Done():
		case <-changed:
		case <-t.C:
		}
	}
}

// keptRollouts is how many finished rollouts the fleet topic keeps: older
// ones are removed, so that the topic, and every coordinator's copy of it,
// does not grow with every rollout ever made.
const keptRollouts = 50

// pruneRollouts removes the finished rollouts of rollouts (oldest first)
// beyond the newest keptRollouts.
func (h *Herder) pruneRollouts(ctx context.Context, rollouts []v1.Rollout) {
	var finished []string
	for _, r := range rollouts {
		if rolloutFinished(r) {
			finished = append(finished, r.ID)
		}
	}
	for _, id := range finished[:max(0, len(finished)-keptRollouts)] {
		if err := h.fleet.Apply(ctx, store.DeleteRollout{ID: id}); err != nil {
			h.log.Warn("removing a finished rollout failed; retrying", "rollout", id, "err", err)
			return
		}
	}
}

// rolloutFinished reports whether r will take no further step.
func rolloutFinished(r v1.Rollout) bool {
	switch r.State {
	case v1.RolloutDone, v1.RolloutRolledBack, v1.RolloutAborted:
		return true
	case v1.RolloutFailed:
		return r.Request.OnFailure != "rollback"
	}
	return false
}

// stepRollout takes the next step of one rollout, if it has one.
func (h *Herder) stepRollout(ctx context.Context, id string) error {
	r, ok := h.fleet.State.Rollout(id)
	if !ok {
		return nil
	}
	switch {
	case r.State == v1.RolloutFailed && r.Request.OnFailure == "rollback":
		return h.rollBack(ctx, id)
	case r.State != v1.RolloutRunning:
		return nil
	case r.Batch >= len(r.Batches):
		return h.finishRollout(ctx, id)
	}
	switch r.Batches[r.Batch].State {
	case v1.BatchPending:
		_, err := h.changeRollout(ctx, id, func(r *v1.Rollout) error {
			b := &r.Batches[r.Batch]
			if r.State != v1.RolloutRunning || b.State != v1.BatchPending {
				return errStale
			}
			// Whether each connector runs is taken once, as the batch
			// starts: a leader taking over mid-batch must not see a
			// connector restarting with its new config as not running.
			b.State, b.StartGeneration = v1.BatchApplying, h.currentGeneration()
			for i := range b.Connectors {
				b.Connectors[i].WasRunning = h.connectorRunning(b.Connectors[i].Name)
			}
			return nil
		})
		return ignoreStale(err)
	case v1.BatchApplying:
		return h.applyBatch(ctx, id)
	case v1.BatchVerifying:
		return h.verifyBatch(ctx, id)
	}
	return nil
}

// errStale is a step's change finding the rollout moved on meanwhile (a
// pause or an abort landed): the step is not taken.
var errStale = fmt.Errorf("the rollout changed meanwhile")

func ignoreStale(err error) error {
	if err == errStale {
		return nil
	}
	return err
}

// currentGeneration is the highest task generation issued so far.
func (h *Herder) currentGeneration() int64 {
	return max(h.agents.Generation(), h.statuses.State.MaxGeneration())
}

// applyBatch writes the after config of each pending connector of the
// batch in progress, recording each, and moves the batch on to verifying.
// A pause or an abort takes effect between two connectors.
func (h *Herder) applyBatch(ctx context.Context, id string) error {
	for {
		r, ok := h.fleet.State.Rollout(id)
		if !ok || r.State != v1.RolloutRunning || r.Batches[r.Batch].State != v1.BatchApplying {
			return nil
		}
		b := r.Batches[r.Batch]
		i := -1
		for j, c := range b.Connectors {
			if c.State == v1.BatchPending {
				i = j
				break
			}
		}
		if i < 0 {
			_, err := h.changeRollout(ctx, id, func(r *v1.Rollout) error {
				b := &r.Batches[r.Batch]
				if r.State != v1.RolloutRunning || b.State != v1.BatchApplying {
					return errStale
				}
				b.State, b.VerifyingSince = v1.BatchVerifying, time.Now().UTC()
				return nil
			})
			return ignoreStale(err)
		}
		c := b.Connectors[i]
		batch := r.Batch
		// A connector changed by hand since the rollout was made gets new
		// Before and After; they are recorded before its config is
		// written, so that a leader that stops in between leaves a
		// rollback its real previous config.
		record := func(c v1.RolloutConnector) error {
			_, err := h.changeRollout(ctx, id, func(r *v1.Rollout) error {
				if r.Batch != batch || r.Batches[batch].State != v1.BatchApplying {
					return errStale
				}
				rc := &r.Batches[batch].Connectors[i]
				rc.Before, rc.After = c.Before, c.After
				return nil
			})
			return err
		}
		st, err := h.applyConnector(ctx, &c, r.Request.Patch, record)
		if err != nil {
			return ignoreStale(err)
		}
		if _, err := h.changeRollout(ctx, id, func(r *v1.Rollout) error {
			if r.Batch != batch || r.Batches[batch].State != v1.BatchApplying {
				return errStale
			}
			rc := &r.Batches[batch].Connectors[i]
			rc.State, rc.Before, rc.After = st, c.Before, c.After
			return nil
		}); err != nil {
			return ignoreStale(err)
		}
	}
}

// applyConnector writes one connector's after config and says what became
// of it: applied, skipped (deleted), or failed with why. A connector whose
// config was changed by hand since the rollout was made gets the patch
// merged into its config as it is now, and that is what a rollback
// restores (c's Before and After are updated).
func (h *Herder) applyConnector(ctx context.Context, c *v1.RolloutConnector, patch map[string]*string, record func(v1.RolloutConnector) error) (state string, err error) {
	unlock := h.locks.Lock(c.Name)
	defer unlock()
	cur, ok := h.configs.State.Get(c.Name)
	if !ok {
		return "skipped", nil
	}
	if maps.Equal(cur.Config, c.After) {
		// Written already, by a leader that stopped before it recorded it.
		return "applied", nil
	}
	if !maps.Equal(cur.Config, c.Before) {
		c.Before = cur.Config
		c.After = mergePatch(c.Name, cur.Config, patch)
		if err := h.validateConfig(ctx, c.After); err != nil {
			return "failed: " + describeConnector(c.Name, "its config changed since the rollout was made, and the patch no longer validates", err), nil
		}
		if maps.Equal(cur.Config, c.After) {
			return "applied", nil // the patch is in its config already
		}
		if err := record(*c); err != nil {
			return "", err
		}
	}
	if _, _, err := h.writeConfigLocked(ctx, c.Name, c.After); err != nil {
		return "", fmt.Errorf("write the config of %s: %w", c.Name, err)
	}
	return "applied", nil
}

// connectorRunning reports whether a connector is meant to run and its
// status says it does.
func (h *Herder) connectorRunning(name string) bool {
	c, ok := h.configs.State.Get(name)
	st, _ := h.statuses.State.Connector(name)
	return ok && c.TargetState == records.TargetStarted && st.State == v1.StateRunning
}

// graceFresh is how long past running_for a batch verifies before a task
// that was not restarted since the batch started (its generation is not
// newer) counts anyway: a patch that leaves its task configs as they were
// restarts nothing, and such a task runs the patched connector all along.
const graceFresh = 10 * time.Second

// verifyBatch holds the batch in progress to the health gate: done once
// healthy for running_for, failed on a FAILED task beyond the limit or
// when the bound passes.
func (h *Herder) verifyBatch(ctx context.Context, id string) error {
	r, ok := h.fleet.State.Rollout(id)
	if !ok || r.State != v1.RolloutRunning {
		return nil
	}
	b := r.Batches[r.Batch]
	runningFor, _ := time.ParseDuration(r.Request.Health.RunningFor)
	now := time.Now()
	if b.VerifyingSince.IsZero() {
		// Resumed: verification starts again now.
		return h.changeBatch(ctx, id, r.Batch, v1.BatchVerifying, func(b *v1.RolloutBatch) { b.VerifyingSince = now.UTC() })
	}
	settled := now.Sub(b.VerifyingSince) >= runningFor+graceFresh
	v := h.batchHealth(b, r.Request.Health.MaxFailedTasks, settled)
	if len(v.deleted) > 0 {
		return h.changeBatch(ctx, id, r.Batch, v1.BatchVerifying, func(b *v1.RolloutBatch) {
			for _, i := range v.deleted {
				b.Connectors[i].State = "skipped"
			}
		})
	}
	bound := verifyBound(runningFor)
	switch {
	case v.failure != "":
		return h.failBatch(ctx, id, r.Batch, fmt.Sprintf("batch %d of %d failed its health gate: %s", r.Batch+1, len(r.Batches), v.failure))
	case !v.healthy && now.Sub(b.VerifyingSince) > bound:
		return h.failBatch(ctx, id, r.Batch, fmt.Sprintf("batch %d of %d did not become healthy within %s: %s", r.Batch+1, len(r.Batches), bound, v.why))
	case !v.healthy && !b.HealthySince.IsZero():
		return h.changeBatch(ctx, id, r.Batch, v1.BatchVerifying, func(b *v1.RolloutBatch) { b.HealthySince = time.Time{} })
	case v.healthy && b.HealthySince.IsZero():
		return h.changeBatch(ctx, id, r.Batch, v1.BatchVerifying, func(b *v1.RolloutBatch) { b.HealthySince = now.UTC() })
	case v.healthy && now.Sub(b.HealthySince) >= runningFor:
		_, err := h.changeRollout(ctx, id, func(r *v1.Rollout) error {
			if r.State != v1.RolloutRunning || r.Batches[r.Batch].State != v1.BatchVerifying {
				return errStale
			}
			r.Batches[r.Batch].State = v1.BatchDone
			r.Batch++
			return nil
		})
		return ignoreStale(err)
	}
	return nil
}

// changeBatch changes batch i of a running rollout if it is still in
// state, else leaves it.
func (h *Herder) changeBatch(ctx context.Context, id string, i int, state string, change func(*v1.RolloutBatch)) error {
	_, err := h.changeRollout(ctx, id, func(r *v1.Rollout) error {
		if r.State != v1.RolloutRunning || r.Batch != i || r.Batches[i].State != state {
			return errStale
		}
		change(&r.Batches[i])
		return nil
	})
	return ignoreStale(err)
}

// failBatch records the failure of batch i: the rollout pauses, or (on
// failure rollback) is failed until the rollback is done.
func (h *Herder) failBatch(ctx context.Context, id string, i int, why string) error {
	_, err := h.changeRollout(ctx, id, func(r *v1.Rollout) error {
		if r.State != v1.RolloutRunning || r.Batch != i {
			return errStale
		}
		r.Batches[i].State, r.Error = v1.BatchFailed, why
		r.State = v1.RolloutPaused
		if r.Request.OnFailure == "rollback" {
			r.State = v1.RolloutFailed
		}
		return nil
	})
	if err == nil {
		h.log.Warn("rollout batch failed", "rollout", id, "batch", i+1, "why", why)
	}
	return ignoreStale(err)
}

// batchVerdict is what the health gate sees of a batch now.
type batchVerdict struct {
	healthy bool
	// why says what is not healthy yet; failure what failed for good.
	why, failure string
	// deleted are the connectors deleted since they were applied.
	deleted []int
}

// batchHealth judges a batch: every applied connector that was RUNNING
// when the batch started must be RUNNING with every task RUNNING (at most
// maxFailed tasks FAILED in all), on a task started since the batch began
// unless settled.
func (h *Herder) batchHealth(b v1.RolloutBatch, maxFailed int, settled bool) batchVerdict {
	v := batchVerdict{healthy: true}
	failed, freshFailed := 0, ""
	notYet := func(format string, args ...any) {
		if v.healthy {
			v.healthy, v.why = false, fmt.Sprintf(format, args...)
		}
	}
	for i, c := range b.Connectors {
		if strings.HasPrefix(c.State, "failed") {
			v.failure = c.State
			return v
		}
		if c.State != "applied" || !c.WasRunning {
			continue
		}
		cur, ok := h.configs.State.Get(c.Name)
		if !ok {
			v.deleted = append(v.deleted, i)
			continue
		}
		if cur.TargetState != records.TargetStarted {
			continue // paused or stopped by hand since: not the patch's doing
		}
		st, _ := h.statuses.State.Connector(c.Name)
		switch {
		case st.State == v1.StateFailed:
			v.failure = fmt.Sprintf("connector %s is FAILED", c.Name)
			return v
		case st.State != v1.StateRunning:
			notYet("connector %s is %s", c.Name, orNone(st.State))
		case len(cur.Tasks) == 0:
			notYet("connector %s has no tasks yet", c.Name)
		}
		for t := range cur.Tasks {
			ts, _ := h.statuses.State.Task(c.Name, t)
			fresh := ts.Generation > b.StartGeneration || settled
			switch {
			case ts.State == v1.StateFailed:
				failed++
				if fresh && freshFailed == "" {
					freshFailed = fmt.Sprintf("%s-%d", c.Name, t)
				}
			case ts.State != v1.StateRunning:
				notYet("task %s-%d is %s", c.Name, t, orNone(ts.State))
			case !fresh:
				notYet("task %s-%d has not restarted with the patched config yet", c.Name, t)
			}
		}
	}
	if failed > maxFailed {
		if freshFailed != "" {
			v.failure = fmt.Sprintf("%d task(s) FAILED (at most %d allowed), task %s among them", failed, maxFailed, freshFailed)
			return v
		}
		notYet("%d task(s) FAILED (at most %d allowed)", failed, maxFailed)
	}
	return v
}

func orNone(state string) string {
	if state == "" {
		return "without a status"
	}
	return state
}

// rollBack gives every applied connector of the failed batch and those
// before it its before config back, newest batch first, recording each,
// then marks the rollout rolled back.
func (h *Herder) rollBack(ctx context.Context, id string) error {
	r, ok := h.fleet.State.Rollout(id)
	if !ok {
		return nil
	}
	for bi := min(r.Batch, len(r.Batches)-1); bi >= 0; bi-- {
		b := r.Batches[bi]
		for ci := len(b.Connectors) - 1; ci >= 0; ci-- {
			c := b.Connectors[ci]
			if c.State != "applied" {
				continue
			}
			st, err := h.restoreRolloutConfig(ctx, c)
			if err != nil {
				return err
			}
			if _, err := h.changeRollout(ctx, id, func(r *v1.Rollout) error {
				if r.State != v1.RolloutFailed {
					return errStale
				}
				r.Batches[bi].Connectors[ci].State = st
				return nil
			}); err != nil {
				return ignoreStale(err)
			}
		}
		if b.State == v1.BatchRolledBack {
			continue
		}
		if _, err := h.changeRollout(ctx, id, func(r *v1.Rollout) error {
			if r.State != v1.RolloutFailed {
				return errStale
			}
			r.Batches[bi].State = v1.BatchRolledBack
			return nil
		}); err != nil {
			return ignoreStale(err)
		}
	}
	_, err := h.changeRollout(ctx, id, func(r *v1.Rollout) error {
		if r.State != v1.RolloutFailed {
			return errStale
		}
		r.State = v1.RolloutRolledBack
		return nil
	})
	return ignoreStale(err)
}

// restoreRolloutConfig writes a connector's before config back, unless it has
// it already; a deleted connector is skipped.
func (h *Herder) restoreRolloutConfig(ctx context.Context, c v1.RolloutConnector) (string, error) {
	unlock := h.locks.Lock(c.Name)
	defer unlock()
	cur, ok := h.configs.State.Get(c.Name)
	if !ok {
		return "skipped", nil
	}
	if !maps.Equal(cur.Config, c.Before) {
		if _, _, err := h.writeConfigLocked(ctx, c.Name, c.Before); err != nil {
			return "", fmt.Errorf("restore the config of %s: %w", c.Name, err)
		}
	}
	return v1.BatchRolledBack, nil
}

// finishRollout marks a rollout whose batches are all done.
func (h *Herder) finishRollout(ctx context.Context, id string) error {
	_, err := h.changeRollout(ctx, id, func(r *v1.Rollout) error {
		if r.State != v1.RolloutRunning || r.Batch < len(r.Batches) {
			return errStale
		}
		r.State = v1.RolloutDone
		return nil
	})
	return ignoreStale(err)
}
