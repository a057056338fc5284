package converters

import "testing"

func TestLRUDropsTheLeastRecentlyUsed(t *testing.T) {
	c := newLRU[int](3)
	for i, k := range []string{"a", "b", "c"} {
		c.add([]byte(k), i)
	}
	if _, ok := c.get([]byte("a")); !ok { // a is now the most recent
		t.Fatal("a missing before the cache is full")
	}
	c.add([]byte("d"), 3)
	if c.len() != 3 {
		t.Fatalf("len = %d, want 3", c.len())
	}
	if _, ok := c.get([]byte("b")); ok {
		t.Error("b, the least recently used, was kept")
	}
	for _, kv := range []struct {
		k    string
		want int
	}{{"c", 2}, {"a", 0}, {"d", 3}} { // recency, least first: c, a, d
		if v, ok := c.get([]byte(kv.k)); !ok || v != kv.want {
			t.Errorf("get(%s) = %d, %v; want %d", kv.k, v, ok, kv.want)
		}
	}
	// Replacing a key's value adds no entry and makes it the most recent.
	c.add([]byte("c"), 10)
	c.add([]byte("e"), 4)
	if v, ok := c.get([]byte("c")); !ok || v != 10 || c.len() != 3 {
		t.Errorf("after replacing c: get(c) = %d, %v; len %d", v, ok, c.len())
	}
	if _, ok := c.get([]byte("a")); ok {
		t.Error("a, now the least recently used, was kept")
	}
}

func TestLRUKeyIsCopied(t *testing.T) {
	c := newLRU[string](2)
	key := []byte("k1")
	c.add(key, "one")
	key[1] = '2' // the caller reuses its buffer
	if _, ok := c.get([]byte("k2")); ok {
		t.Error("the cache kept the caller's buffer as its key")
	}
	if v, ok := c.get([]byte("k1")); !ok || v != "one" {
		t.Errorf("get(k1) = %q, %v", v, ok)
	}
}

func TestLRUSizeBelowOneCachesNothing(t *testing.T) {
	for _, size := range []int{0, -1} {
		if c := newLRU[int](size); c != nil {
			t.Errorf("newLRU(%d) = %v, want no cache", size, c)
		}
	}
	if c := newLRU[int](1); c == nil {
		t.Error("newLRU(1) is no cache")
	}
}
