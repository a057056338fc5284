package converters

import "sync"

// lru is a cache of at most max entries keyed by byte strings, which drops
// the least recently used entry to make room, as Kafka's LRUCache does (a
// LinkedHashMap in access order). It is safe for concurrent use, as Kafka
// wraps its converters' caches in a SynchronizedCache. Keys are looked up
// as []byte so that a lookup copies nothing; a key is copied once, when it
// is added.
type lru[V any] struct {
	mu  sync.Mutex
	max int
	m   map[string]*lruEntry[V]
	// root links the entries in a ring, most recently used first:
	// root.next is the newest, root.prev the eldest.
	root lruEntry[V]
}

type lruEntry[V any] struct {
	key        string
	value      V
	prev, next *lruEntry[V]
}

// newLRU is a cache of max entries; nil when max < 1, which caches nothing
// (Kafka's LRUCache of such a size drops every entry as it is put).
func newLRU[V any](max int) *lru[V] {
	if max < 1 {
		return nil
	}
	c := &lru[V]{max: max, m: make(map[string]*lruEntry[V])}
	c.root.prev, c.root.next = &c.root, &c.root
	return c
}

// get is key's value, which becomes the most recently used.
func (c *lru[V]) get(key []byte) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[string(key)]
	if !ok {
		var zero V
		return zero, false
	}
	c.unlink(e)
	c.pushFront(e)
	return e.value, true
}

// add sets key's value, the most recently used, and drops the eldest entry
// when the cache is over its size. Another goroutine may have added the
// same key since a get missed: the value is then replaced.
func (c *lru[V]) add(key []byte, value V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[string(key)]; ok {
		e.value = value
		c.unlink(e)
		c.pushFront(e)
		return
	}
	e := &lruEntry[V]{key: string(key), value: value}
	c.m[e.key] = e
	c.pushFront(e)
	if len(c.m) > c.max {
		eldest := c.root.prev
		c.unlink(eldest)
		delete(c.m, eldest.key)
	}
}

// len is the number of entries.
func (c *lru[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func (c *lru[V]) unlink(e *lruEntry[V]) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (c *lru[V]) pushFront(e *lruEntry[V]) {
	e.prev, e.next = &c.root, c.root.next
	c.root.next.prev = e
	c.root.next = e
}
