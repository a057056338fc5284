package offsets

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
)

// lostAgentCalls are the calls of a service whose registry holds agent
// "a", last heard from at seen, with an agent lease of lease.
func lostAgentCalls(t *testing.T, lease time.Duration, seen time.Time) (*Calls, *fakeAgents, *fakeClock) {
	w := newWorld(t)
	w.agents = newFakeAgents("a")
	w.agents.seen["a"] = seen
	cfg := w.config()
	cfg.AgentLease = lease
	cfg.Clock = w.clock
	return New(cfg).Calls(), w.agents, w.clock
}

// TestOffsetsCallOutlivesAClosedConnection: an agent taken for lost by its
// closed NATS connection while it still holds its lease may still be at
// work on the operation; the call it was sent keeps running — its context
// is not ended, so the operation is not moved to another agent whose
// commit the lost agent's could follow — and a late answer counts.
func TestOffsetsCallOutlivesAClosedConnection(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c, agents, clock := lostAgentCalls(t, 10*time.Second, start)
	err := c.callWhileAlive(context.Background(), "a", func(ctx context.Context, agent string) error {
		clock.awaitWaiter(t)
		agents.remove("a")
		clock.Advance(lossCheck) // the loss is checked every 100ms
		clock.Advance(5 * time.Second)
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
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c, agents, clock := lostAgentCalls(t, lease, start.Add(-lease-time.Second))
	err := c.callWhileAlive(context.Background(), "a", func(ctx context.Context, agent string) error {
		clock.awaitWaiter(t)
		agents.remove("a")
		clock.Advance(lossCheck)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(lease / 2):
			t.Error("the call's context outlived the agent's lease")
			return nil
		}
	})
	if !api.IsCode(err, api.CodeUnavailable) {
		t.Fatalf("call to an agent lost past its lease: %v, want unavailable", err)
	}
}

// TestOffsetsCallFollowsHeartbeats: an agent heard from during the call
// moves the time its lease is counted from.
func TestOffsetsCallFollowsHeartbeats(t *testing.T) {
	const lease = 10 * time.Second
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// Last heard from long ago: lost now, its lease would be over.
	c, agents, clock := lostAgentCalls(t, lease, start.Add(-time.Hour))
	err := c.callWhileAlive(context.Background(), "a", func(ctx context.Context, agent string) error {
		clock.awaitWaiter(t)
		agents.mu.Lock()
		agents.seen["a"] = start // a heartbeat just now
		agents.mu.Unlock()
		clock.Advance(lossCheck) // seen: now counts
		clock.awaitWaiter(t)
		agents.remove("a")
		clock.Advance(lossCheck)
		time.Sleep(20 * time.Millisecond)
		return ctx.Err()
	})
	if err != nil {
		t.Fatalf("call to an agent lost within the lease of its last heartbeat: %v, want its answer", err)
	}
}

// TestLeaseOver is the clock's edge of an agent's lease.
func TestLeaseOver(t *testing.T) {
	seen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		after time.Duration
		want  bool
	}{{0, false}, {10*time.Second - time.Nanosecond, false}, {10 * time.Second, true}, {time.Hour, true}} {
		if got := leaseOver(seen, seen.Add(tc.after), 10*time.Second); got != tc.want {
			t.Errorf("lost %v after its last heartbeat: lease over %v, want %v", tc.after, got, tc.want)
		}
	}
}
