package connectors

import "testing"

// TestEveryStepHasItsOwnPoint: no step goes without a fault point, and no
// two steps share one (a test failing one would fail the other).
func TestEveryStepHasItsOwnPoint(t *testing.T) {
	steps := []string{StepFence, StepSnapshot, StepWriteOffsets, StepWriteConfig, StepRestore,
		MoveStepStop, MoveStepRead, MoveStepCreate, MoveStepClear, MoveStepDelete, MoveStepStart}
	seen := map[string]string{}
	for _, s := range steps {
		p, ok := stepPoints[s]
		if !ok || p == "" {
			t.Errorf("step %q has no fault point", s)
			continue
		}
		if other, dup := seen[string(p)]; dup {
			t.Errorf("steps %q and %q share the point %s", other, s, p)
		}
		seen[string(p)] = s
	}
	if len(stepPoints) != len(steps) {
		t.Errorf("%d points for %d steps", len(stepPoints), len(steps))
	}
}
