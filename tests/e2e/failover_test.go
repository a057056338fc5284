package e2e

import "testing"

// TestFailoverAgentCrashZombieAndCoordinatorRestartLoseNothing is the same
// scenario as the exactly-once test (see runAgentFaults) with exactly-once
// source support off: no record is lost; the duplicates the crash and the
// zombie cause are allowed, counted and reported.
func TestFailoverAgentCrashZombieAndCoordinatorRestartLoseNothing(t *testing.T) {
	t.Parallel()
	dups := runAgentFaults(t, false)
	t.Logf("exactly-once off: %d duplicate records after an agent crash, a zombie and a coordinator restart", dups)
}
