package herder

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/reqctx"
)

// History is where the herder records every change of a connector's
// positions (offsethistory.Log): a pending entry before the change, then
// a marker saying whether it was applied. Entries outlive their connector.
type History interface {
	// Begin writes e as pending, giving it its id and time; an error means
	// the entry may not exist, and the change must not be made.
	Begin(ctx context.Context, e v1.OffsetsHistoryEntry) (v1.OffsetsHistoryEntry, error)
	// Finish marks e applied (cause nil) or failed.
	Finish(ctx context.Context, e v1.OffsetsHistoryEntry, cause error) error
	// List is a connector's applied entries, newest first, older than the
	// entry before when it is set.
	List(ctx context.Context, connector string, limit int, before string) (v1.OffsetsHistory, error)
	// Get is one applied entry of a connector.
	Get(ctx context.Context, connector, id string) (v1.OffsetsHistoryEntry, bool, error)
	// Newest is a connector's newest applied entry.
	Newest(ctx context.Context, connector string) (v1.OffsetsHistoryEntry, bool, error)
	// Pending is every entry that has no marker, oldest first.
	Pending(ctx context.Context) ([]v1.OffsetsHistoryEntry, error)
}

// Steps of an offsets change that FaultHook can fail, besides the create
// steps (create.go).
const (
	// StepHistoryBegin writes the pending history entry.
	StepHistoryBegin = "recording the offsets change"
	// StepApplyOffsets has an agent make the change.
	StepApplyOffsets = "changing the offsets"
	// StepHistoryMarker writes the entry's applied or failed marker. A
	// fault here leaves the entry pending, as a crash of the leader would.
	StepHistoryMarker = "marking the offsets change in the history"
)

// historyMeta is what an operation says of itself in its history entry.
type historyMeta struct {
	operation string
	detail    string
	undoes    string
	fromEntry string
}

// markerTimeout bounds writing one marker; the change is made by then,
// and a marker that cannot be written leaves the entry pending for the
// next leader to resolve.
const markerTimeout = 30 * time.Second

// beginHistory records a change about to be made to name's positions; an
// error names the step.
func (h *Herder) beginHistory(ctx context.Context, name, typ, group, topic string, meta historyMeta, changes []v1.OffsetChange) (v1.OffsetsHistoryEntry, error) {
	e := v1.OffsetsHistoryEntry{Connector: name, Type: typ, Group: group, OffsetsTopic: topic, Operation: meta.operation, Detail: meta.detail,
		Principal: principalOf(ctx), Reason: reqctx.Reason(ctx), Undoes: meta.undoes, FromEntry: meta.fromEntry, Changes: changes}
	if e.Changes == nil {
		e.Changes = []v1.OffsetChange{}
	}
	if h.cfg.History == nil {
		return e, nil
	}
	err := h.step(StepHistoryBegin, func() error {
		var err error
		e, err = h.cfg.History.Begin(ctx, e)
		return err
	})
	if err != nil {
		h.log.Error("offsets: writing the pending history entry failed; the change is refused", "connector", name, "err", err)
		return e, fmt.Errorf("%s: %w", StepHistoryBegin, err)
	}
	return e, nil
}

// historyRefused is the answer to a change refused because its history
// entry could not be written.
func historyRefused(name string, err error) error {
	return v1.Errorf(v1.CodeInternal, "Failed to record the offsets change of connector %s in the offsets history (%s); nothing was changed", name, errors.Unwrap(err))
}

// finishHistory writes e's marker: applied when cause is nil, failed
// otherwise. It runs even when the caller went away, as the change is
// made; a marker it cannot write is logged, and the entry stays pending
// until the next leader resolves it (resolvePending).
func (h *Herder) finishHistory(ctx context.Context, e v1.OffsetsHistoryEntry, cause error) {
	if e.ID == "" || h.cfg.History == nil {
		return
	}
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markerTimeout)
	defer cancel()
	err := h.step(StepHistoryMarker, func() error { return h.cfg.History.Finish(mctx, e, cause) })
	if err != nil {
		h.log.Error("offsets: writing the history marker failed; the entry stays pending until the next leader resolves it",
			"connector", e.Connector, "entry", e.ID, "applied", cause == nil, "err", err)
	}
}

// settleHistory marks e once its change was tried: applied when it
// succeeded. A failure does not always mean nothing was written (an agent
// lost, or silent past its deadline, after it committed), so then the
// positions decide, as at a leader's start (resolvePending): the ones the
// change wrote mark it applied, others failed; positions that cannot be
// read leave the entry pending for the next leader.
func (h *Herder) settleHistory(ctx context.Context, e v1.OffsetsHistoryEntry, kind connect.Kind, cause error) {
	if cause == nil || e.ID == "" || h.cfg.History == nil {
		h.finishHistory(ctx, e, cause)
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markerTimeout)
	defer cancel()
	current, err := h.positionsOf(rctx, e.Connector, kind, e.Group, e.OffsetsTopic)
	if err != nil {
		h.log.Error("offsets: the change failed and its positions cannot be read; its history entry stays pending until the next leader resolves it",
			"connector", e.Connector, "entry", e.ID, "err", err)
		return
	}
	if applied(current, e.Changes) {
		h.log.Warn("offsets: the change was answered with an error, but the positions show it was made; its history entry is marked applied",
			"connector", e.Connector, "entry", e.ID, "err", cause)
		cause = nil
	}
	h.finishHistory(ctx, e, cause)
}
