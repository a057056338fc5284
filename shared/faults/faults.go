// Package faults names the points of Sluice's code where a test may inject
// a fault — fail a step, or hold it — and defines the one interface that
// does. Production code runs without an injector: every point then passes.
//
// An injector is carried by an option (coordinator.WithFaults,
// agent.WithFaults, or a faults.Injector in the fx graph), never by a
// config field, so that no production config holds a test seam.
package faults

import "context"

// Point names one place where a fault may be injected.
type Point string

// The points of a create with initial offsets (spec §0.1), in the order
// they run; a move runs a create's points too.
const (
	// CreateFence fences the connector's previous tasks (a source).
	CreateFence Point = "create.fence"
	// CreateSnapshot reads the offsets the name held before.
	CreateSnapshot Point = "create.snapshot"
	// CreateWriteOffsets writes the initial offsets.
	CreateWriteOffsets Point = "create.write_offsets"
	// CreateWriteConfig writes the connector's config.
	CreateWriteConfig Point = "create.write_config"
	// CreateRestore puts the previous offsets back after a failure.
	CreateRestore Point = "create.restore"
)

// The points of an offsets change recorded in the offsets history.
const (
	// OffsetsHistoryBegin writes the change's pending history entry.
	OffsetsHistoryBegin Point = "offsets.history_begin"
	// OffsetsApply has an agent make the change.
	OffsetsApply Point = "offsets.apply"
	// OffsetsHistoryMarker writes the entry's applied or failed marker; a
	// fault here leaves the entry pending, as a crash of the leader would.
	OffsetsHistoryMarker Point = "offsets.history_marker"
)

// The points of a move (POST /sluice/connectors/{name}/move), in order.
const (
	MoveStop   Point = "move.stop"
	MoveRead   Point = "move.read"
	MoveCreate Point = "move.create"
	MoveClear  Point = "move.clear"
	MoveDelete Point = "move.delete"
	MoveStart  Point = "move.start"
)

// StatusWrite is the leader's status writer, before each batch of status
// records is written: a fault that blocks stands for a stalled broker.
const StatusWrite Point = "status.write"

// StoreCommit is the leader's writer, after the records of a transaction
// that holds a maintenance window's or a rollout's record were produced
// and before its commit; the subject is the keys of the transaction's
// config and fleet records ([]string). An error aborts the transaction
// (nothing of it becomes visible), as a leader stopped between its
// produce and its commit would leave it.
const StoreCommit Point = "store.commit"

// AgentOffsets is an agent, before it applies an offsets request (fence,
// alter, reset, or a create's replace) the leader sent; the subject is
// the wire.SourceOffsetsRequest or wire.SinkOffsetsRequest (a replace as
// the source request of its writes, Op reset when it has none). An error is answered instead of applying it.
const AgentOffsets Point = "agent.offsets"

// AgentGauges is an agent, before it reads the gauges the leader asked
// for; the subject is the wire.GaugesRequest. An error is answered
// instead; blocking holds the answer, as an agent too busy or too far to
// answer in time would.
const AgentGauges Point = "agent.gauges"

// Injector injects faults.
type Injector interface {
	// Fault is asked at point before the step it names runs; subject is
	// what the step acts on, where a point's doc says so (nil otherwise).
	// An error fails the step as if it had failed itself; blocking holds
	// the step (until ctx ends, if the injector heeds it).
	Fault(ctx context.Context, at Point, subject any) error
}

// Func is a function that is an Injector.
type Func func(ctx context.Context, at Point, subject any) error

// Fault implements Injector.
func (f Func) Fault(ctx context.Context, at Point, subject any) error { return f(ctx, at, subject) }

// Check asks inj about point; a nil inj lets every point pass.
func Check(ctx context.Context, inj Injector, at Point, subject any) error {
	if inj == nil {
		return nil
	}
	return inj.Fault(ctx, at, subject)
}

// Step runs fn, the step at point, unless inj (nil: none) fails the point
// first: the one way code asks about a step it names.
func Step(ctx context.Context, inj Injector, at Point, fn func() error) error {
	if err := Check(ctx, inj, at, nil); err != nil {
		return err
	}
	return fn()
}

// Join is an injector that asks each of injs in turn (nil ones skipped)
// and fails with the first fault.
func Join(injs ...Injector) Injector {
	return Func(func(ctx context.Context, at Point, subject any) error {
		for _, inj := range injs {
			if err := Check(ctx, inj, at, subject); err != nil {
				return err
			}
		}
		return nil
	})
}
