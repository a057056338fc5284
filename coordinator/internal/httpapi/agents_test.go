package httpapi

import (
	"context"
	"strings"
	"testing"

	v1 "github.com/sluice-io/sluice/api/v1"
)

func (f *fake) ListAgents(ctx context.Context) (v1.AgentList, error) {
	return v1.AgentList{Agents: []v1.AgentInfo{}}, f.record("ListAgents")
}

func (f *fake) GetAgent(ctx context.Context, id string) (v1.AgentInfo, error) {
	return v1.AgentInfo{ID: id}, f.record("GetAgent", id)
}

func (f *fake) CordonAgent(ctx context.Context, id string) (v1.AgentInfo, error) {
	return v1.AgentInfo{ID: id, State: v1.AgentCordoned}, f.record("CordonAgent", id)
}

func (f *fake) UncordonAgent(ctx context.Context, id string) (v1.AgentInfo, error) {
	return v1.AgentInfo{ID: id, State: v1.AgentActive}, f.record("UncordonAgent", id)
}

func (f *fake) DrainAgent(ctx context.Context, id string, force bool) (v1.DrainStatus, error) {
	return v1.DrainStatus{Agent: id, Force: force}, f.record("DrainAgent", id, force)
}

func (f *fake) DrainStatus(ctx context.Context, id string) (v1.DrainStatus, error) {
	return v1.DrainStatus{Agent: id}, f.record("DrainStatus", id)
}

func (f *fake) Rebalance(ctx context.Context, maxMoves int, dryRun bool) (v1.Rebalance, error) {
	return v1.Rebalance{DryRun: dryRun, MaxMoves: maxMoves}, f.record("Rebalance", maxMoves, dryRun)
}

func (f *fake) RebalanceStatus(ctx context.Context) (v1.Rebalance, error) {
	return v1.Rebalance{}, f.record("RebalanceStatus")
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
	if args, _ := f.called("DrainAgent"); args[0] != "a1" || args[1] != true {
		t.Fatalf("drain bound %v", args)
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
