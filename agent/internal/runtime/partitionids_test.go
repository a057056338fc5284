package runtime

import (
	"encoding/json"
	"testing"

	"github.com/sluice-io/sluice/shared/records"
)

// TestPartitionIDs: a remembered partition's id is reused for an equal map,
// and never for a map that differs, was changed after the fact, or holds
// values == cannot compare; every answer is records.PartitionID's.
func TestPartitionIDs(t *testing.T) {
	var p partitionIDs
	check := func(part map[string]any) {
		t.Helper()
		if got, want := p.of(part), records.PartitionID(part); got != want {
			t.Errorf("of(%v) = %s, want %s", part, got, want)
		}
	}
	a := map[string]any{"filename": "/a", "n": int64(1)}
	check(a)
	check(map[string]any{"filename": "/a", "n": int64(1)}) // equal, a new map
	check(map[string]any{"filename": "/a", "n": int64(2)}) // a value differs
	check(map[string]any{"filename": "/a"})                // a key fewer
	check(map[string]any{"filename": "/a", "m": int64(1)}) // another key
	check(map[string]any{"filename": "/a", "n": 1})        // an int, not an int64
	check(map[string]any{"filename": "/a", "n": json.Number("1")})
	a["filename"] = "/b" // the task changed the map it returned
	check(a)
	check(map[string]any{"nested": map[string]any{"x": 1}})
	check(map[string]any{"nested": map[string]any{"x": 2}})
	check(map[string]any{"list": []any{1}})
	check(nil)
	// More partitions than the cache holds, twice round.
	for range 2 {
		for i := range 3 * partitionCacheSize {
			check(map[string]any{"stream": int64(i)})
		}
	}
	if len(p.entries) != partitionCacheSize {
		t.Errorf("cache holds %d entries, want %d", len(p.entries), partitionCacheSize)
	}
}

// BenchmarkPartitionID compares a fresh encoding per record with the
// cache, for a generator's one-stream partition (each record's map is a
// new one with the same content, made before the loop).
func BenchmarkPartitionID(b *testing.B) {
	parts := make([]map[string]any, 1024)
	for i := range parts {
		parts[i] = map[string]any{"stream": int64(0)}
	}
	b.Run("encode", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = records.PartitionID(parts[i%len(parts)])
		}
	})
	b.Run("cached", func(b *testing.B) {
		var p partitionIDs
		for i := 0; b.Loop(); i++ {
			_ = p.of(parts[i%len(parts)])
		}
	})
}
