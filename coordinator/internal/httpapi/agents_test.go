package httpapi

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

func (f *fake) ListAgents(ctx context.Context) (api.AgentList, error) {
	return api.AgentList{Agents: []api.AgentInfo{}}, f.record("ListAgents")
}

func (f *fake) GetAgent(ctx context.Context, id string) (api.AgentInfo, error) {
	return api.AgentInfo{ID: id}, f.record("GetAgent", id)
}

func (f *fake) CordonAgent(ctx context.Context, id string) (api.AgentInfo, error) {
	return api.AgentInfo{ID: id, State: api.AgentCordoned}, f.record("CordonAgent", id)
}

func (f *fake) UncordonAgent(ctx context.Context, id string) (api.AgentInfo, error) {
	return api.AgentInfo{ID: id, State: api.AgentActive}, f.record("UncordonAgent", id)
}

func (f *fake) DrainAgent(ctx context.Context, id string, force bool, origin string) (api.DrainStatus, error) {
	return api.DrainStatus{Agent: id, Force: force, Origin: origin}, f.record("DrainAgent", id, force, origin)
}

func (f *fake) DrainStatus(ctx context.Context, id string) (api.DrainStatus, error) {
	return api.DrainStatus{Agent: id}, f.record("DrainStatus", id)
}

func (f *fake) Rebalance(ctx context.Context, maxMoves int, dryRun bool) (api.Rebalance, error) {
	return api.Rebalance{DryRun: dryRun, MaxMoves: maxMoves}, f.record("Rebalance", maxMoves, dryRun)
}

func (f *fake) RebalanceStatus(ctx context.Context) (api.Rebalance, error) {
	return api.Rebalance{}, f.record("RebalanceStatus")
}

// TestAgentRoutes checks how the agent and rebalance routes bind their
// parameters, and their answers' status codes.
func TestAgentRoutes(t *testing.T) {
	f := newFake()
	srv := serve(t, f)
	for _, tt := range []struct{ method, path, msg string }{
		{"PUT", "/sluice/agents/a1/drain?force=yes", "Invalid value 'yes' for query parameter 'force': must be true or false"},
		{"PUT", "/sluice/agents/a1/drain?now=true", "Unknown query parameter 'now'"},
		{"PUT", "/sluice/agents/a1/cordon?force=true", "Unknown query parameter 'force'"},
		{"PUT", "/sluice/agents/a1/drain?origin=agent-roll", "Invalid origin 'agent-roll': must be operator or pre-stop"},
		{"PUT", "/sluice/agents/a1/drain?origin=", "Invalid origin '': must be operator or pre-stop"},
		{"POST", "/sluice/rebalance?max_moves=0", "Invalid max_moves '0': must be an integer from 1 to 1000 (how many tasks move at a time)"},
		{"POST", "/sluice/rebalance?dry_run=1", "Invalid value '1' for query parameter 'dry_run': must be true or false"},
	} {
		if r := do(t, srv, tt.method, tt.path, ""); r.status != 400 || !strings.Contains(r.body, tt.msg) {
			t.Errorf("%s %s: %d %s, want 400 %q", tt.method, tt.path, r.status, r.body, tt.msg)
		}
	}
	if r := do(t, srv, "PUT", "/sluice/agents/a1/drain?force=true", ""); r.status != 202 {
		t.Fatalf("drain: %d %s", r.status, r.body)
	}
	if args, _ := f.called("DrainAgent"); args[0] != "a1" || args[1] != true || args[2] != api.CordonOperator {
		t.Fatalf("drain bound %v", args)
	}
	if r := do(t, srv, "PUT", "/sluice/agents/a1/drain?origin=pre-stop", ""); r.status != 202 {
		t.Fatalf("pre-stop drain: %d %s", r.status, r.body)
	}
	if args, _ := f.called("DrainAgent"); args[0] != "a1" || args[1] != false || args[2] != api.CordonPreStop {
		t.Fatalf("pre-stop drain bound %v", args)
	}
	if r := do(t, srv, "POST", "/sluice/rebalance?max_moves=3&dry_run=true", ""); r.status != 200 {
		t.Fatalf("rebalance dry run: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "POST", "/sluice/rebalance", ""); r.status != 202 {
		t.Fatalf("rebalance: %d %s", r.status, r.body)
	}
	if args, _ := f.called("Rebalance"); args[0] != 0 || args[1] != false {
		t.Fatalf("rebalance bound %v", args)
	}
}
