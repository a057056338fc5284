// Package javahash reproduces the iteration order of java.util.HashMap and
// HashSet, so that text Kafka builds by walking one (a map's toString, a
// message joining a set) comes out in the same order in Sluice.
//
// A HashMap walks its table bucket by bucket; a bucket holds its keys in the
// order they were put (a resize splits a bucket without reordering it). The
// bucket of a key is its spread hash code modulo the table's size, which
// starts at 16 and doubles whenever the map holds more than three quarters
// of its size — or when one bucket would hold a ninth key while the table
// is smaller than 64. A bucket Java turns into a tree (nine or more keys in
// a table of 64 or more, which takes deliberately colliding keys) is walked
// here in insertion order, where Java may start it with another key.
package javahash

import (
	"cmp"
	"slices"
	"unicode/utf16"
)

// String is Java's String.hashCode: s[0]·31^(n-1) + … + s[n-1] over the
// UTF-16 code units, in 32-bit arithmetic.
func String(s string) int32 {
	var h int32
	for _, r := range s {
		if r > 0xffff {
			// Beyond the Basic Multilingual Plane: two code units.
			r1, r2 := utf16.EncodeRune(r)
			h = 31*(31*h+r1) + r2
			continue
		}
		h = 31*h + r
	}
	return h
}

// Long is Java's Long.hashCode.
func Long(v int64) int32 { return int32(v ^ int64(uint64(v)>>32)) }

// Bool is Java's Boolean.hashCode.
func Bool(b bool) int32 {
	if b {
		return 1231
	}
	return 1237
}

// spread is HashMap.hash: the high half folded into the low half, so that
// small tables see the high bits too.
func spread(h int32) int32 { return h ^ int32(uint32(h)>>16) }

// Order returns the order in which a HashMap created with new HashMap<>()
// iterates keys whose hash codes are hashes, put in that order (each key
// once): indices into hashes.
func Order(hashes []int32) []int {
	order, _ := OrderFrom(defaultCapacity, hashes)
	return order
}

// OrderFrom is Order for a map whose table already has capacity buckets —
// a HashMap that held more keys before it was cleared keeps its table, so a
// long-lived map's order depends on its past. It also returns the table's
// size after the puts, to carry to the map's next life.
func OrderFrom(capacity int, hashes []int32) ([]int, int) {
	capacity = tableSize(max(capacity, defaultCapacity), hashes)
	mask := capacity - 1
	order := make([]int, len(hashes))
	for i := range order {
		order[i] = i
	}
	// By bucket; a stable sort keeps bucket-mates in insertion order.
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(int(spread(hashes[a]))&mask, int(spread(hashes[b]))&mask)
	})
	return order, capacity
}

const (
	defaultCapacity  = 16
	treeifyThreshold = 8
	minTreeCapacity  = 64
)

// tableSize replays the puts into a table of capacity buckets to find the
// table's final size: doubled when the map grows past three quarters of it,
// and when a put makes a bucket's ninth entry in a table too small to hold
// trees.
func tableSize(capacity int, hashes []int32) int {
	counts := make([]int, capacity)
	recount := func(n int) {
		capacity *= 2
		counts = make([]int, capacity)
		for _, h := range hashes[:n] {
			counts[int(spread(h))&(capacity-1)]++
		}
	}
	for n, h := range hashes {
		b := int(spread(h)) & (capacity - 1)
		counts[b]++
		if counts[b] > treeifyThreshold && capacity < minTreeCapacity {
			recount(n + 1)
		}
		if n+1 > capacity*3/4 {
			recount(n + 1)
		}
	}
	return capacity
}
