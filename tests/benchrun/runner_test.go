package main

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestRunnerRunsTheKitsProcs runs a child through the kit's Proc as the
// program does (the runner, not a test): its stdout is in its log, a
// failure of the kit is an error, and killAll ends it.
func TestRunnerRunsTheKitsProcs(t *testing.T) {
	old := tb
	tb = &runner{tmp: t.TempDir()}
	defer func() { killAll(); tb = old }()

	p, err := startProc("child", "/bin/sh", "-c", "echo ready; exec sleep 60")
	if err != nil {
		t.Fatal(err)
	}
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		return strings.Contains(p.Tail(5), "ready"), "no stdout line in the log: " + p.Tail(5)
	})
	if err := p.restart(); err == nil || !strings.Contains(err.Error(), "while running") {
		t.Errorf("restart of a running child: got %v, want the kit's failure as an error", err)
	}
	if _, err := freeAddr(); err != nil {
		t.Error(err)
	}
	killAll()
	if p.Running() {
		t.Error("the child runs after killAll")
	}
	if err := p.kill(); err != nil {
		t.Errorf("kill of an exited child: %v", err)
	}
}
