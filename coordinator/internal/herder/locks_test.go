package herder

import "testing"

// TestLockAsksForThePassItRefused: a reconcile pass that found a
// connector's lock taken (tryLock) gets another pass as soon as the holder
// releases it; a release nobody waited for asks for none.
func TestLockAsksForThePassItRefused(t *testing.T) {
	h := &Herder{kick: make(chan struct{}, 1)}
	unlock := h.lock("a")
	if _, ok := h.tryLock("a"); ok {
		t.Fatal("tryLock took a lock a request holds")
	}
	unlock()
	select {
	case <-h.kick:
	default:
		t.Fatal("releasing the lock the pass was refused asked for no pass")
	}

	unlock = h.lock("a")
	unlock()
	select {
	case <-h.kick:
		t.Fatal("a release nobody waited for asked for a pass")
	default:
	}
	unlockTry, ok := h.tryLock("a")
	if !ok {
		t.Fatal("tryLock of a free lock failed")
	}
	unlockTry()
	select {
	case <-h.kick:
		t.Fatal("the pass's own release asked for another pass")
	default:
	}
}
