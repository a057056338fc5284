package runtime

import (
	"encoding/json"

	"github.com/sluice-io/sluice/shared/records"
)

// partitionCacheSize is how many source partitions a task's partitionIDs
// remembers: a task's records mostly come from a few partitions at a time
// (one file, a handful of streams), and a linear scan of a few small maps
// is far cheaper than the JSON encoding it saves.
const partitionCacheSize = 16

// partitionIDs gives the records.PartitionID of source partitions, one
// task's, remembering the last few it computed. A source task makes a new
// partition map for every record, and encoding each one to JSON took a
// quarter of a generator's CPU; a map equal to a remembered one (the same
// keys, equal scalar values) reuses its id instead. It is not safe for
// concurrent use: the task's own goroutine uses it.
type partitionIDs struct {
	entries []partitionEntry
	next    int // the entry replaced next once the cache is full
}

// partitionEntry is one remembered partition: a copy of its map (a task
// may change the map it returned after the fact) and its id.
type partitionEntry struct {
	part map[string]any
	id   string
}

// of returns part's id.
func (p *partitionIDs) of(part map[string]any) string {
	for _, e := range p.entries {
		if samePartition(e.part, part) {
			return e.id
		}
	}
	id := records.PartitionID(part)
	cp, ok := scalarCopy(part)
	if !ok {
		return id // values that cannot be compared cheaply: not remembered
	}
	e := partitionEntry{part: cp, id: id}
	if len(p.entries) < partitionCacheSize {
		p.entries = append(p.entries, e)
		return id
	}
	p.entries[p.next] = e
	p.next = (p.next + 1) % partitionCacheSize
	return id
}

// samePartition reports whether b has exactly a's keys, each with an equal
// value; a holds only scalars (scalarCopy).
func samePartition(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		// Interface equality compares the dynamic types too: an int64 1
		// and an int 1 are not taken for the same (they encode alike, and
		// only cost a fresh encoding).
		if !ok || !isScalar(w) || v != w {
			return false
		}
	}
	return true
}

// scalarCopy copies part when every value is a scalar that == compares.
func scalarCopy(part map[string]any) (map[string]any, bool) {
	cp := make(map[string]any, len(part))
	for k, v := range part {
		if !isScalar(v) {
			return nil, false
		}
		cp[k] = v
	}
	return cp, true
}

// isScalar reports whether v is nil, a string, a bool or a number: the
// values a partition holds that == compares without panicking.
func isScalar(v any) bool {
	switch v.(type) {
	case nil, string, bool, json.Number,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return true
	}
	return false
}
