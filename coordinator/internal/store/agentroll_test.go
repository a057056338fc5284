package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestAgentRollTransitions: a roll starts only whole and once; each
// transition checks the step it starts from (ErrStale otherwise, nothing
// written); the last agent of a batch moves the roll on, the last of all
// finishes it; a removed roll is gone from the state.
func TestAgentRollTransitions(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	m := NewMemory()
	roll := AgentRoll{ID: "r", State: AgentRollRunning, Spec: AgentRollSpec{BatchSize: 2, Timeout: "1m"},
		Agents: []RolledAgent{{ID: "a", Step: RollPending}, {ID: "b", Step: RollPending}, {ID: "c", Step: RollPending}}}
	for _, bad := range []AgentRoll{
		{ID: "", State: AgentRollRunning, Spec: roll.Spec, Agents: roll.Agents},
		{ID: "r", State: AgentRollRunning, Spec: AgentRollSpec{}, Agents: roll.Agents},
		{ID: "r", State: AgentRollRunning, Spec: roll.Spec, Agents: []RolledAgent{{ID: "a", Step: RollPending}, {ID: "a", Step: RollPending}}},
		{ID: "r", State: AgentRollRunning, Spec: roll.Spec},
	} {
		if err := m.Apply(ctx, StartAgentRoll{Roll: bad}); err == nil {
			t.Errorf("started %+v", bad)
		}
	}
	if err := m.Apply(ctx, StartAgentRoll{Roll: roll}); err != nil {
		t.Fatal(err)
	}
	if err := m.Apply(ctx, StartAgentRoll{Roll: roll}); !errors.Is(err, ErrStale) {
		t.Fatalf("a second start: %v", err)
	}
	txns := len(m.Txns)
	if err := m.Apply(ctx, RollAgentDrained{ID: "r", Agent: "a", At: at}); !errors.Is(err, ErrStale) || len(m.Txns) != txns {
		t.Fatalf("a pending agent drained: %v", err)
	}
	if err := m.Apply(ctx, DrainRollBatch{ID: "r", Batch: 0, StartedAt: map[string]time.Time{"a": at.Add(-time.Hour)}, At: at}); err != nil {
		t.Fatal(err)
	}
	if err := m.Apply(ctx, RollAgentGone{ID: "r", Agent: "c", At: at}); err == nil || !strings.Contains(err.Error(), "has no agent c in batch 1") {
		t.Fatalf("an agent of a later batch: %v", err)
	}
	for _, id := range []string{"a", "b"} {
		if err := m.Apply(ctx, RollAgentDrained{ID: "r", Agent: id, Moved: 2, At: at},
			RollAgentRestarted{ID: "r", Agent: id, StartedAt: at, Version: "v2", At: at}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Apply(ctx, RollAgentDone{ID: "r", Agent: "a", At: at}); err != nil {
		t.Fatal(err)
	}
	if r, _ := m.Fleet.AgentRoll("r"); r.Batch != 0 || r.Done() != 1 {
		t.Fatalf("after a: batch %d, %d done", r.Batch, r.Done())
	}
	if err := m.Apply(ctx, RollAgentDone{ID: "r", Agent: "b", At: at}); err != nil {
		t.Fatal(err)
	}
	r, _ := m.Fleet.AgentRoll("r")
	if r.Batch != 1 || r.State != AgentRollRunning || !r.Agents[0].StartedAt.Equal(at.Add(-time.Hour)) || r.Agents[1].Moved != 2 || !r.UpdatedAt.Equal(at) {
		t.Fatalf("after the first batch: %+v", r)
	}
	if err := m.Apply(ctx, RollAgentDone{ID: "r", Batch: 0, Agent: "a", At: at}); !errors.Is(err, ErrStale) {
		t.Fatalf("a done again: %v", err)
	}
	if err := m.Apply(ctx, DrainRollBatch{ID: "r", Batch: 1, At: at}, RollAgentDrained{ID: "r", Batch: 1, Agent: "c", At: at},
		RollAgentRestarted{ID: "r", Batch: 1, Agent: "c", At: at}, RollAgentDone{ID: "r", Batch: 1, Agent: "c", At: at}); err != nil {
		t.Fatal(err)
	}
	if r, _ := m.Fleet.AgentRoll("r"); r.State != AgentRollDone || !r.Final() || r.Batch != r.Batches() {
		t.Fatalf("at the end: %+v", r)
	}
	if err := m.Apply(ctx, AbortAgentRoll{ID: "r", At: at}); !errors.Is(err, ErrStale) {
		t.Fatalf("abort of a done roll: %v", err)
	}
	if err := m.Apply(ctx, DeleteAgentRoll{ID: "r"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Fleet.AgentRoll("r"); ok || len(m.Fleet.AgentRolls()) != 0 {
		t.Fatal("a deleted roll is still there")
	}
}
