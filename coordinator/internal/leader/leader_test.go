package leader

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluice-io/sluice/shared/embedded/natstest"
	"github.com/sluice-io/sluice/shared/wire"
	"github.com/sluice-io/sluice/sluicetest/wait"
)

type recorder struct {
	mu      sync.Mutex
	elected []int64
	deposed []int64
}

func (r *recorder) callbacks() Callbacks {
	return Callbacks{
		Elected: func(_ context.Context, term int64) { r.mu.Lock(); r.elected = append(r.elected, term); r.mu.Unlock() },
		Deposed: func(term int64) { r.mu.Lock(); r.deposed = append(r.deposed, term); r.mu.Unlock() },
	}
}

func (r *recorder) terms() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int64(nil), r.elected...)
}

func waitFor(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func setup(t *testing.T) *nats.Conn {
	return natstest.Connect(t, natstest.Start(t))
}

func TestOneLeaderAndHandOver(t *testing.T) {
	nc := setup(t)
	ctx := context.Background()
	ttl := time.Second
	if _, err := OpenBucket(ctx, nc, "g.1", ttl); err != nil {
		t.Fatal(err)
	}
	ra, rb := &recorder{}, &recorder{}
	a := New(Config{Conn: nc, GroupID: "g.1", ID: "a", URL: "http://a", TTL: ttl, Callbacks: ra.callbacks(), Logger: slog.Default()})
	b := New(Config{Conn: nc, GroupID: "g.1", ID: "b", URL: "http://b", TTL: ttl, Callbacks: rb.callbacks(), Logger: slog.Default()})
	a.Start()
	waitFor(t, 5*time.Second, a.IsLeader)
	b.Start()
	defer b.Stop()
	waitFor(t, 5*time.Second, func() bool { return b.Current().ID == "a" })
	if b.IsLeader() || b.Current().Term != a.Current().Term || b.Current().URL != "http://a" {
		t.Fatalf("follower sees %+v, leader %+v", b.Current(), a.Current())
	}
	first := a.Current().Term
	// Renewals keep the lease past several TTLs.
	wait.Consistently(t, 2*ttl, func() (bool, string) {
		return a.IsLeader() && len(rb.terms()) == 0, "leadership moved while the leader renewed"
	})
	if !a.IsLeader() || len(rb.terms()) != 0 {
		t.Fatal("leadership moved while the leader renewed")
	}
	// A resigning leader hands over without waiting for the TTL.
	start := time.Now()
	a.Stop()
	waitFor(t, 5*time.Second, b.IsLeader)
	if time.Since(start) > ttl {
		t.Fatalf("hand-over took %v, more than a TTL", time.Since(start))
	}
	if got := b.Current().Term; got <= first {
		t.Fatalf("new term %d not above old term %d", got, first)
	}
	if len(ra.deposed) != 1 || ra.deposed[0] != first {
		t.Fatalf("old leader deposed callbacks: %v", ra.deposed)
	}
}

func TestStaleLeaseExpires(t *testing.T) {
	nc := setup(t)
	ctx := context.Background()
	ttl := time.Second
	kv, err := OpenBucket(ctx, nc, "g2", ttl)
	if err != nil {
		t.Fatal(err)
	}
	// A leader that stopped renewing (crashed or paused).
	val, _ := json.Marshal(wire.LeaderLease{ID: "ghost", URL: "http://ghost", Term: 1})
	if _, err := kv.Create(ctx, wire.LeaderKey, val); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	e := New(Config{Conn: nc, GroupID: "g2", ID: "c", URL: "http://c", TTL: ttl, Callbacks: r.callbacks(), Logger: slog.Default()})
	start := time.Now()
	e.Start()
	defer e.Stop()
	waitFor(t, 5*time.Second, func() bool { return e.Current().ID == "ghost" })
	waitFor(t, 10*time.Second, e.IsLeader)
	if took := time.Since(start); took < ttl/2 {
		t.Fatalf("took over after %v, before the stale lease could expire", took)
	}
	// The ghost, waking up, cannot renew: its revision is gone.
	if _, err := kv.Update(ctx, wire.LeaderKey, val, 1); err == nil {
		t.Fatal("a deposed leader's renewal succeeded")
	}
}
