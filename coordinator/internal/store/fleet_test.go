package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

// TestFleetStore writes every kind of fleet record through the leader
// writer and reads them back, in this store and in a second one that
// follows the topic from its start, as a new leader would.
func TestFleetStore(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "fleet"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	opts := kafkautil.ClientOpts(kc.ListenAddrs()[0], "fleet-test", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var undecodable []string
	s, err := NewFleetStore("fleet", func(key string, _ error) { undecodable = append(undecodable, key) }, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	since := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	if err := s.Apply(ctx, MarkAgent{ID: "a1", Mark: AgentMark{State: api.AgentCordoned, StartedAt: since}}); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("apply without the leader writer: %v, want ErrNotLeader", err)
	}
	w, err := NewWriter(ctx, "fleet-test-leader", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	s.SetWriter(w)

	changed := s.State.Changed()
	win := Window{ID: "m1", State: api.StateStopped, Connectors: []WindowConnector{{Name: "c", Previous: api.StatePaused}}}
	ro := Rollout{ID: "r1", State: RolloutRunning, Batches: []RolloutBatch{{State: BatchPending, Connectors: []RolloutConnector{{Name: "c", State: BatchPending}}}}}
	if err := s.Apply(ctx,
		MarkAgent{ID: "a1", Mark: AgentMark{State: api.AgentCordoned, StartedAt: since}},
		MarkAgent{ID: "a2", Mark: AgentMark{State: api.AgentDraining, Force: true, StartedAt: since}},
		OpenWindow{Window: win}, StartRollout{Rollout: ro},
		PutRebalance{Rebalance: &Rebalance{ID: "b1", State: "running", Moves: []RebalanceMove{{Connector: "c", From: "a1", To: "a3"}}}},
	); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Fatal("Changed was not closed by a write")
	}
	if err := s.Apply(ctx, MarkAgent{ID: "a1", Mark: AgentMark{State: api.AgentActive}}, CloseWindow{ID: "nope"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, MarkAgent{ID: "a3", Mark: AgentMark{State: "sleeping"}}); err == nil {
		t.Fatal("an unknown agent state was written")
	}

	// A second store, as a new leader, reads the same state.
	s2, err := NewFleetStore("fleet", nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s2.Close)
	if err := s2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*FleetState{s.State, s2.State} {
		if _, ok := st.Agent("a1"); ok {
			t.Fatal("an uncordoned agent is still marked")
		}
		if m, ok := st.Agent("a2"); !ok || m.State != api.AgentDraining || !m.Force || !m.StartedAt.Equal(since) {
			t.Fatalf("a2: %+v %v", m, ok)
		}
		if ws := st.Windows(); len(ws) != 1 || ws[0].Connectors[0].Previous != api.StatePaused {
			t.Fatalf("windows %+v", ws)
		}
		if r, ok := st.Rollout("r1"); !ok || r.State != api.RolloutRunning {
			t.Fatalf("rollout %+v %v", r, ok)
		}
		if r := st.Rebalance(); r == nil || r.Moves[0].To != "a3" {
			t.Fatalf("rebalance %+v", r)
		}
	}
	if err := s.Apply(ctx, CloseWindow{ID: "m1"}, PutRebalance{}); err != nil {
		t.Fatal(err)
	}
	if len(s.State.Windows()) != 0 || s.State.Rebalance() != nil {
		t.Fatalf("closed window or finished rebalance still there: %+v %+v", s.State.Windows(), s.State.Rebalance())
	}
	if len(undecodable) != 0 {
		t.Fatalf("undecodable records %v", undecodable)
	}
}

// TestLiftAgentMark: a lift removes the mark it was decided on and no
// other — not one made since by someone else or at another time, not an
// absent one — and a mark written before origins were recorded reads as an
// operator's.
func TestLiftAgentMark(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	m := NewMemory()
	preStop := AgentMark{State: api.AgentDraining, StartedAt: at, Origin: api.CordonPreStop, AgentStartedAt: at.Add(-time.Hour)}
	if err := m.Apply(ctx, MarkAgent{ID: "a", Mark: preStop}); err != nil {
		t.Fatal(err)
	}
	for name, lift := range map[string]LiftAgentMark{
		"another origin":  {ID: "a", Origin: api.CordonOperator, StartedAt: at},
		"another start":   {ID: "a", Origin: api.CordonPreStop, StartedAt: at.Add(time.Second)},
		"an absent mark":  {ID: "b", Origin: api.CordonPreStop, StartedAt: at},
		"an empty origin": {ID: "a", StartedAt: at},
	} {
		if err := m.Apply(ctx, lift); !errors.Is(err, ErrStale) {
			t.Errorf("lift of %s: %v, want ErrStale", name, err)
		}
	}
	if got, ok := m.Fleet.Agent("a"); !ok || got != preStop {
		t.Fatalf("after refused lifts the mark is %+v (%v), want %+v", got, ok, preStop)
	}
	if err := m.Apply(ctx, LiftAgentMark{ID: "a", Origin: api.CordonPreStop, StartedAt: at}); err != nil {
		t.Fatal(err)
	}
	if got, ok := m.Fleet.Agent("a"); ok {
		t.Fatalf("a lifted mark is still there: %+v", got)
	}

	// A record of an earlier version has no origin: an operator's.
	if err := m.Fleet.apply(fleetAgentPrefix+"old", []byte(`{"state":"cordoned","started_at":"2026-12-01T00:00:00Z","principal":"ops"}`)); err != nil {
		t.Fatal(err)
	}
	old, _ := m.Fleet.Agent("old")
	if old.By() != api.CordonOperator || !old.AgentStartedAt.IsZero() {
		t.Fatalf("an old record reads as %+v, by %s", old, old.By())
	}
	if err := m.Apply(ctx, LiftAgentMark{ID: "old", Origin: api.CordonPreStop, StartedAt: old.StartedAt}); !errors.Is(err, ErrStale) {
		t.Fatalf("a pre-stop lift of an operator's old cordon: %v, want ErrStale", err)
	}
}
