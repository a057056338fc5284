package main

import (
	"strings"
	"testing"
	"time"
)

// TestAgentsPreStopDrain is the Kubernetes hook's command as a user sees
// it: `sluice agents drain --self --pre-stop --wait` drains the agent of
// $SLUICE_ID, `agents get` says the hook cordoned it, and once the agent
// is back as a new process it is active again with no cordon, without
// anyone uncordoning it.
func TestAgentsPreStopDrain(t *testing.T) {
	f := startFleet(t, map[string]map[string]string{"agent-2": nil})
	u := f.URL
	createSources(t, f.testCluster, "", "ps-a", "ps-b")

	t.Setenv("SLUICE_ID", "agent-2")
	if _, errOut, code := runCLI(t, "agents", "drain", "--self", "--pre-stop", "--wait", "--timeout", "60s", "--url", u); code != 0 ||
		!strings.Contains(errOut, "agent agent-2 drained: it runs no task") {
		t.Fatalf("the pre-stop drain: exit %d\n%s", code, errOut)
	}
	out := mustCLI(t, "agents", "get", "agent-2", "--url", u)
	if !strings.Contains(out, "state:       draining\n") || !strings.Contains(out, "cordon:      pre-stop since ") {
		t.Fatalf("agents get after the pre-stop drain:\n%s", out)
	}

	f.stop(t, "agent-2")
	f.start(t, "agent-2")
	eventually(t, 30*time.Second, func() (bool, string) {
		out := mustCLI(t, "agents", "get", "agent-2", "--url", u)
		return strings.Contains(out, "state:       active\n") && strings.Contains(out, "cordon:      -\n") &&
			strings.Contains(out, "registered:  true\n"), out
	})
}
