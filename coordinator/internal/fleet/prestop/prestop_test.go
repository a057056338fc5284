package prestop

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

var (
	t0   = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	proc = t0.Add(-time.Hour) // the process running when the hook drained
)

func preStop(agentStarted time.Time) store.AgentMark {
	return store.AgentMark{State: api.AgentDraining, StartedAt: t0, Origin: api.CordonPreStop, AgentStartedAt: agentStarted}
}

func registered(id string, started time.Time) registry.Agent {
	return registry.Agent{ID: id, Registered: true, StartedAt: started}
}

// TestBack is the table of when a pre-stop mark's agent is back.
func TestBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    store.AgentMark
		a    registry.Agent
		want bool
	}{
		{"the same process (re-registered mid-hook)", preStop(proc), registered("a", proc), false},
		{"a new process", preStop(proc), registered("a", t0.Add(time.Minute)), true},
		{"a new process whose clock is behind", preStop(proc), registered("a", proc.Add(-time.Minute)), true},
		{"not registered", preStop(proc), registry.Agent{ID: "a", StartedAt: t0.Add(time.Minute)}, false},
		{"registered without a start (an old agent)", preStop(proc), registered("a", time.Time{}), false},
		{"no process recorded: started after the drain", preStop(time.Time{}), registered("a", t0.Add(time.Second)), true},
		{"no process recorded: started before it", preStop(time.Time{}), registered("a", proc), false},
		{"an operator's drain", store.AgentMark{State: api.AgentDraining, StartedAt: t0, Origin: api.CordonOperator}, registered("a", t0.Add(time.Minute)), false},
		{"an old mark (no origin)", store.AgentMark{State: api.AgentCordoned, StartedAt: t0}, registered("a", t0.Add(time.Minute)), false},
		{"a rolling restart's drain", store.AgentMark{State: api.AgentDraining, StartedAt: t0, Origin: api.CordonAgentRoll}, registered("a", t0.Add(time.Minute)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Back(tc.m, tc.a); got != tc.want {
				t.Fatalf("Back = %v, want %v", got, tc.want)
			}
		})
	}
}

// agents is the leader's registry, as a list.
type agents []registry.Agent

func (a agents) Agents() []registry.Agent { return a }

// frozen are marks as read at one instant, whatever the store holds since.
type frozen map[string]store.AgentMark

func (f frozen) Agents() map[string]store.AgentMark { return f }

// TestControllerLiftsOnlyPreStopMarksOfReturnedAgents: a step lifts the
// pre-stop mark of an agent back as a new process and leaves every other
// mark — the same process's, an operator's, a rolling restart's, an away
// agent's — and says so once.
func TestControllerLiftsOnlyPreStopMarksOfReturnedAgents(t *testing.T) {
	ctx := context.Background()
	mem := store.NewMemory()
	marks := map[string]store.AgentMark{
		"back":     preStop(proc),
		"same":     preStop(proc),
		"away":     preStop(proc),
		"operator": {State: api.AgentCordoned, StartedAt: t0, Origin: api.CordonOperator},
		"roll":     {State: api.AgentDraining, StartedAt: t0, Origin: api.CordonAgentRoll},
	}
	for id, m := range marks {
		if err := mem.Apply(ctx, store.MarkAgent{ID: id, Mark: m}); err != nil {
			t.Fatal(err)
		}
	}
	later := t0.Add(time.Minute)
	reg := agents{registered("back", later), registered("same", proc), registered("operator", later), registered("roll", later)}
	changed := 0
	c := New(mem.Fleet, reg, mem.Apply, func() { changed++ }, slog.New(slog.DiscardHandler))
	if n := c.Step(ctx); n != 1 || changed != 1 {
		t.Fatalf("step lifted %d (changed %d), want 1", n, changed)
	}
	left := mem.Fleet.Agents()
	if _, ok := left["back"]; ok || len(left) != 4 {
		t.Fatalf("marks left %v, want every one but back's", left)
	}
	if n := c.Step(ctx); n != 0 || changed != 1 {
		t.Fatalf("a second step lifted %d", n)
	}
}

// TestControllerStaleLift: a mark taken over between the read and the
// write (an operator cordoned the agent as it came back) is not lifted.
func TestControllerStaleLift(t *testing.T) {
	ctx := context.Background()
	mem := store.NewMemory()
	if err := mem.Apply(ctx, store.MarkAgent{ID: "a", Mark: preStop(proc)}); err != nil {
		t.Fatal(err)
	}
	read := frozen(mem.Fleet.Agents())
	taken := store.AgentMark{State: api.AgentDraining, StartedAt: t0, Origin: api.CordonOperator, Principal: "ops"}
	if err := mem.Apply(ctx, store.MarkAgent{ID: "a", Mark: taken}); err != nil {
		t.Fatal(err)
	}
	c := New(read, agents{registered("a", t0.Add(time.Minute))}, mem.Apply, nil, slog.New(slog.DiscardHandler))
	if n := c.Step(ctx); n != 0 {
		t.Fatalf("lifted %d", n)
	}
	if m, ok := mem.Fleet.Agent("a"); !ok || m != taken {
		t.Fatalf("the operator's mark became %+v (%v)", m, ok)
	}
}

// TestControllerNothingPreStop does not even ask for the agents.
func TestControllerNothingPreStop(t *testing.T) {
	c := New(frozen{"a": {State: api.AgentCordoned, StartedAt: t0}}, nil, nil, nil, nil)
	if n := c.Step(context.Background()); n != 0 {
		t.Fatal(n)
	}
}
