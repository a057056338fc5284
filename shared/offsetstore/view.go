package offsetstore

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/sluice-io/sluice/shared/records"
)

// View is a source connector's offsets as Kafka Connect 4.4 sees them when
// the connector may have an offsets topic of its own (KIP-618's
// offsets.storage.topic): the worker's topic, and the connector's topic
// when it names one other than the worker's.
//
// Kafka Connect reads a partition from both topics and lets the
// connector's topic win — including when it has no offset there: its merge
// takes the connector store's answer for every key asked, absent ones as
// null, so a partition that only the worker's topic holds reads as no
// offset. Tasks therefore start such a partition from nothing, and GET
// …/offsets lists it with a null offset. Sluice does the same, so that a
// connector moved from Kafka Connect starts where it would have there.
type View struct {
	Worker *Store
	// Connector is the connector's own topic; nil when it has none (or
	// names the worker's).
	Connector *Store
}

// ReadToEnd reads both topics to their end.
func (v View) ReadToEnd(ctx context.Context) error {
	if err := v.Worker.ReadToEnd(ctx); err != nil {
		return fmt.Errorf("read offsets topic %s: %w", v.Worker.Topic(), err)
	}
	if v.Connector != nil {
		if err := v.Connector.ReadToEnd(ctx); err != nil {
			return fmt.Errorf("read offsets topic %s: %w", v.Connector.Topic(), err)
		}
	}
	return nil
}

// ConnectorTopic is the connector's own offsets topic, or "" when it has
// none.
func (v View) ConnectorTopic() string {
	if v.Connector == nil {
		return ""
	}
	return v.Connector.Topic()
}

// Offset is the offset a task of connector starts partition from.
func (v View) Offset(connector string, partition map[string]any) map[string]any {
	if v.Connector != nil {
		return v.Connector.Offset(connector, partition)
	}
	return v.Worker.Offset(connector, partition)
}

// Entries lists connector's partitions as Merge does.
func (v View) Entries(connector string) []Entry {
	if v.Connector == nil {
		return v.Worker.Entries(connector)
	}
	return Merge(v.Worker.Entries(connector), v.Connector.Entries(connector))
}

// Merge combines a connector's entries of the worker's topic with those of
// its own topic: every partition of either, with the raw keys of both (a
// reset tombstones them in both), live when either topic holds an offset,
// and the offset of the connector's topic alone (see View).
func Merge(worker, connector []Entry) []Entry {
	byID := map[string]*Entry{}
	add := func(e Entry, own bool) {
		id := records.PartitionID(e.Partition)
		m := byID[id]
		if m == nil {
			m = &Entry{Partition: e.Partition}
			byID[id] = m
		}
		m.RawKeys = appendNew(m.RawKeys, e.RawKeys)
		m.Live = m.Live || e.Live
		if own {
			m.Offset = e.Offset
		}
	}
	for _, e := range worker {
		add(e, false)
	}
	for _, e := range connector {
		add(e, true)
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]Entry, 0, len(ids))
	for _, id := range ids {
		e := byID[id]
		sort.Strings(e.RawKeys)
		out = append(out, *e)
	}
	return out
}

func appendNew(dst, src []string) []string {
	for _, s := range src {
		if !slices.Contains(dst, s) {
			dst = append(dst, s)
		}
	}
	return dst
}
