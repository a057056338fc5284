// Package connlock serialises the changes of one connector: every request
// that changes a connector (its config, target state, offsets, name) and
// the reconcile pass that acts on it take the connector's lock, so they
// apply one at a time, while different connectors never wait for each
// other. It knows nothing of what the changes are.
package connlock

import (
	"sync"
	"sync/atomic"
)

// Table holds one lock per connector name; the zero value is not usable,
// use New.
type Table struct {
	locks sync.Map // connector name → *entry
	// missed is called when a lock that a TryLock found taken is released:
	// whoever tried wants another go.
	missed func()
}

type entry struct {
	mu sync.Mutex
	// missed: a TryLock found the lock taken since the holder took it.
	missed atomic.Bool
}

// New makes a Table; onMissed (nil: nothing) runs as a lock is released
// that a TryLock found taken meanwhile.
func New(onMissed func()) *Table {
	if onMissed == nil {
		onMissed = func() {}
	}
	return &Table{missed: onMissed}
}

// Lock takes name's lock, waiting for it, and returns its release.
func (t *Table) Lock(name string) (unlock func()) {
	e := t.entry(name)
	e.mu.Lock()
	return func() { t.unlock(e) }
}

// TryLock takes name's lock if it is free. The reconcile loop uses it: a
// request holding a lock for long (a create rolling back) must not stop
// the loop, which also notices lost agents. When the lock is taken, its
// holder calls onMissed as it releases it, so that what the caller skipped
// (the task configs of a connector being resumed) is done at once rather
// than at its next tick.
func (t *Table) TryLock(name string) (unlock func(), ok bool) {
	e := t.entry(name)
	// Set before trying: a holder that releases the lock after this
	// attempt failed sees it.
	e.missed.Store(true)
	if !e.mu.TryLock() {
		return nil, false
	}
	e.missed.Store(false)
	return func() { t.unlock(e) }, true
}

// LockBoth takes the locks of a and b in a fixed order (by name), so that
// two requests that take the same two never wait for each other; a and b
// differ.
func (t *Table) LockBoth(a, b string) (unlock func()) {
	if b < a {
		a, b = b, a
	}
	ua, ub := t.Lock(a), t.Lock(b)
	return func() { ub(); ua() }
}

func (t *Table) unlock(e *entry) {
	e.mu.Unlock()
	if e.missed.Swap(false) {
		t.missed()
	}
}

func (t *Table) entry(name string) *entry {
	m, _ := t.locks.LoadOrStore(name, &entry{})
	return m.(*entry)
}
