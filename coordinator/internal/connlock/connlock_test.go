package connlock

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestTryLockAsksForThePassItMissed: a TryLock that found a connector's
// lock taken gets onMissed as soon as the holder releases it; a release
// nobody waited for calls nothing, nor does the TryLock holder's own.
func TestTryLockAsksForThePassItMissed(t *testing.T) {
	var missed atomic.Int32
	tab := New(func() { missed.Add(1) })
	unlock := tab.Lock("a")
	if _, ok := tab.TryLock("a"); ok {
		t.Fatal("TryLock took a lock a request holds")
	}
	unlock()
	if got := missed.Load(); got != 1 {
		t.Fatalf("releasing the lock the pass was refused called onMissed %d times, want 1", got)
	}
	tab.Lock("a")()
	if got := missed.Load(); got != 1 {
		t.Fatalf("a release nobody waited for called onMissed (%d)", got)
	}
	u, ok := tab.TryLock("a")
	if !ok {
		t.Fatal("TryLock of a free lock failed")
	}
	u()
	if got := missed.Load(); got != 1 {
		t.Fatalf("the pass's own release called onMissed (%d)", got)
	}
}

// TestLocksAreByName: different connectors never wait for each other, the
// same one does.
func TestLocksAreByName(t *testing.T) {
	tab := New(nil)
	ua := tab.Lock("a")
	done := make(chan struct{})
	go func() { tab.Lock("b")(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("connector b waited for a's lock")
	}
	got := make(chan struct{})
	go func() { tab.Lock("a")(); close(got) }()
	select {
	case <-got:
		t.Fatal("a second Lock of a did not wait")
	case <-time.After(50 * time.Millisecond):
	}
	ua()
	<-got
}

// TestLockBothInEitherOrder: two requests taking the same pair in opposite
// orders both finish.
func TestLockBothInEitherOrder(t *testing.T) {
	tab := New(nil)
	done := make(chan struct{}, 2)
	for i := 0; i < 2; i++ {
		go func() {
			for j := 0; j < 200; j++ {
				if i == 0 {
					tab.LockBoth("x", "y")()
				} else {
					tab.LockBoth("y", "x")()
				}
			}
			done <- struct{}{}
		}()
	}
	for i := 0; i < 2; i++ {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("LockBoth in opposite orders deadlocked")
		}
	}
}
