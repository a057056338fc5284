package server

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestTuneAgentGC: an agent collects at agentGCPercent unless GOGC is set,
// and then keeps the environment's value.
func TestTuneAgentGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })

	t.Setenv("GOGC", "")
	tuneAgentGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set (even empty) the GC percent became %d, want it left at 100", got)
	}

	// t.Setenv restores GOGC when the test ends; unset it meanwhile.
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	tuneAgentGC()
	if got := debug.SetGCPercent(100); got != agentGCPercent {
		t.Fatalf("without GOGC the GC percent is %d, want %d", got, agentGCPercent)
	}
}
