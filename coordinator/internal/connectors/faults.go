package connectors

import "github.com/sluice-io/sluice/shared/faults"

// stepPoints are the fault points of the steps Service.step runs (a
// create's and a move's), by the names the steps have in errors and
// answers; the offsets service asks about its own.
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
