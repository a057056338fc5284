package herder

import (
	"context"
	"slices"
	"sort"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/offsetval"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/records"
)

// positions are a connector's current positions by partition id
// (records.PartitionID of the partition map): source offsets, or a sink's
// committed group offsets in GET …/offsets' form.
type positions map[string]v1.ConnectorOffset

// positionsOf reads name's current positions: a source's from the offsets
// topics (read to their end first; topic is its own, "" for none), a
// sink's from its consumer group.
func (h *Herder) positionsOf(ctx context.Context, name string, kind connect.Kind, group, topic string) (positions, error) {
	out := positions{}
	if kind == connect.KindSink {
		cur, err := h.sinkOffsets(ctx, name, group)
		if err != nil {
			return nil, err
		}
		for _, o := range cur.Offsets {
			out[records.PartitionID(o.Partition)] = o
		}
		return out, nil
	}
	view, release, err := h.sourceView(ctx, name, topic, "Failed to retrieve offsets for source connector %s")
	defer release()
	if err != nil {
		return nil, err
	}
	return sourcePositions(view.Entries(name)), nil
}

// sourcePositions are the positions of a source connector's stored
// offsets entries.
func sourcePositions(stored []offsetstore.Entry) positions {
	out := positions{}
	for _, e := range stored {
		if e.Offset != nil {
			out[records.PartitionID(e.Partition)] = v1.ConnectorOffset{Partition: e.Partition, Offset: e.Offset}
		}
	}
	return out
}

// sorted lists p's positions in the order of their partition ids.
func (p positions) sorted() []v1.ConnectorOffset {
	out := make([]v1.ConnectorOffset, 0, len(p))
	for _, k := range sortedKeys(p) {
		out = append(out, p[k])
	}
	return out
}

// changesTo are the changes that writing entries makes over p: each entry's
// partition from its current position to the entry's offset.
func (p positions) changesTo(entries []v1.ConnectorOffset) []v1.OffsetChange {
	out := make([]v1.OffsetChange, 0, len(entries))
	for _, e := range entries {
		out = append(out, v1.OffsetChange{Partition: e.Partition, From: p[records.PartitionID(e.Partition)].Offset, To: e.Offset})
	}
	return out
}

// replacedBy are the changes of replacing every position of p with
// entries: those of changesTo, and every other partition of p removed.
func (p positions) replacedBy(entries []v1.ConnectorOffset) []v1.OffsetChange {
	out := p.changesTo(entries)
	named := map[string]bool{}
	for _, e := range entries {
		named[records.PartitionID(e.Partition)] = true
	}
	for _, k := range sortedKeys(p) {
		if !named[k] {
			out = append(out, v1.OffsetChange{Partition: p[k].Partition, From: p[k].Offset})
		}
	}
	return out
}

// sinkEntries are parsed sink offsets in GET …/offsets' form, so that a
// partition is named one way (kafka_partition a number) whatever form the
// request gave it.
func sinkEntries(parsed []offsetval.SinkOffset) []v1.ConnectorOffset {
	parsed = slices.Clone(parsed)
	sort.SliceStable(parsed, func(i, j int) bool {
		a, b := parsed[i], parsed[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	out := make([]v1.ConnectorOffset, 0, len(parsed))
	for _, o := range parsed {
		e := v1.ConnectorOffset{Partition: map[string]any{"kafka_topic": o.Topic, "kafka_partition": o.Partition}}
		if o.Offset != nil {
			e.Offset = map[string]any{"kafka_offset": *o.Offset}
		}
		out = append(out, e)
	}
	return out
}
