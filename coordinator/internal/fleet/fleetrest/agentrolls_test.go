package fleetrest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/connectors"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/agentroll"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
)

// fakeRegistry is the leader's registry of fakeAgents, for the roll
// controller.
type fakeRegistry struct{ fakeAgents }

func (f fakeRegistry) Agents() []registry.Agent { return f.agents }

// TestAgentRolls: a roll is made only by the leader, of known agents (404
// naming the first that is not), by default of every registered agent by
// id; it shows its progress — agents done of all, and where the batch in
// progress is — to every coordinator, and is paused, resumed and aborted
// through the controller.
func TestAgentRolls(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	agents := e.s.cfg.Agents.(fakeAgents)
	e.s.cfg.AgentRolls = agentroll.New(agentroll.Config{Agents: fakeRegistry{agents}, Fleet: e.mem.Fleet, Store: e.mem, Snapshot: e.world.Snapshot,
		Clock: func() time.Time { return e.now }, NewID: func(now time.Time) string { return "roll-1" }, Changed: func() {},
		WriteFailed: e.s.cfg.WriteFailed, Logger: slog.New(slog.DiscardHandler)})

	if _, err := e.s.CreateAgentRoll(ctx, api.AgentRollRequest{Agents: []string{"a", "nope"}}); code(err) != int(api.CodeNotFound) || api.AsError(err).Message != "Agent nope not found" {
		t.Fatalf("a roll of an unknown agent: %v", err)
	}
	if _, err := e.s.CreateAgentRoll(ctx, api.AgentRollRequest{Timeout: "later"}); code(err) != int(api.CodeBadRequest) {
		t.Fatalf("a roll with a bad timeout: %v", err)
	}
	e.leading = false
	if _, err := e.s.CreateAgentRoll(ctx, api.AgentRollRequest{}); code(err) != int(api.CodeConflict) || api.AsError(err).Message != connectors.StaleMessage {
		t.Fatalf("a roll made on a follower: %v", err)
	}
	if len(e.mem.Txns) != 0 {
		t.Fatal("a refused roll wrote something")
	}
	e.leading = true
	r, err := e.s.CreateAgentRoll(ctx, api.AgentRollRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "roll-1" || r.State != api.AgentRollRunning || r.Request.BatchSize != 1 || r.Request.Timeout != "10m0s" || r.Principal != "alice" ||
		len(r.Agents) != 2 || r.Agents[0].ID != "a" || r.Agents[1].ID != "b" || r.Agents[1].Batch != 1 {
		t.Fatalf("roll %+v", r)
	}
	if _, err := e.s.cfg.AgentRolls.Step(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	// A follower reads it from the fleet topic.
	e.leading = false
	got, err := e.s.AgentRoll(ctx, r.ID)
	if err != nil || got.Progress.Done != 0 || got.Progress.Total != 2 || len(got.Progress.Current) != 1 ||
		got.Progress.Current[0] != (api.RollCurrent{Agent: "a", Step: api.RollDraining}) {
		t.Fatalf("roll %+v %v", got, err)
	}
	if list, err := e.s.AgentRolls(ctx); err != nil || len(list.Rolls) != 1 || list.Rolls[0].ID != r.ID {
		t.Fatalf("list %+v %v", list, err)
	}
	if _, err := e.s.AgentRoll(ctx, "nope"); code(err) != int(api.CodeNotFound) || api.AsError(err).Message != "Roll nope not found" {
		t.Fatalf("an unknown roll: %v", err)
	}
	e.leading = true
	if got, err := e.s.PauseAgentRoll(ctx, r.ID); err != nil || got.State != api.AgentRollPaused {
		t.Fatalf("pause: %+v %v", got, err)
	}
	if got, err := e.s.ResumeAgentRoll(ctx, r.ID); err != nil || got.State != api.AgentRollRunning {
		t.Fatalf("resume: %+v %v", got, err)
	}
	if got, err := e.s.AbortAgentRoll(ctx, r.ID); err != nil || got.State != api.AgentRollAborted || len(got.Progress.Current) != 0 {
		t.Fatalf("abort: %+v %v", got, err)
	}
}
