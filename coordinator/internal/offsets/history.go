package offsets

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/reqctx"
	"github.com/sluice-io/sluice/shared/faults"
)

// Steps of an offsets change, as errors name them; each is a fault point
// (faults.OffsetsHistoryBegin, faults.OffsetsApply,
// faults.OffsetsHistoryMarker).
const (
	// StepHistoryBegin writes the pending history entry.
	StepHistoryBegin = "recording the offsets change"
	// StepApplyOffsets has an agent make the change.
	StepApplyOffsets = "changing the offsets"
	// StepHistoryMarker writes the entry's applied or failed marker. A
	// fault here leaves the entry pending, as a crash of the leader would.
	StepHistoryMarker = "marking the offsets change in the history"
)

// msgHistoryOff answers the history operations of a service without one.
const msgHistoryOff = "The offsets history is not kept by this coordinator"

// Meta is what an operation says of itself in its history entry.
type Meta struct {
	// Operation is one of wire.History*: alter, reset, create, undo, …
	Operation string
	// Detail says more, for an operator reading the history.
	Detail string
	// Undoes is the entry an undo undoes; FromEntry the one a restore
	// took its positions from.
	Undoes    string
	FromEntry string
}

// markerTimeout bounds writing one marker; the change is made by then,
// and a marker that cannot be written leaves the entry pending for the
// next leader to resolve.
const markerTimeout = 30 * time.Second

// Recorder records the changes of connectors' positions in the offsets
// history, and resolves the entries a previous leader left pending.
type Recorder struct {
	cfg  *Config
	log  *slog.Logger
	read reader
}

// Begin records a change about to be made to name's positions; an error
// names the step (historyRefused is its answer).
func (r *Recorder) Begin(ctx context.Context, name, typ, group, topic string, meta Meta, changes []api.OffsetChange) (api.OffsetsHistoryEntry, error) {
	e := api.OffsetsHistoryEntry{Connector: name, Type: typ, Group: group, OffsetsTopic: topic, Operation: meta.Operation, Detail: meta.Detail,
		Principal: r.cfg.Principal(ctx), Reason: reqctx.Reason(ctx), Undoes: meta.Undoes, FromEntry: meta.FromEntry, Changes: changes}
	if e.Changes == nil {
		e.Changes = []api.OffsetChange{}
	}
	if r.cfg.History == nil {
		return e, nil
	}
	err := faults.Step(ctx, r.cfg.Faults, faults.OffsetsHistoryBegin, func() error {
		var err error
		e, err = r.cfg.History.Begin(ctx, e)
		return err
	})
	if err != nil {
		r.log.Error("offsets: writing the pending history entry failed; the change is refused", "connector", name, "err", err)
		return e, fmt.Errorf("%s: %w", StepHistoryBegin, err)
	}
	return e, nil
}

// historyRefused is the answer to a change refused because its history
// entry could not be written.
func historyRefused(name string, err error) error {
	return api.Errorf(api.CodeInternal, "Failed to record the offsets change of connector %s in the offsets history (%s); nothing was changed", name, errors.Unwrap(err))
}

// Finish writes e's marker: applied when cause is nil, failed otherwise.
// It runs even when the caller went away, as the change is made; a marker
// it cannot write is logged, and the entry stays pending until the next
// leader resolves it (ResolvePending).
func (r *Recorder) Finish(ctx context.Context, e api.OffsetsHistoryEntry, cause error) {
	if e.ID == "" || r.cfg.History == nil {
		return
	}
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markerTimeout)
	defer cancel()
	err := faults.Step(mctx, r.cfg.Faults, faults.OffsetsHistoryMarker, func() error { return r.cfg.History.Finish(mctx, e, cause) })
	if err != nil {
		r.log.Error("offsets: writing the history marker failed; the entry stays pending until the next leader resolves it",
			"connector", e.Connector, "entry", e.ID, "applied", cause == nil, "err", err)
	}
}

// Settle marks e once its change was tried: applied when it succeeded. A
// failure does not always mean nothing was written (an agent lost, or
// silent past its deadline, after it committed), so then the positions
// decide, as at a leader's start (ResolvePending): the ones the change
// wrote mark it applied, others failed; positions that cannot be read
// leave the entry pending for the next leader.
func (r *Recorder) Settle(ctx context.Context, e api.OffsetsHistoryEntry, kind connect.Kind, cause error) {
	if cause == nil || e.ID == "" || r.cfg.History == nil {
		r.Finish(ctx, e, cause)
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markerTimeout)
	defer cancel()
	current, err := r.read.of(rctx, e.Connector, kind, e.Group, e.OffsetsTopic)
	if err != nil {
		r.log.Error("offsets: the change failed and its positions cannot be read; its history entry stays pending until the next leader resolves it",
			"connector", e.Connector, "entry", e.ID, "err", err)
		return
	}
	if applied(current, e.Changes) {
		r.log.Warn("offsets: the change was answered with an error, but the positions show it was made; its history entry is marked applied",
			"connector", e.Connector, "entry", e.ID, "err", cause)
		cause = nil
	}
	r.Finish(ctx, e, cause)
}

// List is name's applied entries, newest first, as GET …/offsets/history
// answers them.
func (r *Recorder) List(ctx context.Context, name string, limit int, before string) (api.OffsetsHistory, error) {
	if r.cfg.History == nil {
		return api.OffsetsHistory{}, api.Errorf(api.CodeNotFound, msgHistoryOff)
	}
	out, err := r.cfg.History.List(ctx, name, limit, before)
	if err != nil {
		return api.OffsetsHistory{}, historyReadFailed(name, err)
	}
	if out.Entries == nil {
		out.Entries = []api.OffsetsHistoryEntry{}
	}
	return out, nil
}

// Entry is name's applied entry id, or its newest one for id "".
func (r *Recorder) Entry(ctx context.Context, name, id string) (api.OffsetsHistoryEntry, error) {
	if r.cfg.History == nil {
		return api.OffsetsHistoryEntry{}, api.Errorf(api.CodeNotFound, msgHistoryOff)
	}
	var e api.OffsetsHistoryEntry
	var ok bool
	var err error
	if id == "" {
		e, ok, err = r.cfg.History.Newest(ctx, name)
	} else {
		e, ok, err = r.cfg.History.Get(ctx, name, id)
	}
	switch {
	case err != nil:
		return e, historyReadFailed(name, err)
	case !ok && id == "":
		return e, api.Errorf(api.CodeNotFound, "Connector %s has no offsets history", name)
	case !ok:
		return e, api.Errorf(api.CodeNotFound, "No offsets history entry %s for connector %s", id, name)
	}
	return e, nil
}

// historyReadFailed is the answer to a history that cannot be read.
func historyReadFailed(name string, err error) error {
	return api.Errorf(api.CodeInternal, "Failed to read the offsets history of connector %s: %v", name, err)
}

// entriesAfter are name's applied entries newer than id.
func (r *Recorder) entriesAfter(ctx context.Context, name, id string) ([]api.OffsetsHistoryEntry, error) {
	var out []api.OffsetsHistoryEntry
	before := ""
	for {
		page, err := r.cfg.History.List(ctx, name, 1000, before)
		if err != nil {
			return nil, err // named by the caller's answer, which a client reads
		}
		for _, e := range page.Entries {
			if e.ID <= id {
				return out, nil
			}
			out = append(out, e)
		}
		if !page.More || len(page.Entries) == 0 {
			return out, nil
		}
		before = page.Entries[len(page.Entries)-1].ID
	}
}
