package e2e

import "testing"

// TestExactlyOnceAgentCrashZombieAndCoordinatorRestart is issue 6's
// exactly-once scenario (see runAgentFaults): with
// --exactly-once-source-support=enabled on the coordinator and the agents,
// an agent crash, a paused agent that comes back as a zombie after its
// tasks moved, and a coordinator crash leave every seq of every stream in
// the topic exactly once (read_committed).
func TestExactlyOnceAgentCrashZombieAndCoordinatorRestart(t *testing.T) {
	t.Parallel()
	if dups := runAgentFaults(t, true); dups != 0 {
		t.Errorf("%d duplicates with exactly-once support", dups)
	}
}
