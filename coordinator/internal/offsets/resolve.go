package offsets

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/shared/records"
)

// errNotMade is the cause a resolved entry is marked failed with.
var errNotMade = errors.New("the change was not made: when the next leader resolved the entry, the partitions held the positions it changed from")

// ResolvePending marks the history entries a previous leader left pending
// (it stopped between an entry and its marker): applied when the
// connector's positions are those the change wrote, failed otherwise. The
// connectors of those entries are locked at once, so that no new change
// moves their positions first, and stay locked while it waits for as long
// as an agent may still be making such a change (an offsets call is
// bounded by the agent lease): the positions it then reads are final.
// Requests on those connectors wait meanwhile; others do not. The leader
// runs it once at the start of its term.
func (r *Recorder) ResolvePending(ctx context.Context) {
	if r.cfg.History == nil {
		return
	}
	pending, err := r.cfg.History.Pending(ctx)
	if err != nil {
		r.log.Error("offsets history: reading the pending entries failed; they stay pending until the next leader", "err", err)
		return
	}
	if len(pending) == 0 {
		return
	}
	names := map[string]bool{}
	for _, e := range pending {
		names[e.Connector] = true
	}
	// In name order: two leaders' resolutions (one deposed, one elected)
	// never take two connectors' locks in opposite orders.
	for _, name := range slices.Sorted(maps.Keys(names)) {
		unlock := r.cfg.Locks.Lock(name)
		defer unlock()
	}
	r.log.Info("offsets history: resolving the entries a previous leader left pending", "entries", len(pending), "connectors", len(names))
	select {
	case <-ctx.Done():
		return
	case <-r.cfg.Clock.After(min(CallTimeout, r.cfg.AgentLease)):
	}
	for _, e := range pending {
		if ctx.Err() != nil {
			return
		}
		r.resolveEntry(ctx, e)
	}
}

// resolveEntry marks one pending entry; the caller holds its connector's
// lock.
func (r *Recorder) resolveEntry(ctx context.Context, e api.OffsetsHistoryEntry) {
	kind, group := connect.KindSource, e.Group
	if e.Type == api.TypeSink {
		kind = connect.KindSink
		if c, ok := r.cfg.Connectors.Get(e.Connector); ok && group == "" {
			group = records.SinkGroupID(e.Connector, c.Config)
		}
	}
	cause := errNotMade
	if e.Error == "" { // an entry whose parts are not all there was never followed by its change
		current, err := r.read.of(ctx, e.Connector, kind, group, e.OffsetsTopic)
		if err != nil {
			r.log.Error("offsets history: reading the positions of a pending entry failed; it stays pending", "connector", e.Connector, "entry", e.ID, "err", err)
			return
		}
		if applied(current, e.Changes) {
			cause = nil
		}
	}
	if err := r.cfg.History.Finish(ctx, e, cause); err != nil {
		r.log.Error("offsets history: marking a pending entry failed; it stays pending", "connector", e.Connector, "entry", e.ID, "err", err)
		return
	}
	r.log.Info("offsets history: resolved an entry a previous leader left pending", "connector", e.Connector, "entry", e.ID, "applied", cause == nil)
}

// applied reports whether current holds what changes wrote. A change that
// wrote nothing different (every partition already there) counts as made.
func applied(current Positions, changes []api.OffsetChange) bool {
	for _, ch := range changes {
		if !sameOffset(current[records.PartitionID(ch.Partition)].Offset, ch.To) {
			return false
		}
	}
	return true
}
