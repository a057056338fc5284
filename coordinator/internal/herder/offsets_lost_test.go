package herder

import (
	"context"
	"testing"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
)

// lostAgentHerder is a herder whose registry holds agent "a", last heard
// from at seen, with an agent lease of lease.
func lostAgentHerder(lease time.Duration, seen time.Time) *Herder {
	h := &Herder{cfg: Config{AgentLease: lease}}
	h.rec = reconciler.New(reconciler.Config{AgentLease: lease, Clock: fixedClock{seen}})
	h.rec.Observe(&v1.RegisterRequest{AgentID: "a"}, true)
	return h
}

// fixedClock is a clock stopped at a time.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// removeSoon removes agent "a" from h's registry after a moment, as the
// presence probes or the lease expiry do.
func removeSoon(h *Herder) chan struct{} {
	removed := make(chan struct{})
	go func() {
		time.Sleep(50 * time.Millisecond)
		h.rec.Remove("a")
		close(removed)
	}()
	return removed
}

// TestOffsetsCallOutlivesAClosedConnection: an agent taken for lost by its
// closed NATS connection while it still holds its lease may still be at
// work on the operation; the call it was sent keeps running — its context
// is not ended, so the operation is not moved to another agent whose
// commit the lost agent's could follow — and a late answer counts.
func TestOffsetsCallOutlivesAClosedConnection(t *testing.T) {
	h := lostAgentHerder(10*time.Second, time.Now())
	err := h.callWhileAlive(context.Background(), "a", func(ctx context.Context, agent string) error {
		<-removeSoon(h)
		time.Sleep(350 * time.Millisecond) // the loss is checked every 100ms
		if err := ctx.Err(); err != nil {
			t.Errorf("the call's context ended while the agent held its lease: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the agent's answer after its connection closed: %v, want it taken", err)
	}
}

// TestOffsetsCallEndsWithTheLease: an agent taken for lost once its lease
// is over has stopped the operation itself, so the call ends at once and
// answers "unavailable": the caller moves to another agent without waiting
// out the call's deadline.
func TestOffsetsCallEndsWithTheLease(t *testing.T) {
	const lease = 10 * time.Second
	h := lostAgentHerder(lease, time.Now().Add(-lease-time.Second))
	err := h.callWhileAlive(context.Background(), "a", func(ctx context.Context, agent string) error {
		removeSoon(h)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(lease / 2):
			t.Error("the call's context outlived the agent's lease")
			return nil
		}
	})
	if !v1.IsCode(err, v1.CodeUnavailable) {
		t.Fatalf("call to an agent lost past its lease: %v, want unavailable", err)
	}
}
