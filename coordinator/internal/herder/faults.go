package herder

import (
	"context"

	"github.com/sluice-io/sluice/shared/faults"
)

// Option configures New beyond its Config.
type Option func(*Herder)

// WithFaults has inj inject a test's faults at the herder's fault points
// (the steps below, and faults.StatusWrite). Production code passes none.
func WithFaults(inj faults.Injector) Option {
	return func(h *Herder) { h.faults = inj }
}

// stepPoints are the fault points of the steps h.step runs (a create's and
// a move's), by the names the steps have in errors and answers; the
// offsets service asks about its own.
var stepPoints = map[string]faults.Point{
	StepFence:        faults.CreateFence,
	StepSnapshot:     faults.CreateSnapshot,
	StepWriteOffsets: faults.CreateWriteOffsets,
	StepWriteConfig:  faults.CreateWriteConfig,
	StepRestore:      faults.CreateRestore,
	MoveStepStop:     faults.MoveStop,
	MoveStepRead:     faults.MoveRead,
	MoveStepCreate:   faults.MoveCreate,
	MoveStepClear:    faults.MoveClear,
	MoveStepDelete:   faults.MoveDelete,
	MoveStepStart:    faults.MoveStart,
}

// step runs fn unless the injector fails the step's point first. The
// steps' callers hold no context for the question (each step bounds its
// own work): the point is asked without a deadline.
func (h *Herder) step(name string, fn func() error) error {
	return faults.Step(context.Background(), h.faults, stepPoints[name], fn)
}
