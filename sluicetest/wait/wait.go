// Package wait is the waiting part of the test kit (package sluicetest),
// on the standard library alone so that any package's tests can use it,
// the unit tests of the packages the kit's clusters are made of too:
// Eventually polls until something happens, Consistently checks that
// something does not happen during a window, and Hold keeps a fault in
// place for a given time — the only sleep a test may have.
package wait

import (
	"time"
)

// PollInterval is how often Eventually and Consistently ask their
// condition again.
const PollInterval = 50 * time.Millisecond

// T is what the kit's helpers need of a test: *testing.T, *testing.B and
// testing.TB satisfy it.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Eventually polls cond every PollInterval until it holds or timeout
// passes, then fails the test with cond's last explanation. It is the
// kit's one way to wait for something to happen: never sleep for it.
func Eventually(t T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var why string
	for {
		var ok bool
		if ok, why = cond(); ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not true after %v: %s", timeout, why)
		}
		time.Sleep(PollInterval)
	}
}

// Consistently checks cond every PollInterval for the whole of d and fails
// the test the first time it does not hold. It is for asserting that
// something does not happen (a task restart) within a window in which it
// would.
func Consistently(t T, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if ok, why := cond(); !ok {
			t.Fatalf("%s", why)
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(PollInterval)
	}
}

// Hold keeps a fault in place for d — a backend down, a process paused, a
// clock moved past a lease — and returns when d has passed; why says what
// is held and is logged, so a slow test shows where its time went. It is
// the kit's only sleep: a test waits for an outcome with Eventually and
// holds a cause with Hold.
func Hold(t interface {
	Helper()
	Logf(format string, args ...any)
}, d time.Duration, why string) {
	t.Helper()
	t.Logf("holding for %v: %s", d, why)
	time.Sleep(d)
}
