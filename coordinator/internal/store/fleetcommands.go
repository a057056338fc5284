package store

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sluice-io/sluice/shared/records"
)

// The fleet commands of maintenance windows and rollouts. A window is
// written whole when it opens and removed when it closes; a rollout is
// created whole, then moved on by transitions, each of which checks the
// state it starts from (ErrStale otherwise) and stamps UpdatedAt with its
// At:
//
//	command              from                          to
//	OpenWindow           (none)                        window
//	CloseWindow          window (or none)              (none)
//	StartRollout         (none)                        running, batches pending
//	PauseRollout         running                       paused
//	ResumeRollout        paused                        running (a failed or verifying batch verifies afresh)
//	AbortRollout         not final                     aborted
//	StartBatch           running, batch pending        applying (start generation, was_running)
//	ApplyConnector       running, batch applying       its connector applied/skipped/failed: …
//	BeginVerify          running, batch applying, or   verifying since At
//	                     verifying with no start (resumed)
//	MarkHealthy          running, batch verifying      healthy since At (zero At: not healthy)
//	SkipConnectors       running, batch verifying      those connectors skipped (deleted)
//	AdvanceBatch         running, batch verifying      batch done, next batch
//	FailBatch            running, batch in progress    batch failed; paused (or failed: rollback)
//	RollBackConnector    failed                        its connector rolled back/skipped
//	RollBackBatch        failed                        batch rolled back
//	FinishRollout        running, every batch done     done
//	FinishRollBack       failed                        rolled_back
//	DeleteRollout        any                           (none)
//
// A rollout step that writes a connector's config is one Stores.Apply of
// the config command and the transition together.

// OpenWindow records an open maintenance window.
type OpenWindow struct{ Window Window }

func (OpenWindow) topic() Topic { return TopicFleet }

func (c OpenWindow) encode(v *view) ([]records.Record, error) {
	w := c.Window
	switch {
	case w.ID == "":
		return nil, errors.New("a maintenance window needs an id")
	case w.State != "STOPPED" && w.State != "PAUSED":
		return nil, fmt.Errorf("a maintenance window holds its connectors STOPPED or PAUSED, not %q", w.State)
	case len(w.Connectors) == 0:
		return nil, fmt.Errorf("maintenance window %s holds no connector", w.ID)
	}
	if _, open := v.window(w.ID); open {
		return nil, fmt.Errorf("%w: maintenance window %s is open already", ErrStale, w.ID)
	}
	w = deepCopy(w)
	v.windows[w.ID] = &w
	return jsonRecords(fleetMaintenancePrefix+w.ID, w)
}

// CloseWindow removes a window (one already gone is removed again).
type CloseWindow struct{ ID string }

func (CloseWindow) topic() Topic { return TopicFleet }

func (c CloseWindow) encode(v *view) ([]records.Record, error) {
	if c.ID == "" {
		return nil, errors.New("closing a maintenance window needs its id")
	}
	v.windows[c.ID] = nil
	return tombstone(fleetMaintenancePrefix + c.ID), nil
}

// StartRollout records a new rollout, running with every batch pending.
type StartRollout struct{ Rollout Rollout }

func (StartRollout) topic() Topic { return TopicFleet }

func (c StartRollout) encode(v *view) ([]records.Record, error) {
	r := c.Rollout
	switch {
	case r.ID == "":
		return nil, errors.New("a rollout needs an id")
	case r.State != RolloutRunning || r.Batch != 0 || len(r.Batches) == 0:
		return nil, fmt.Errorf("rollout %s must start running at its first batch", r.ID)
	}
	for _, b := range r.Batches {
		if b.State != BatchPending || len(b.Connectors) == 0 {
			return nil, fmt.Errorf("rollout %s must start with non-empty pending batches", r.ID)
		}
	}
	if _, ok := v.rollout(r.ID); ok {
		return nil, fmt.Errorf("%w: rollout %s exists already", ErrStale, r.ID)
	}
	return v.putRollout(r)
}

// DeleteRollout removes a rollout's record.
type DeleteRollout struct{ ID string }

func (DeleteRollout) topic() Topic { return TopicFleet }

func (c DeleteRollout) encode(v *view) ([]records.Record, error) {
	if c.ID == "" {
		return nil, errors.New("deleting a rollout needs its id")
	}
	v.rollouts[c.ID] = nil
	return tombstone(fleetRolloutPrefix + c.ID), nil
}

// putRollout records r in the view and returns its record.
func (v *view) putRollout(r Rollout) ([]records.Record, error) {
	r = deepCopy(r)
	v.rollouts[r.ID] = &r
	return jsonRecords(fleetRolloutPrefix+r.ID, r)
}

// transition is the record of rollout id after change, stamped at. change
// returns an ErrStale error when the rollout is not in the state it
// starts from.
func (v *view) transition(id string, at time.Time, change func(r *Rollout) error) ([]records.Record, error) {
	r, ok := v.rollout(id)
	if !ok {
		return nil, fmt.Errorf("%w: rollout %s is gone", ErrStale, id)
	}
	if err := change(&r); err != nil {
		return nil, err
	}
	r.UpdatedAt = at.UTC()
	return v.putRollout(r)
}

// stale is the ErrStale of a rollout not in the state a transition needs.
func stale(r *Rollout, want string) error {
	return fmt.Errorf("%w: rollout %s is %s (batch %d), not %s", ErrStale, r.ID, r.State, r.Batch+1, want)
}

// batchIn checks that r runs, is at batch i, and that batch is in one of
// states; it returns the batch.
func batchIn(r *Rollout, i int, states ...string) (*RolloutBatch, error) {
	if r.State != RolloutRunning || r.Batch != i || i >= len(r.Batches) || !slices.Contains(states, r.Batches[i].State) {
		return nil, stale(r, fmt.Sprintf("running at batch %d %v", i+1, states))
	}
	return &r.Batches[i], nil
}

// connector is the connector name of batch b.
func connector(r *Rollout, b *RolloutBatch, name string) (*RolloutConnector, error) {
	for i := range b.Connectors {
		if b.Connectors[i].Name == name {
			return &b.Connectors[i], nil
		}
	}
	return nil, fmt.Errorf("rollout %s has no connector %s in batch %d", r.ID, name, r.Batch+1)
}

// PauseRollout pauses a running rollout before its next step.
type PauseRollout struct {
	ID string
	At time.Time
}

func (PauseRollout) topic() Topic { return TopicFleet }

func (c PauseRollout) encode(v *view) ([]records.Record, error) {
	return v.transition(c.ID, c.At, func(r *Rollout) error {
		if r.State != RolloutRunning {
			return stale(r, RolloutRunning)
		}
		r.State = RolloutPaused
		return nil
	})
}

// ResumeRollout resumes a paused rollout where it stopped: a batch that
// failed its health gate, or was verifying, verifies afresh (the time
// paused counts neither toward the gate nor toward its bound).
type ResumeRollout struct {
	ID string
	At time.Time
}

func (ResumeRollout) topic() Topic { return TopicFleet }

func (c ResumeRollout) encode(v *view) ([]records.Record, error) {
	return v.transition(c.ID, c.At, func(r *Rollout) error {
		if r.State != RolloutPaused {
			return stale(r, RolloutPaused)
		}
		r.State, r.Error = RolloutRunning, ""
		if r.Batch < len(r.Batches) {
			if b := &r.Batches[r.Batch]; b.State == BatchFailed || b.State == BatchVerifying {
				b.State, b.HealthySince, b.VerifyingSince = BatchVerifying, time.Time{}, time.Time{}
			}
		}
		return nil
	})
}

// AbortRollout ends a rollout for good; what it applied stays applied.
type AbortRollout struct {
	ID string
	At time.Time
}

func (AbortRollout) topic() Topic { return TopicFleet }

func (c AbortRollout) encode(v *view) ([]records.Record, error) {
	return v.transition(c.ID, c.At, func(r *Rollout) error {
		if r.Final() {
			return stale(r, "in progress")
		}
		r.State = RolloutAborted
		return nil
	})
}

// StartBatch starts applying batch Batch: Generation is the highest task
// generation issued so far, and Running the connectors of the batch that
// run now (only those are held to the health gate).
type StartBatch struct {
	ID         string
	Batch      int
	Generation int64
	Running    map[string]bool
	At         time.Time
}

func (StartBatch) topic() Topic { return TopicFleet }

func (c StartBatch) encode(v *view) ([]records.Record, error) {
	return v.transition(c.ID, c.At, func(r *Rollout) error {
		b, err := batchIn(r, c.Batch, BatchPending)
		if err != nil {
			return err
		}
		b.State, b.StartGeneration = BatchApplying, c.Generation
		for i := range b.Connectors {
			b.Connectors[i].WasRunning = c.Running[b.Connectors[i].Name]
		}
		return nil
	})
}

// ApplyConnector records what became of one connector of the batch being
// applied: State is applied, skipped or "failed: …"; Before and After are
// its configs as the step found and wrote them (changed by hand since the
// rollout was made: the patch merged into its config then). Written with
// the connector's config, in one Apply.
type ApplyConnector struct {
	ID            string
	Batch         int
	Connector     string
	Before, After map[string]string
	// BeforePlugin is the plugin version the connector ran before the
	// patch (RolloutConnector.BeforePlugin).
	BeforePlugin *records.PluginPin
	State        string
	At           time.Time
}

func (ApplyConnector) topic() Topic { return TopicFleet }

func (c ApplyConnector) encode(v *view) ([]records.Record, error) {
	if c.State == "" || c.State == BatchPending {
		return nil, fmt.Errorf("connector %s of rollout %s: no outcome", c.Connector, c.ID)
	}
	return v.transition(c.ID, c.At, func(r *Rollout) error {
		b, err := batchIn(r, c.Batch, BatchApplying)
		if err != nil {
			return err
		}
		rc, err := connector(r, b, c.Connector)
		if err != nil {
			return err
		}
		if rc.State != BatchPending {
			return fmt.Errorf("%w: connector %s of rollout %s is %s already", ErrStale, c.Connector, c.ID, rc.State)
		}
		rc.State, rc.Before, rc.After, rc.BeforePlugin = c.State, c.Before, c.After, c.BeforePlugin
		return nil
	})
}

// BeginVerify starts the health gate of batch Batch at At: once every
// connector of an applying batch has an outcome, or again after a resume.
type BeginVerify struct {
	ID    string
	Batch int
	At    time.Time
}

func (BeginVerify) topic() Topic { return TopicFleet }

func (c BeginVerify) encode(v *view) ([]records.Record, error) {
	return v.transition(c.ID, c.At, func(r *Rollout) error {
		b, err := batchIn(r, c.Batch, BatchApplying, BatchVerifying)
		if err != nil {
			return err
		}
		if b.State == BatchVerifying && !b.VerifyingSince.IsZero() {
			return stale(r, "resumed")
		}
		for _, rc := range b.Connectors {
			if rc.State == BatchPending {
				return fmt.Errorf("batch %d of rollout %s still has connector %s to apply", c.Batch+1, c.ID, rc.Name)
			}
		}
		b.State, b.VerifyingSince, b.HealthySince = BatchVerifying, c.At.UTC(), time.Time{}
		return nil
	})
}

// MarkHealthy records since when the verifying batch has been healthy;
// a zero Since records that it is not.
type MarkHealthy struct {
	ID    string
	Batch int
	Since time.Time
	At    time.Time
}

func (MarkHealthy) topic() Topic { return TopicFleet }

func (c MarkHealthy) encode(v *view) ([]records.Record, error) {
	return v.transition(c.ID, c.At, func(r *Rollout) error {
		b, err := batchIn(r, c.Batch, BatchVerifying)
		if err != nil {
			return err
		}
		b.HealthySince = c.Since.UTC()
		if c.Since.IsZero() {
			b.HealthySince = time.Time{}
		}
		return nil
	})
}

// SkipConnectors marks connectors of the verifying batch skipped: they
// were deleted since they were applied.
type SkipConnectors struct {
	ID         string
	Batch      int
	Connectors []string
	At         time.Time
}

func (SkipConnectors) topic() Topic { return TopicFleet }

func (c SkipConnectors) encode(v *view) ([]records.Record, error) {
	return v.transition(c.ID, c.At, func(r *Rollout) error {
		b, err := batchIn(r, c.Batch, BatchVerifying)
		if err != nil {
			return err
		}
		for _, n := range c.Connectors {
			rc, err := connector(r, b, n)
			if err != nil {
				return err
			}
			rc.State = ConnectorSkipped
		}
		return nil
	})
}

// AdvanceBatch marks the verifying batch done (it passed its health gate)
// and moves the rollout on to the next.
type AdvanceBatch struct {
	ID    string
	Batch int
	At    time.Time
}

func (AdvanceBatch) topic() Topic { return TopicFleet }

func (c AdvanceBatch) encode(v *view) ([]records.Record, error) {
	return v.transition(c.ID, c.At, func(r *Rollout) error {
		b, err := batchIn(r, c.Batch, BatchVerifying)
		if err != nil {
			return err
		}
		b.State = BatchDone
		r.Batch++
		return nil
	})
}

// FailBatch records that batch Batch failed, and why: the rollout pauses,
// or, when it rolls back on failure, is failed until the rollback is done.
type FailBatch struct {
	ID    string
	Batch int
	Why   string
	At    time.Time
}

func (FailBatch) topic() Topic { return TopicFleet }

func (c FailBatch) encode(v *view) ([]records.Record, error) {
	return v.transition(c.ID, c.At, func(r *Rollout) error {
		b, err := batchIn(r, c.Batch, BatchApplying, BatchVerifying)
		if err != nil {
			return err
		}
		b.State, r.Error, r.State = BatchFailed, c.Why, RolloutPaused
		if r.Spec.RollsBack() {
			r.State = RolloutFailed
		}
		return nil
	})
}

// RollBackConnector records that an applied connector of a failed
// rollout has its before config back (State rolled_back), or was deleted
// (skipped). Written with the connector's config, in one Apply.
type RollBackConnector struct {
	ID        string
	Batch     int
	Connector string
	State     string
	At        time.Time
}

func (RollBackConnector) topic() Topic { return TopicFleet }

func (c RollBackConnector) encode(v *view) ([]records.Record, error) {
	return v.transition(c.ID, c.At, func(r *Rollout) error {
		if r.State != RolloutFailed || c.Batch < 0 || c.Batch >= len(r.Batches) {
			return stale(r, RolloutFailed)
		}
		rc, err := connector(r, &r.Batches[c.Batch], c.Connector)
		if err != nil {
			return err
		}
		if rc.State != ConnectorApplied {
			return fmt.Errorf("%w: connector %s of rollout %s is %s, not applied", ErrStale, c.Connector, c.ID, rc.State)
		}
		rc.State = c.State
		return nil
	})
}

// RollBackBatch marks a batch of a failed rollout rolled back: none of
// its connectors is left applied.
type RollBackBatch struct {
	ID    string
	Batch int
	At    time.Time
}

func (RollBackBatch) topic() Topic { return TopicFleet }

func (c RollBackBatch) encode(v *view) ([]records.Record, error) {
	return v.transition(c.ID, c.At, func(r *Rollout) error {
		if r.State != RolloutFailed || c.Batch < 0 || c.Batch >= len(r.Batches) {
			return stale(r, RolloutFailed)
		}
		r.Batches[c.Batch].State = BatchRolledBack
		return nil
	})
}

// FinishRollout marks a running rollout whose batches are all done.
type FinishRollout struct {
	ID string
	At time.Time
}

func (FinishRollout) topic() Topic { return TopicFleet }

func (c FinishRollout) encode(v *view) ([]records.Record, error) {
	return v.transition(c.ID, c.At, func(r *Rollout) error {
		if r.State != RolloutRunning || r.Batch < len(r.Batches) {
			return stale(r, "running with every batch done")
		}
		r.State = RolloutDone
		return nil
	})
}

// FinishRollBack marks a failed rollout rolled back.
type FinishRollBack struct {
	ID string
	At time.Time
}

func (FinishRollBack) topic() Topic { return TopicFleet }

func (c FinishRollBack) encode(v *view) ([]records.Record, error) {
	return v.transition(c.ID, c.At, func(r *Rollout) error {
		if r.State != RolloutFailed {
			return stale(r, RolloutFailed)
		}
		r.State = RolloutRolledBack
		return nil
	})
}
