package offsets

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"sort"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/offsetval"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/records"
)

// Positions are a connector's current positions by partition id
// (records.PartitionID of the partition map): source offsets, or a sink's
// committed group offsets in GET …/offsets' form.
type Positions map[string]api.ConnectorOffset

// reader reads positions through the Reader port and turns its failures
// into the REST answers.
type reader struct {
	r   Reader
	log *slog.Logger
}

// Positions reads name's current positions: a source's from the offsets
// topics (read to their end first; topic is its own, "" for none), a
// sink's from its consumer group.
func (s *Service) Positions(ctx context.Context, name string, kind connect.Kind, group, topic string) (Positions, error) {
	return s.read.of(ctx, name, kind, group, topic)
}

func (r reader) of(ctx context.Context, name string, kind connect.Kind, group, topic string) (Positions, error) {
	out := Positions{}
	if kind == connect.KindSink {
		cur, err := r.sink(ctx, name, group)
		if err != nil {
			return nil, err
		}
		for _, o := range cur.Offsets {
			out[records.PartitionID(o.Partition)] = o
		}
		return out, nil
	}
	stored, _, err := r.source(ctx, name, topic, "Failed to retrieve offsets for source connector %s")
	if err != nil {
		return nil, err
	}
	return sourcePositions(stored), nil
}

// sink is a sink connector's committed offsets in GET …/offsets' form.
func (r reader) sink(ctx context.Context, name, group string) (api.ConnectorOffsets, error) {
	resp, err := r.r.GroupOffsets(ctx, group)
	if err != nil {
		r.log.Error("fetching group offsets failed", "connector", name, "group", group, "err", err)
		return api.ConnectorOffsets{}, api.Errorf(api.CodeInternal, "Failed to retrieve consumer group offsets for sink connector %s", name)
	}
	out := api.ConnectorOffsets{Offsets: []api.ConnectorOffset{}}
	for _, o := range resp.Sorted() {
		if o.At < 0 {
			continue
		}
		out.Offsets = append(out.Offsets, api.ConnectorOffset{
			Partition: map[string]any{"kafka_topic": o.Topic, "kafka_partition": o.Partition},
			Offset:    map[string]any{"kafka_offset": o.At},
		})
	}
	return out, nil
}

// source is a source connector's offsets entries, read to the end of the
// worker's topic and of topic (its own, "" for none), with the connector
// topic they name; a failure is answered as viewFailed says.
func (r reader) source(ctx context.Context, name, topic, failure string) ([]offsetstore.Entry, string, error) {
	stored, connectorTopic, err := r.r.SourceEntries(ctx, name, topic)
	if err != nil {
		return nil, "", viewFailed(r.log, name, topic, failure, err)
	}
	return stored, connectorTopic, nil
}

// sourcePositions are the positions of a source connector's stored
// offsets entries.
func sourcePositions(stored []offsetstore.Entry) Positions {
	out := Positions{}
	for _, e := range stored {
		if e.Offset != nil {
			out[records.PartitionID(e.Partition)] = api.ConnectorOffset{Partition: e.Partition, Offset: e.Offset}
		}
	}
	return out
}

// Sorted lists p's positions in the order of their partition ids.
func (p Positions) Sorted() []api.ConnectorOffset {
	out := make([]api.ConnectorOffset, 0, len(p))
	for _, k := range slices.Sorted(maps.Keys(p)) {
		out = append(out, p[k])
	}
	return out
}

// changesTo are the changes that writing entries makes over p: each entry's
// partition from its current position to the entry's offset.
func (p Positions) changesTo(entries []api.ConnectorOffset) []api.OffsetChange {
	out := make([]api.OffsetChange, 0, len(entries))
	for _, e := range entries {
		out = append(out, api.OffsetChange{Partition: e.Partition, From: p[records.PartitionID(e.Partition)].Offset, To: e.Offset})
	}
	return out
}

// ReplacedBy are the changes of replacing every position of p with
// entries: those of writing entries, and every other partition of p
// removed.
func (p Positions) ReplacedBy(entries []api.ConnectorOffset) []api.OffsetChange {
	out := p.changesTo(entries)
	named := map[string]bool{}
	for _, e := range entries {
		named[records.PartitionID(e.Partition)] = true
	}
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if !named[k] {
			out = append(out, api.OffsetChange{Partition: p[k].Partition, From: p[k].Offset})
		}
	}
	return out
}

// SinkEntries are parsed sink offsets in GET …/offsets' form, so that a
// partition is named one way (kafka_partition a number) whatever form the
// request gave it.
func SinkEntries(parsed []offsetval.SinkOffset) []api.ConnectorOffset {
	parsed = slices.Clone(parsed)
	sort.SliceStable(parsed, func(i, j int) bool {
		a, b := parsed[i], parsed[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	out := make([]api.ConnectorOffset, 0, len(parsed))
	for _, o := range parsed {
		e := api.ConnectorOffset{Partition: map[string]any{"kafka_topic": o.Topic, "kafka_partition": o.Partition}}
		if o.Offset != nil {
			e.Offset = map[string]any{"kafka_offset": *o.Offset}
		}
		out = append(out, e)
	}
	return out
}

// Numbered gives offsets' numbers the JSON form a REST request has, so
// that positions read from Kafka go through the checks of a client's
// offsets.
func Numbered(offsets []api.ConnectorOffset) ([]api.ConnectorOffset, error) {
	b, err := json.Marshal(offsets)
	if err != nil {
		return nil, err
	}
	var out []api.ConnectorOffset
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return out, dec.Decode(&out)
}
