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

import "unicode/utf16"

// String is Java's String.hashCode: s[0]·31^(n-1) + … + s[n-1] over the
// UTF-16 code units, in 32-bit arithmetic.
func String(s string) int32 {
	var h int32
	for _, c := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(c)
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
	capacity := tableSize(hashes)
	buckets := make([][]int, capacity)
	for i, h := range hashes {
		b := int(spread(h)) & (capacity - 1)
		buckets[b] = append(buckets[b], i)
	}
	out := make([]int, 0, len(hashes))
	for _, b := range buckets {
		out = append(out, b...)
	}
	return out
}

const (
	defaultCapacity  = 16
	treeifyThreshold = 8
	minTreeCapacity  = 64
)

// tableSize replays the puts to find the table's final size: doubled when
// the map grows past three quarters of it, and when a put makes a bucket's
// ninth entry in a table too small to hold trees.
func tableSize(hashes []int32) int {
	capacity := defaultCapacity
	counts := map[int]int{}
	recount := func(n int) {
		capacity *= 2
		counts = map[int]int{}
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
