package offsets

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/coordinator/internal/offsetval"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// Sluice's own offsets operations (docs/offsets.md). Each changes a
// STOPPED connector's positions through apply, as PATCH does, so it has
// PATCH's checks, fencing, all-or-nothing write and history entry.

// PreviewOffsets answers POST /sluice/connectors/{name}/offsets/preview:
// the checks of PATCH (or DELETE, with req.Reset) and the changes it would
// make, writing nothing.
func (s *Service) PreviewOffsets(ctx context.Context, name string, req api.OffsetsPreviewRequest) (api.OffsetsChanges, error) {
	ch := Change{Op: wire.OffsetsOpAlter, Entries: offsetval.Collapse(req.Offsets), DryRun: true}
	if req.Reset {
		ch = Change{Op: wire.OffsetsOpReset, DryRun: true}
	}
	return s.changeStopped(ctx, name, ch)
}

// changeStopped runs ch on name under its lock, once name is STOPPED, and
// answers with the changes.
func (s *Service) changeStopped(ctx context.Context, name string, ch Change) (api.OffsetsChanges, error) {
	unlock := s.cfg.Locks.Lock(name)
	defer unlock()
	c, err := s.checkStopped(name)
	if err != nil {
		return api.OffsetsChanges{}, err
	}
	return s.changeLocked(ctx, name, c, ch)
}

// changeLocked is changeStopped for a caller that holds the lock and
// checked the connector is stopped. A change (not a dry run) counts in the
// offsets metrics.
func (s *Service) changeLocked(ctx context.Context, name string, c store.Connector, ch Change) (_ api.OffsetsChanges, err error) {
	if !ch.DryRun {
		kind := metrics.KindAlter
		if ch.Op == wire.OffsetsOpReset {
			kind = metrics.KindReset
		}
		defer s.Observe(kind)(&err)
	}
	res, err := s.apply(ctx, name, c, ch)
	if err != nil {
		return api.OffsetsChanges{}, err
	}
	changes := res.changes
	if changes == nil {
		changes = []api.OffsetChange{} // an answer's changes are always a JSON array
	}
	return api.OffsetsChanges{DryRun: ch.DryRun, Changes: changes, HistoryID: res.historyID}, nil
}

// OffsetsHistory answers GET /sluice/connectors/{name}/offsets/history. A
// connector that no longer exists (or never did) has its history too.
func (s *Service) OffsetsHistory(ctx context.Context, name string, limit int, before string) (api.OffsetsHistory, error) {
	return s.hist.List(ctx, name, limit, before)
}

// OffsetsHistoryEntry answers GET …/offsets/history/{id}.
func (s *Service) OffsetsHistoryEntry(ctx context.Context, name, id string) (api.OffsetsHistoryEntry, error) {
	return s.hist.Entry(ctx, name, id)
}

// UndoOffsets answers POST …/offsets/history/{id}/undo: it puts back the
// positions entry id moved from, on a STOPPED connector. Unless force, a
// partition the connector has moved since (by a later change, or by its
// tasks) makes it a 409 naming the partitions.
func (s *Service) UndoOffsets(ctx context.Context, name, id string, force, dryRun bool) (api.OffsetsChanges, error) {
	e, c, unlock, err := s.entryFor(ctx, name, name, id)
	if err != nil {
		return api.OffsetsChanges{}, err
	}
	defer unlock()
	if !force {
		if err := s.checkUnchangedSince(ctx, name, c, e); err != nil {
			return api.OffsetsChanges{}, err
		}
	}
	return s.changeLocked(ctx, name, c, undoChange(e, dryRun))
}

// undoChange is the change that undoes e: an alter back to the positions
// e moved from.
func undoChange(e api.OffsetsHistoryEntry, dryRun bool) Change {
	meta := Meta{Operation: api.HistoryUndo, Undoes: e.ID, Detail: fmt.Sprintf("undo of %s %s", e.Operation, e.ID)}
	return Change{Op: wire.OffsetsOpAlter, Entries: positionsOfEntry(e, true), Meta: meta, DryRun: dryRun}
}

// RestoreOffsets answers POST /sluice/connectors/{name}/offsets/restore:
// the positions an entry of req.From's history recorded (before it, by
// default, or after it) are written to name, which is STOPPED. req.From
// may be a deleted connector: that is how its positions reach a new one.
func (s *Service) RestoreOffsets(ctx context.Context, name string, req api.OffsetsRestoreRequest) (api.OffsetsChanges, error) {
	before, err := checkRestore(req)
	if err != nil {
		return api.OffsetsChanges{}, err
	}
	e, c, unlock, err := s.entryFor(ctx, name, req.From, req.Entry)
	if err != nil {
		return api.OffsetsChanges{}, err
	}
	defer unlock()
	return s.changeLocked(ctx, name, c, restoreChange(e, before, req.DryRun))
}

// checkRestore validates a restore request; before reports which of the
// entry's positions it asks for.
func checkRestore(req api.OffsetsRestoreRequest) (before bool, err error) {
	if api.TrimName(req.From) == "" {
		return false, api.Errorf(api.CodeBadRequest, "Give \"from\": the connector whose offsets history holds the positions")
	}
	switch req.Positions {
	case "", "before":
		return true, nil
	case "after":
		return false, nil
	}
	return false, api.Errorf(api.CodeBadRequest, "Invalid positions '%s': must be \"before\" (the positions the entry changed from) or \"after\" (those it changed to)", req.Positions)
}

// restoreChange is the change that writes the positions e recorded,
// before it or after.
func restoreChange(e api.OffsetsHistoryEntry, before, dryRun bool) Change {
	which := "after"
	if before {
		which = "before"
	}
	meta := Meta{Operation: api.HistoryRestore, FromEntry: e.ID,
		Detail: fmt.Sprintf("positions %s %s %s of connector %s", which, e.Operation, e.ID, e.Connector)}
	return Change{Op: wire.OffsetsOpAlter, Entries: positionsOfEntry(e, before), Meta: meta, DryRun: dryRun}
}

// entryFor reads entry id of from's history (its newest for "") for a
// change of name, and takes name's lock once name is STOPPED and of the
// entry's kind; the caller releases it with unlock.
func (s *Service) entryFor(ctx context.Context, name, from, id string) (api.OffsetsHistoryEntry, store.Connector, func(), error) {
	e, err := s.hist.Entry(ctx, from, id)
	if err != nil {
		return e, store.Connector{}, nil, err
	}
	unlock := s.cfg.Locks.Lock(name)
	c, err := s.checkStopped(name)
	if err == nil {
		err = checkEntryKind(name, s.cfg.Plugins.Type(c.Config), e)
	}
	if err != nil {
		unlock()
		return e, c, nil, err
	}
	return e, c, unlock, nil
}

// positionsOfEntry are the positions e changed from (before) or to, as the
// entries of an alter: a partition without one is removed.
func positionsOfEntry(e api.OffsetsHistoryEntry, before bool) []api.ConnectorOffset {
	out := make([]api.ConnectorOffset, 0, len(e.Changes))
	for _, ch := range e.Changes {
		at := ch.To
		if before {
			at = ch.From
		}
		out = append(out, api.ConnectorOffset{Partition: ch.Partition, Offset: at})
	}
	return out
}

// checkEntryKind refuses an entry of a source for a sink, and the reverse;
// typ is connector name's type.
func checkEntryKind(name, typ string, e api.OffsetsHistoryEntry) error {
	if typ != e.Type {
		return api.Errorf(api.CodeBadRequest, "Entry %s holds the positions of a %s connector (%s); connector %s is a %s connector", e.ID, e.Type, e.Connector, name, typ)
	}
	return nil
}

// checkUnchangedSince is the 409 of an undo whose partitions moved after
// entry e: a later applied entry changed them, or the connector's current
// positions are no longer those e wrote.
func (s *Service) checkUnchangedSince(ctx context.Context, name string, c store.Connector, e api.OffsetsHistoryEntry) error {
	later, err := s.hist.entriesAfter(ctx, name, e.ID)
	if err != nil {
		return historyReadFailed(name, err)
	}
	kind := connect.KindSource
	if e.Type == api.TypeSink {
		kind = connect.KindSink
	}
	current, err := s.read.of(ctx, name, kind, records.SinkGroupID(name, c.Config), s.topics.Own(c.Config))
	if err != nil {
		return err
	}
	stale := movedSince(e, later, current)
	if len(stale) == 0 {
		return nil
	}
	return api.Errorf(api.CodeConflict, "The positions of connector %s changed after entry %s, in partitions %s: undo with force=true to put back the entry's positions anyway",
		name, e.ID, strings.Join(stale, ", "))
}

// movedSince are the partition ids of e's changes, sorted, that a later
// entry changed or whose current positions are not those e wrote.
func movedSince(e api.OffsetsHistoryEntry, later []api.OffsetsHistoryEntry, current Positions) []string {
	touched := map[string]bool{}
	for _, ch := range e.Changes {
		touched[records.PartitionID(ch.Partition)] = true
	}
	stale := map[string]bool{}
	for _, l := range later {
		for _, ch := range l.Changes {
			if id := records.PartitionID(ch.Partition); touched[id] {
				stale[id] = true
			}
		}
	}
	for _, ch := range e.Changes {
		id := records.PartitionID(ch.Partition)
		if !sameOffset(current[id].Offset, ch.To) {
			stale[id] = true
		}
	}
	return slices.Sorted(maps.Keys(stale))
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
