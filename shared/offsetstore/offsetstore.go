// Package offsetstore follows the offsets topic and answers what a
// connector's source partitions are committed at. Agents read a task's
// starting offsets from it; the coordinator serves GET …/offsets from it.
//
// Partitions are identified by decoded value (records.PartitionID), not by
// key bytes: Kafka Connect writes partition maps in hash order and Sluice in
// sorted order, so one partition can have several raw keys. The store keeps
// every raw key it has seen, so that a reset can tombstone them all.
package offsetstore

import (
	"context"
	"sort"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkalog"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// Entry is one source partition of a connector.
type Entry struct {
	Partition map[string]any
	// Offset is the latest committed offset; nil when the latest record is
	// a tombstone.
	Offset map[string]any
	// RawKeys are every key encoding of this partition seen in the topic
	// (in either topic, for a merged View).
	RawKeys []string
	// Live says a topic holds an offset for the partition: Offset != nil
	// for one topic; for a View, either topic's, though Offset is the
	// connector topic's alone (Kafka Connect's merge, see View).
	Live bool
}

type entry struct {
	partition map[string]any
	offset    map[string]any
	rawKeys   map[string]bool
}

// Store is the followed offsets topic.
type Store struct {
	topic string
	log   *kafkalog.Log
	mu    sync.RWMutex
	// byConn: connector → partition id → entry.
	byConn map[string]map[string]*entry
}

// New makes a store following topic; call Start before use.
func New(topic string, opts ...kgo.Opt) (*Store, error) {
	s := &Store{topic: topic, byConn: map[string]map[string]*entry{}}
	log, err := kafkalog.New(topic, s.apply, opts...)
	if err != nil {
		return nil, err
	}
	s.log = log
	return s, nil
}

func (s *Store) apply(r *kgo.Record) {
	conn, part, ok := records.DecodeOffsetKey(r.Key)
	if !ok {
		return
	}
	off, err := records.DecodeOffsetValue(r.Value)
	if err != nil {
		return
	}
	id := records.PartitionID(part)
	s.mu.Lock()
	defer s.mu.Unlock()
	parts := s.byConn[conn]
	if parts == nil {
		parts = map[string]*entry{}
		s.byConn[conn] = parts
	}
	e := parts[id]
	if e == nil {
		e = &entry{partition: part, rawKeys: map[string]bool{}}
		parts[id] = e
	}
	e.rawKeys[string(r.Key)] = true
	e.offset = off
}

// Topic is the offsets topic the store follows.
func (s *Store) Topic() string { return s.topic }

// Start follows the topic and returns once it has read to its end.
func (s *Store) Start(ctx context.Context) error {
	s.log.Start()
	return s.log.ReadToEnd(ctx)
}

// ReadToEnd waits until every committed write made so far is applied.
func (s *Store) ReadToEnd(ctx context.Context) error { return s.log.ReadToEnd(ctx) }

// Close stops following.
func (s *Store) Close() { s.log.Close() }

// Offset returns the committed offset of one partition, or nil.
func (s *Store) Offset(connector string, partition map[string]any) map[string]any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.byConn[connector][records.PartitionID(partition)]; e != nil {
		return e.offset
	}
	return nil
}

// Entries returns every partition ever seen for connector, tombstoned ones
// included (with a nil Offset), sorted by partition id.
func (s *Store) Entries(connector string) []Entry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ids := make([]string, 0, len(s.byConn[connector]))
	for id := range s.byConn[connector] {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]Entry, 0, len(ids))
	for _, id := range ids {
		e := s.byConn[connector][id]
		keys := make([]string, 0, len(e.rawKeys))
		for k := range e.rawKeys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out = append(out, Entry{Partition: e.partition, Offset: e.offset, RawKeys: keys, Live: e.offset != nil})
	}
	return out
}

// Replace returns the records that replace every offset of one connector,
// whose entries are given, with writes: a tombstone for every key of every
// partition that holds an offset, unless writes name that key, then writes.
// With no writes it is a reset. The coordinator and the agent both build
// replacements with it, so both mean the same by a reset.
func Replace(entries []Entry, writes []wire.OffsetWrite) []wire.OffsetWrite {
	named := make(map[string]bool, len(writes))
	for _, w := range writes {
		named[w.Key] = true
	}
	var out []wire.OffsetWrite
	for _, e := range entries {
		if !e.Live {
			continue
		}
		for _, k := range e.RawKeys {
			if !named[k] {
				out = append(out, wire.OffsetWrite{Key: k})
			}
		}
	}
	return append(out, writes...)
}
