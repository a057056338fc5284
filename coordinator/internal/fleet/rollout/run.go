package rollout

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/lifecycle"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// minVerifyBound is the least time a batch may take to become healthy
// before it fails; the bound is the larger of it and five running_for.
const minVerifyBound = 2 * time.Minute

// VerifyBound is how long a batch may verify before it fails.
func VerifyBound(runningFor time.Duration) time.Duration {
	return max(5*runningFor, minVerifyBound)
}

// graceFresh is how long past running_for a batch verifies before a task
// that was not restarted since the batch started (its generation is not
// newer) counts anyway: a patch that leaves its task configs as they were
// restarts nothing, and such a task runs the patched connector all along.
const graceFresh = 10 * time.Second

// keptRollouts is how many finished rollouts the fleet topic keeps: older
// ones are removed, so that the topic, and every coordinator's copy of it,
// does not grow with every rollout ever made.
const keptRollouts = 50

// maxStepsAPass bounds the steps one pass takes of one rollout, so that
// one rollout with many connectors does not hold up the others for long.
const maxStepsAPass = 100

// Run drives every rollout in progress until ctx ends: on each change of
// the fleet topic, and every Tick for the health gate.
func (c *Controller) Run(ctx context.Context) {
	lifecycle.Run(ctx, c.cfg.Tick, c.cfg.Rollouts.Changed, c.Pass)
}

// Pass takes the steps every rollout in progress can take now, then
// prunes the finished ones beyond keptRollouts.
func (c *Controller) Pass(ctx context.Context) {
	// One copy of the rollouts a pass: the kept finished ones, with every
	// connector's configs, are only counted for pruning.
	rollouts := c.cfg.Rollouts.Rollouts()
	for _, r := range rollouts {
		if r.Finished() {
			continue
		}
		if err := lifecycle.Steps(ctx, maxStepsAPass, func() (bool, error) { return c.Step(ctx, r.ID) }); err != nil {
			c.cfg.Logger.Warn("rollout step failed; retrying", "rollout", r.ID, "err", err)
		}
	}
	c.prune(ctx, rollouts)
}

// prune removes the finished rollouts of rollouts (oldest first) beyond
// the newest keptRollouts, in one write.
func (c *Controller) prune(ctx context.Context, rollouts []store.Rollout) {
	var finished []store.Command
	for _, r := range rollouts {
		if r.Finished() {
			finished = append(finished, store.DeleteRollout{ID: r.ID})
		}
	}
	if len(finished) <= keptRollouts {
		return
	}
	if err := c.cfg.Store.Apply(ctx, finished[:len(finished)-keptRollouts]...); err != nil {
		c.cfg.Logger.Warn("removing finished rollouts failed; retrying", "err", err)
	}
}

// Step takes the next step of rollout id, if it has one now, and reports
// whether it took one. A step is one transaction: the rollout's
// transition and the config it writes, if any.
func (c *Controller) Step(ctx context.Context, id string) (took bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.cfg.Rollouts.Rollout(id)
	if !ok {
		return false, nil
	}
	now := c.cfg.Clock()
	// A step that writes a connector's config holds the connector's lock
	// from its read of the config until its write is applied.
	var locks heldLocks
	defer locks.release()
	var cmds []store.Command
	switch {
	case r.State == store.RolloutFailed && r.Spec.RollsBack():
		cmds = c.rollBackStep(r, now, &locks)
	case r.State != store.RolloutRunning:
		return false, nil
	case r.Batch >= len(r.Batches):
		cmds = []store.Command{store.FinishRollout{ID: id, At: now}}
	default:
		cmds, err = c.batchStep(ctx, r, now, &locks)
	}
	if err != nil || len(cmds) == 0 {
		return false, err
	}
	if err := c.cfg.Store.Apply(ctx, cmds...); err != nil {
		if errors.Is(err, store.ErrStale) {
			return false, nil // moved on meanwhile: the next pass decides anew
		}
		return false, fmt.Errorf("rollout %s: %w", id, err)
	}
	if fail, ok := cmds[len(cmds)-1].(store.FailBatch); ok {
		c.cfg.Logger.Warn("rollout batch failed", "rollout", id, "batch", fail.Batch+1, "why", fail.Why)
	}
	return true, nil
}

// heldLocks are the connector locks a step holds until it is written.
type heldLocks []func()

func (h *heldLocks) take(l Locks, name string) { *h = append(*h, l.Lock(name)) }

func (h *heldLocks) release() {
	for i := len(*h) - 1; i >= 0; i-- {
		(*h)[i]()
	}
}

// batchStep decides the step of a running rollout's batch in progress.
func (c *Controller) batchStep(ctx context.Context, r store.Rollout, now time.Time, locks *heldLocks) ([]store.Command, error) {
	b := r.Batches[r.Batch]
	switch b.State {
	case store.BatchPending:
		// Whether each connector runs is taken once, as the batch starts:
		// a leader taking over mid-batch must not see a connector
		// restarting with its new config as not running.
		running := map[string]bool{}
		for _, rc := range b.Connectors {
			running[rc.Name] = c.connectorRunning(rc.Name)
		}
		return []store.Command{store.StartBatch{ID: r.ID, Batch: r.Batch, Generation: c.cfg.Generation(), Running: running, At: now}}, nil
	case store.BatchApplying:
		for _, rc := range b.Connectors {
			if rc.State == store.BatchPending {
				locks.take(c.cfg.Locks, rc.Name)
				return c.applyStep(ctx, r, rc, now)
			}
		}
		return []store.Command{store.BeginVerify{ID: r.ID, Batch: r.Batch, At: now}}, nil
	case store.BatchVerifying:
		return c.verifyStep(r, now), nil
	}
	return nil, nil
}

// applyStep decides one pending connector of the batch being applied:
// its after config written, unless it has it already, and its outcome
// recorded, together. A connector changed by hand since the rollout was
// made gets the patch merged into its config as it is now, and that is
// what a rollback restores (Before and After are recorded anew); a
// deleted one is skipped; one whose changed config no longer validates
// fails (the health gate then fails the batch).
func (c *Controller) applyStep(ctx context.Context, r store.Rollout, rc store.RolloutConnector, now time.Time) ([]store.Command, error) {
	mark := store.ApplyConnector{ID: r.ID, Batch: r.Batch, Connector: rc.Name, Before: rc.Before, After: rc.After, State: store.ConnectorApplied, At: now}
	cur, ok := c.cfg.Configs.Get(rc.Name)
	mark.BeforePlugin = cur.Plugin
	switch {
	case !ok:
		mark.State = store.ConnectorSkipped
		return []store.Command{mark}, nil
	case maps.Equal(cur.Config, rc.After):
		// The patch is in its config already; the version the before
		// config ran is not known, so a rollback resolves it anew.
		mark.BeforePlugin = nil
		return []store.Command{mark}, nil
	case !maps.Equal(cur.Config, rc.Before):
		mark.Before, mark.After = cur.Config, MergePatch(rc.Name, cur.Config, r.Spec.Patch)
		if err := c.cfg.Validate(ctx, mark.After); err != nil {
			mark.State = "failed: " + describeConnector(rc.Name, "its config changed since the rollout was made, and the patch no longer validates", err)
			return []store.Command{mark}, nil
		}
		if maps.Equal(cur.Config, mark.After) {
			return []store.Command{mark}, nil
		}
	}
	return []store.Command{store.PutConnectorConfig{Name: rc.Name, Config: mark.After}, mark}, nil
}

// connectorRunning reports whether a connector is meant to run and its
// status says it does.
func (c *Controller) connectorRunning(name string) bool {
	conn, ok := c.cfg.Configs.Get(name)
	st, _ := c.cfg.Statuses.Connector(name)
	return ok && conn.TargetState == records.TargetStarted && st.State == api.StateRunning
}

// verifyStep holds the batch in progress to the health gate at now: done
// once healthy for running_for, failed on a FAILED task beyond the limit
// or when the bound passes (strictly after it).
func (c *Controller) verifyStep(r store.Rollout, now time.Time) []store.Command {
	b := r.Batches[r.Batch]
	runningFor, _ := time.ParseDuration(r.Spec.Health.RunningFor)
	if b.VerifyingSince.IsZero() {
		// Resumed: verification starts again now.
		return []store.Command{store.BeginVerify{ID: r.ID, Batch: r.Batch, At: now}}
	}
	settled := now.Sub(b.VerifyingSince) >= runningFor+graceFresh
	v := c.health(b, r.Spec.Health.MaxFailedTasks, settled)
	if len(v.deleted) > 0 {
		return []store.Command{store.SkipConnectors{ID: r.ID, Batch: r.Batch, Connectors: v.deleted, At: now}}
	}
	bound := VerifyBound(runningFor)
	fail := func(format string, args ...any) []store.Command {
		return []store.Command{store.FailBatch{ID: r.ID, Batch: r.Batch, Why: fmt.Sprintf(format, args...), At: now}}
	}
	switch {
	case v.failure != "":
		return fail("batch %d of %d failed its health gate: %s", r.Batch+1, len(r.Batches), v.failure)
	case !v.healthy && now.Sub(b.VerifyingSince) > bound:
		return fail("batch %d of %d did not become healthy within %s: %s", r.Batch+1, len(r.Batches), bound, v.why)
	case !v.healthy && !b.HealthySince.IsZero():
		return []store.Command{store.MarkHealthy{ID: r.ID, Batch: r.Batch, At: now}}
	case v.healthy && b.HealthySince.IsZero():
		return []store.Command{store.MarkHealthy{ID: r.ID, Batch: r.Batch, Since: now, At: now}}
	case v.healthy && now.Sub(b.HealthySince) >= runningFor:
		return []store.Command{store.AdvanceBatch{ID: r.ID, Batch: r.Batch, At: now}}
	}
	return nil
}

// rollBackStep decides the next step of a failed rollout that rolls back:
// every applied connector of the failed batch and those before it gets its
// before config back, newest batch first and last connector first, each
// with its record in one transaction; each batch is then marked rolled
// back, and the rollout last.
func (c *Controller) rollBackStep(r store.Rollout, now time.Time, locks *heldLocks) []store.Command {
	for bi := min(r.Batch, len(r.Batches)-1); bi >= 0; bi-- {
		b := r.Batches[bi]
		for ci := len(b.Connectors) - 1; ci >= 0; ci-- {
			if rc := b.Connectors[ci]; rc.State == store.ConnectorApplied {
				locks.take(c.cfg.Locks, rc.Name)
				return c.restoreStep(r.ID, bi, rc, now)
			}
		}
		if b.State != store.BatchRolledBack {
			return []store.Command{store.RollBackBatch{ID: r.ID, Batch: bi, At: now}}
		}
	}
	return []store.Command{store.FinishRollBack{ID: r.ID, At: now}}
}

// restoreStep gives one connector its before config back, unless it has
// it already; a deleted connector is skipped.
func (c *Controller) restoreStep(id string, batch int, rc store.RolloutConnector, now time.Time) []store.Command {
	mark := store.RollBackConnector{ID: id, Batch: batch, Connector: rc.Name, State: store.BatchRolledBack, At: now}
	cur, ok := c.cfg.Configs.Get(rc.Name)
	switch {
	case !ok:
		mark.State = store.ConnectorSkipped
		return []store.Command{mark}
	case maps.Equal(cur.Config, rc.Before):
		return []store.Command{mark}
	}
	// The version the connector ran before, not the before config
	// resolved anew (docs/plugins.md, "Plugin upgrades as rollouts").
	return []store.Command{store.PutConnectorConfig{Name: rc.Name, Config: rc.Before, Plugin: rc.BeforePlugin}, mark}
}
