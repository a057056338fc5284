package javahash

import (
	"strconv"
	"strings"
	"testing"
)

// The expected orders are what Java 17's HashMap iterates, keys put in
// the order given.

func TestOrderStrings(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{
		{1, "0"},
		{12, "6,7,8,9,10,11,0,1,2,3,4,5"},    // 12 fit a table of 16
		{13, "10,12,11,0,1,2,3,4,5,6,7,8,9"}, // the 13th resizes to 32
		{24, "10,21,20,12,23,11,22,14,13,0,16,1,15,2,18,3,17,4,5,19,6,7,8,9"},
		{25, "10,12,11,14,13,0,16,1,15,2,18,3,17,4,5,19,6,7,8,9,21,20,23,22,24"},
		{48, "30,10,32,31,12,34,11,33,14,36,13,35,0,16,38,1,15,37,2,18,3,17,39,4,5,19,6,7,8,9,41,40,21,43,20,42,23,45,22,44,25,47,24,46,27,26,29,28"},
		{49, "10,12,11,14,13,0,16,1,15,2,18,3,17,4,5,19,6,7,8,9,21,20,23,22,25,24,27,26,29,28,30,32,31,34,33,36,35,38,37,39,41,40,43,42,45,44,47,46,48"},
		{100, "94,93,96,95,10,98,97,12,11,99,14,13,16,15,18,17,19,21,20,23,22,25,24,27,26,29,28,30,32,31,34,33,36,35,38,37,39,41,40,43,42,45,44,47,46,49,48,50,52,51,54,53,56,55,58,57,0,1,59,2,3,4,5,6,7,8,9,61,60,63,62,65,64,67,66,69,68,70,72,71,74,73,76,75,78,77,79,81,80,83,82,85,84,87,86,89,88,90,92,91"},
	} {
		hashes := make([]int32, tt.n)
		for i := range hashes {
			hashes[i] = String("f" + strconv.Itoa(i))
		}
		if got := join(Order(hashes)); got != tt.want {
			t.Errorf("%d keys f0…: %s\nwant %s", tt.n, got, tt.want)
		}
	}
}

// TestOrderCollisions uses Integer keys (their hash code is their value):
// a bucket's ninth key doubles a table smaller than 64 instead of making
// the bucket a tree, and bucket-mates keep their insertion order.
func TestOrderCollisions(t *testing.T) {
	for _, tt := range []struct {
		keys []int32
		want string
	}{
		{[]int32{0, 16, 32, 48, 64, 80, 96, 112, 128}, "0,2,4,6,8,1,3,5,7"},
		{[]int32{0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208}, "0,2,4,6,8,10,12,1,3,5,7,9,11,13"},
		{[]int32{128, 112, 96, 80, 64, 48, 32, 16, 0, 1}, "0,2,4,6,8,9,1,3,5,7"},
		{[]int32{-1, 65536, -65536, 7, 23, 1 << 20}, "0,5,1,3,4,2"},
	} {
		if got := join(Order(tt.keys)); got != tt.want {
			t.Errorf("%v: %s, want %s", tt.keys, got, tt.want)
		}
	}
}

func TestHashCodes(t *testing.T) {
	for _, tt := range []struct {
		got, want int32
	}{
		{String(""), 0},
		{String("Aa"), String("BB")},
		{String("hello"), 99162322},
		{String("😀"), 1772899}, // a surrogate pair: two UTF-16 units
		{String("é"), 233},
		{Long(-1), 0},
		{Long(1 << 32), 1},
		{Long(-4294967296), -1},
		{Bool(true), 1231},
		{Bool(false), 1237},
	} {
		if tt.got != tt.want {
			t.Errorf("hash %d, want %d", tt.got, tt.want)
		}
	}
}

func join(order []int) string {
	s := make([]string, len(order))
	for i, n := range order {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// TestOrderFrom: a map cleared after growing to 32 buckets keeps them, so
// twelve keys f0… come out as they do among thirteen (TestOrderStrings's
// Java order with f12 taken out), not as in a fresh map.
func TestOrderFrom(t *testing.T) {
	hashes := make([]int32, 13)
	for i := range hashes {
		hashes[i] = String("f" + strconv.Itoa(i))
	}
	order, capacity := OrderFrom(16, hashes)
	if got := join(order); capacity != 32 || got != "10,12,11,0,1,2,3,4,5,6,7,8,9" {
		t.Fatalf("13 keys: %s in %d buckets", got, capacity)
	}
	order, capacity = OrderFrom(capacity, hashes[:12])
	if got := join(order); capacity != 32 || got != "10,11,0,1,2,3,4,5,6,7,8,9" {
		t.Errorf("12 keys after a clear: %s in %d buckets", got, capacity)
	}
	if order, capacity = OrderFrom(0, hashes[:12]); join(order) != join(Order(hashes[:12])) || capacity != 16 {
		t.Errorf("a fresh map: %s in %d buckets", join(order), capacity)
	}
}
