package procs_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
)

// TestProcLifecycle takes a child that is not sluice through the states a
// test puts a member in: running, paused, resumed, killed, restarted, with
// its stdout in its log (MergeOutput) and marks that see only what came
// after them.
func TestProcLifecycle(t *testing.T) {
	t.Parallel()
	// The child prints "started"; its command line, which the log's
	// "start #N" header repeats, must not hold the word, or the header
	// would count as a start too.
	p := procs.NewProcOf(t, "/bin/sh", "child", "-c", `echo start""ed; exec sleep 60`)
	p.MergeOutput = true
	p.Start()
	logged := func(n int) func() (bool, string) {
		return func() (bool, string) {
			c := p.CountLog("started")
			return c == n, p.Tail(5)
		}
	}
	sluicetest.Eventually(t, 10*time.Second, logged(1))
	p.Pause()
	p.Resume()
	m := p.Mark()
	p.Kill()
	if p.Running() {
		t.Fatal("running after Kill")
	}
	p.Restart()
	sluicetest.Eventually(t, 10*time.Second, logged(2))
	if n := p.CountLogSince(m, "started"); n != 1 {
		t.Errorf("%d starts after the mark, want 1", n)
	}
	if p.Starts() != 2 || !strings.Contains(p.Tail(10), "start #2") {
		t.Errorf("starts %d, log %q", p.Starts(), p.Tail(10))
	}
}
