package agent

import (
	"context"
	"time"

	"github.com/sluice-io/sluice/agent/internal/liveness"
	"github.com/sluice-io/sluice/shared/wire"
)

// fenceCheckEvery is how often the agent looks whether it may still run
// its tasks.
const fenceCheckEvery = 100 * time.Millisecond

// mayRun reports whether the leader has heard this agent, on NATS or on
// Kafka, recently enough that it cannot yet have started the agent's tasks
// elsewhere (liveness.MayRun). Every task asks before each step, so that a
// process resumed from a pause writes nothing before it finds out.
func (a *Agent) mayRun() bool {
	acked, lease := a.transport.Session()
	if k, ok := a.beats.LastAck(); ok && k.After(acked) {
		acked = k
	}
	return liveness.MayRun(acked, lease, time.Now())
}

// registered starts the liveness beats the leader asks for.
func (a *Agent) registered(r wire.RegisterReply) {
	if err := a.beats.Start(r.LivenessTopic, time.Duration(r.LivenessMillis)*time.Millisecond, r.Term); err != nil {
		a.log.Warn("liveness beats not started: the agent is heard on NATS alone", "err", err)
	}
}

// fenceLoop stops every task once the agent may no longer run them, until
// ctx ends: the leader heard it on neither NATS nor Kafka for three
// quarters of its lease, and will start them elsewhere at the end of it.
// The tasks register again with it when the agent is heard again.
func (a *Agent) fenceLoop(ctx context.Context) {
	tick := time.NewTicker(fenceCheckEvery)
	defer tick.Stop()
	fenced := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if a.mayRun() {
			if fenced {
				a.log.Info("heard by the leader again: taking assignments")
			}
			fenced = false
			continue
		}
		running := a.worker.Running()
		if len(running) == 0 {
			continue
		}
		if !fenced {
			acked, lease := a.transport.Session()
			if k, ok := a.beats.LastAck(); ok && k.After(acked) {
				acked = k
			}
			a.log.Warn("the leader has heard this agent on neither NATS nor Kafka for too long: stopping its tasks before they are started elsewhere",
				"last_heard", acked, "lease", lease, "tasks", len(running))
		}
		fenced = true
		a.worker.Fence(ctx)
	}
}
