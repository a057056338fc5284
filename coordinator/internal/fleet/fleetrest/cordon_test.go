package fleetrest

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// TestCordonOrigins: who cordoned or drained an agent is recorded with the
// mark and shown — a pre-stop drain with the running process's start, which
// its lift compares against; an operator's cordon takes a pre-stop drain
// over (it goes on, and is no longer lifted), and a pre-stop drain of an
// agent an operator cordoned stays the operator's.
func TestCordonOrigins(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	started := t0.Add(-time.Hour)
	e.s.cfg.Agents = fakeAgents{agents: []registry.Agent{
		{ID: "a", Registered: true, LastSeen: t0, StartedAt: started},
		{ID: "b", Registered: true, LastSeen: t0, StartedAt: started},
	}}

	st, err := e.s.DrainAgent(ctx, "a", false, api.CordonPreStop)
	if err != nil {
		t.Fatal(err)
	}
	want := store.AgentMark{State: api.AgentDraining, StartedAt: t0, Principal: "alice", Origin: api.CordonPreStop, AgentStartedAt: started}
	if m, _ := e.mem.Fleet.Agent("a"); m != want {
		t.Fatalf("a pre-stop drain marked %+v, want %+v", m, want)
	}
	if st.Origin != api.CordonPreStop {
		t.Fatalf("its status says origin %q", st.Origin)
	}
	a, err := e.s.GetAgent(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if a.Cordon == nil || *a.Cordon != (api.AgentCordon{Origin: api.CordonPreStop, Principal: "alice", Since: t0}) {
		t.Fatalf("the agent shows cordon %+v", a.Cordon)
	}
	// The hook again (a retried preStop): nothing written.
	txns := len(e.mem.Txns)
	e.now = t0.Add(time.Minute)
	if _, err := e.s.DrainAgent(ctx, "a", false, api.CordonPreStop); err != nil || len(e.mem.Txns) != txns {
		t.Fatalf("the same drain again: %v, %d writes", err, len(e.mem.Txns)-txns)
	}
	// An operator's cordon takes it over: still draining, since t0.
	if _, err := e.s.CordonAgent(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if m, _ := e.mem.Fleet.Agent("a"); m.State != api.AgentDraining || m.By() != api.CordonOperator || !m.StartedAt.Equal(t0) || !m.AgentStartedAt.IsZero() {
		t.Fatalf("after an operator's cordon a is %+v", m)
	}

	// b: an operator cordons it, then its pre-stop hook drains it.
	if _, err := e.s.CordonAgent(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.DrainAgent(ctx, "b", false, api.CordonPreStop); err != nil {
		t.Fatal(err)
	}
	if m, _ := e.mem.Fleet.Agent("b"); m.State != api.AgentDraining || m.By() != api.CordonOperator || !m.AgentStartedAt.IsZero() {
		t.Fatalf("a pre-stop drain of an operator's cordon: %+v, want draining and still the operator's", m)
	}
	b, _ := e.s.GetAgent(ctx, "b")
	if b.Cordon == nil || b.Cordon.Origin != api.CordonOperator {
		t.Fatalf("b shows cordon %+v", b.Cordon)
	}
	// Uncordoned, nothing shows.
	b, err = e.s.UncordonAgent(ctx, "b")
	if err != nil || b.State != api.AgentActive || b.Cordon != nil {
		t.Fatalf("uncordoned b: %+v, %v", b, err)
	}
}
