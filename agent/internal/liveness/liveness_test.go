package liveness

import (
	"testing"
	"time"
)

// An agent fences itself a quarter of its lease before the leader may take
// it for lost: the leader's lease runs from when it heard the agent, which
// is after the agent sent what it heard.
func TestMayRun(t *testing.T) {
	heard := time.Now()
	lease := 8 * time.Second
	for _, tc := range []struct {
		after time.Duration
		lease time.Duration
		run   bool
	}{
		{0, lease, true},
		{5 * time.Second, lease, true},
		{6 * time.Second, lease, true},
		{6*time.Second + time.Millisecond, lease, false},
		{time.Hour, 0, true}, // never registered: nothing a leader placed
	} {
		if got := MayRun(heard, tc.lease, heard.Add(tc.after)); got != tc.run {
			t.Errorf("heard %v ago, lease %v: may run %v, want %v", tc.after, tc.lease, got, tc.run)
		}
	}
	if FenceAfter(lease) >= lease {
		t.Fatal("an agent must fence itself before its lease runs out")
	}
}
