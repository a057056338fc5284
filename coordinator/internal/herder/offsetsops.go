package herder

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/coordinator/internal/offsetval"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// Sluice's own offsets operations (docs/offsets.md). Each changes a
// STOPPED connector's positions through applyOffsets, as PATCH does, so it
// has PATCH's checks, fencing, all-or-nothing write and history entry.

// msgHistoryOff answers the history operations of a herder without one.
const msgHistoryOff = "The offsets history is not kept by this coordinator"

// PreviewOffsets answers POST /sluice/connectors/{name}/offsets/preview:
// the checks of PATCH (or DELETE, with req.Reset) and the changes it would
// make, writing nothing.
func (h *Herder) PreviewOffsets(ctx context.Context, name string, req v1.OffsetsPreviewRequest) (v1.OffsetsChanges, error) {
	ch := offsetsChange{op: v1.OffsetsOpAlter, entries: offsetval.Collapse(req.Offsets), dryRun: true}
	if req.Reset {
		ch = offsetsChange{op: v1.OffsetsOpReset, dryRun: true}
	}
	return h.changeStopped(ctx, name, ch)
}

// changeStopped runs ch on name under its lock, once name is STOPPED, and
// answers with the changes.
func (h *Herder) changeStopped(ctx context.Context, name string, ch offsetsChange) (v1.OffsetsChanges, error) {
	unlock := h.locks.Lock(name)
	defer unlock()
	c, err := h.checkStopped(name)
	if err != nil {
		return v1.OffsetsChanges{}, err
	}
	return h.changeLocked(ctx, name, c, ch)
}

// changeLocked is changeStopped for a caller that holds the lock and
// checked the connector is stopped. A change (not a dry run) counts in the
// offsets metrics.
func (h *Herder) changeLocked(ctx context.Context, name string, c store.Connector, ch offsetsChange) (_ v1.OffsetsChanges, err error) {
	if !ch.dryRun {
		kind := metrics.KindAlter
		if ch.op == v1.OffsetsOpReset {
			kind = metrics.KindReset
		}
		defer h.observeOffsets(kind, time.Now(), &err)
	}
	res, err := h.applyOffsets(ctx, name, c, ch)
	if err != nil {
		return v1.OffsetsChanges{}, err
	}
	return v1.OffsetsChanges{DryRun: ch.dryRun, Changes: nonNilChanges(res.changes), HistoryID: res.historyID}, nil
}

// nonNilChanges is c, or an empty list for none: an answer's changes are
// always a JSON array.
func nonNilChanges(c []v1.OffsetChange) []v1.OffsetChange {
	if c == nil {
		return []v1.OffsetChange{}
	}
	return c
}

// OffsetsHistory answers GET /sluice/connectors/{name}/offsets/history. A
// connector that no longer exists (or never did) has its history too.
func (h *Herder) OffsetsHistory(ctx context.Context, name string, limit int, before string) (v1.OffsetsHistory, error) {
	if h.cfg.History == nil {
		return v1.OffsetsHistory{}, v1.Errorf(v1.CodeNotFound, msgHistoryOff)
	}
	out, err := h.cfg.History.List(ctx, name, limit, before)
	if err != nil {
		return v1.OffsetsHistory{}, historyReadFailed(name, err)
	}
	if out.Entries == nil {
		out.Entries = []v1.OffsetsHistoryEntry{}
	}
	return out, nil
}

// OffsetsHistoryEntry answers GET …/offsets/history/{id}.
func (h *Herder) OffsetsHistoryEntry(ctx context.Context, name, id string) (v1.OffsetsHistoryEntry, error) {
	return h.historyEntry(ctx, name, id)
}

// historyEntry is name's applied entry id, or its newest one for id "".
func (h *Herder) historyEntry(ctx context.Context, name, id string) (v1.OffsetsHistoryEntry, error) {
	if h.cfg.History == nil {
		return v1.OffsetsHistoryEntry{}, v1.Errorf(v1.CodeNotFound, msgHistoryOff)
	}
	var e v1.OffsetsHistoryEntry
	var ok bool
	var err error
	if id == "" {
		e, ok, err = h.cfg.History.Newest(ctx, name)
	} else {
		e, ok, err = h.cfg.History.Get(ctx, name, id)
	}
	switch {
	case err != nil:
		return e, historyReadFailed(name, err)
	case !ok && id == "":
		return e, v1.Errorf(v1.CodeNotFound, "Connector %s has no offsets history", name)
	case !ok:
		return e, v1.Errorf(v1.CodeNotFound, "No offsets history entry %s for connector %s", id, name)
	}
	return e, nil
}

// historyReadFailed is the answer to a history that cannot be read.
func historyReadFailed(name string, err error) error {
	return v1.Errorf(v1.CodeInternal, "Failed to read the offsets history of connector %s: %v", name, err)
}

// UndoOffsets answers POST …/offsets/history/{id}/undo: it puts back the
// positions entry id moved from, on a STOPPED connector. Unless force, a
// partition the connector has moved since (by a later change, or by its
// tasks) makes it a 409 naming the partitions.
func (h *Herder) UndoOffsets(ctx context.Context, name, id string, force, dryRun bool) (v1.OffsetsChanges, error) {
	e, c, unlock, err := h.entryFor(ctx, name, name, id)
	if err != nil {
		return v1.OffsetsChanges{}, err
	}
	defer unlock()
	if !force {
		if err := h.checkUnchangedSince(ctx, name, c, e); err != nil {
			return v1.OffsetsChanges{}, err
		}
	}
	meta := historyMeta{operation: v1.HistoryUndo, undoes: e.ID, detail: fmt.Sprintf("undo of %s %s", e.Operation, e.ID)}
	return h.changeLocked(ctx, name, c, offsetsChange{op: v1.OffsetsOpAlter, entries: positionsOfEntry(e, true), meta: meta, dryRun: dryRun})
}

// RestoreOffsets answers POST /sluice/connectors/{name}/offsets/restore:
// the positions an entry of req.From's history recorded (before it, by
// default, or after it) are written to name, which is STOPPED. req.From
// may be a deleted connector: that is how its positions reach a new one.
func (h *Herder) RestoreOffsets(ctx context.Context, name string, req v1.OffsetsRestoreRequest) (v1.OffsetsChanges, error) {
	if v1.TrimName(req.From) == "" {
		return v1.OffsetsChanges{}, v1.Errorf(v1.CodeBadRequest, "Give \"from\": the connector whose offsets history holds the positions")
	}
	before := true
	switch req.Positions {
	case "", "before":
	case "after":
		before = false
	default:
		return v1.OffsetsChanges{}, v1.Errorf(v1.CodeBadRequest, "Invalid positions '%s': must be \"before\" (the positions the entry changed from) or \"after\" (those it changed to)", req.Positions)
	}
	e, c, unlock, err := h.entryFor(ctx, name, req.From, req.Entry)
	if err != nil {
		return v1.OffsetsChanges{}, err
	}
	defer unlock()
	which := "after"
	if before {
		which = "before"
	}
	meta := historyMeta{operation: v1.HistoryRestore, fromEntry: e.ID,
		detail: fmt.Sprintf("positions %s %s %s of connector %s", which, e.Operation, e.ID, e.Connector)}
	return h.changeLocked(ctx, name, c, offsetsChange{op: v1.OffsetsOpAlter, entries: positionsOfEntry(e, before), meta: meta, dryRun: req.DryRun})
}

// entryFor reads entry id of from's history (its newest for "") for a
// change of name, and takes name's lock once name is STOPPED and of the
// entry's kind; the caller releases it with unlock.
func (h *Herder) entryFor(ctx context.Context, name, from, id string) (v1.OffsetsHistoryEntry, store.Connector, func(), error) {
	e, err := h.historyEntry(ctx, from, id)
	if err != nil {
		return e, store.Connector{}, nil, err
	}
	unlock := h.locks.Lock(name)
	c, err := h.checkStopped(name)
	if err == nil {
		err = h.checkEntryKind(name, c, e)
	}
	if err != nil {
		unlock()
		return e, c, nil, err
	}
	return e, c, unlock, nil
}

// positionsOfEntry are the positions e changed from (before) or to, as the
// entries of an alter: a partition without one is removed.
func positionsOfEntry(e v1.OffsetsHistoryEntry, before bool) []v1.ConnectorOffset {
	out := make([]v1.ConnectorOffset, 0, len(e.Changes))
	for _, ch := range e.Changes {
		at := ch.To
		if before {
			at = ch.From
		}
		out = append(out, v1.ConnectorOffset{Partition: ch.Partition, Offset: at})
	}
	return out
}

// checkEntryKind refuses an entry of a source for a sink, and the reverse.
func (h *Herder) checkEntryKind(name string, c store.Connector, e v1.OffsetsHistoryEntry) error {
	if typ := h.connectorType(c.Config); typ != e.Type {
		return v1.Errorf(v1.CodeBadRequest, "Entry %s holds the positions of a %s connector (%s); connector %s is a %s connector", e.ID, e.Type, e.Connector, name, typ)
	}
	return nil
}

// checkUnchangedSince is the 409 of an undo whose partitions moved after
// entry e: a later applied entry changed them, or the connector's current
// positions are no longer those e wrote.
func (h *Herder) checkUnchangedSince(ctx context.Context, name string, c store.Connector, e v1.OffsetsHistoryEntry) error {
	touched := map[string]bool{}
	for _, ch := range e.Changes {
		touched[records.PartitionID(ch.Partition)] = true
	}
	stale := map[string]bool{}
	later, err := h.entriesAfter(ctx, name, e.ID)
	if err != nil {
		return historyReadFailed(name, err)
	}
	for _, l := range later {
		for _, ch := range l.Changes {
			if id := records.PartitionID(ch.Partition); touched[id] {
				stale[id] = true
			}
		}
	}
	kind := connect.KindSource
	if e.Type == v1.TypeSink {
		kind = connect.KindSink
	}
	current, err := h.positionsOf(ctx, name, kind, records.SinkGroupID(name, c.Config), h.ownOffsetsTopic(c.Config))
	if err != nil {
		return err
	}
	for _, ch := range e.Changes {
		id := records.PartitionID(ch.Partition)
		if !sameOffset(current[id].Offset, ch.To) {
			stale[id] = true
		}
	}
	if len(stale) == 0 {
		return nil
	}
	return v1.Errorf(v1.CodeConflict, "The positions of connector %s changed after entry %s, in partitions %s: undo with force=true to put back the entry's positions anyway",
		name, e.ID, strings.Join(sortedKeys(stale), ", "))
}

// entriesAfter are name's applied entries newer than id.
func (h *Herder) entriesAfter(ctx context.Context, name, id string) ([]v1.OffsetsHistoryEntry, error) {
	var out []v1.OffsetsHistoryEntry
	before := ""
	for {
		page, err := h.cfg.History.List(ctx, name, 1000, before)
		if err != nil {
			return nil, err
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

// sameOffset compares two offsets by their JSON form, so that a number
// read back from the history and one read from Kafka compare equal.
func sameOffset(a, b map[string]any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && string(ja) == string(jb)
}
