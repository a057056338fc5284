package httpapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

func (f *fake) CreateAgentRoll(ctx context.Context, req api.AgentRollRequest) (api.AgentRoll, error) {
	return api.AgentRoll{ID: "r1", State: api.AgentRollRunning, Request: req}, f.record("CreateAgentRoll", req)
}

func (f *fake) AgentRolls(ctx context.Context) (api.AgentRollList, error) {
	return api.AgentRollList{Rolls: []api.AgentRoll{}}, f.record("AgentRolls")
}

func (f *fake) AgentRoll(ctx context.Context, id string) (api.AgentRoll, error) {
	return api.AgentRoll{ID: id}, f.record("AgentRoll", id)
}

func (f *fake) PauseAgentRoll(ctx context.Context, id string) (api.AgentRoll, error) {
	return api.AgentRoll{ID: id, State: api.AgentRollPaused}, f.record("PauseAgentRoll", id)
}

func (f *fake) ResumeAgentRoll(ctx context.Context, id string) (api.AgentRoll, error) {
	return api.AgentRoll{ID: id, State: api.AgentRollRunning}, f.record("ResumeAgentRoll", id)
}

func (f *fake) AbortAgentRoll(ctx context.Context, id string) (api.AgentRoll, error) {
	return api.AgentRoll{ID: id, State: api.AgentRollAborted}, f.record("AbortAgentRoll", id)
}

// TestAgentRollRoutes checks how the agent roll routes bind their body
// and parameters, and their answers: a create is a 201 with the roll's
// Location; an empty body asks for the defaults.
func TestAgentRollRoutes(t *testing.T) {
	f := newFake()
	srv := serve(t, f)
	for _, tt := range []struct{ method, path, body, msg string }{
		{"POST", "/sluice/fleet/rolls", `{"agents":["a"],"restart":"now"}`, "restart"},
		{"POST", "/sluice/fleet/rolls", `{"agents":"a"}`, "agents"},
		{"POST", "/sluice/fleet/rolls", `{"batch_size":"2"}`, "batch_size"},
		{"POST", "/sluice/fleet/rolls?wait=true", `{}`, "Unknown query parameter 'wait'"},
		{"PUT", "/sluice/fleet/rolls/r1/pause?now=true", "", "Unknown query parameter 'now'"},
	} {
		if r := do(t, srv, tt.method, tt.path, tt.body); r.status != 400 || !strings.Contains(r.body, tt.msg) {
			t.Errorf("%s %s %s: %d %s, want 400 naming %q", tt.method, tt.path, tt.body, r.status, r.body, tt.msg)
		}
	}
	r := do(t, srv, "POST", "/sluice/fleet/rolls", `{"agents":["b","a"],"batch_size":2,"timeout":"90s"}`)
	var roll api.AgentRoll
	if r.status != 201 || json.Unmarshal([]byte(r.body), &roll) != nil || roll.ID != "r1" {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	args, _ := f.called("CreateAgentRoll")
	if got := args[0].(api.AgentRollRequest); strings.Join(got.Agents, ",") != "b,a" || got.BatchSize != 2 || got.Timeout != "90s" {
		t.Fatalf("the request bound: %+v", got)
	}
	if r := do(t, srv, "POST", "/sluice/fleet/rolls", ""); r.status != 201 {
		t.Fatalf("create with no body: %d %s", r.status, r.body)
	}
	for _, tt := range []struct{ method, path, call string }{
		{"GET", "/sluice/fleet/rolls", "AgentRolls"},
		{"GET", "/sluice/fleet/rolls/r1", "AgentRoll"},
		{"PUT", "/sluice/fleet/rolls/r1/pause", "PauseAgentRoll"},
		{"PUT", "/sluice/fleet/rolls/r1/resume", "ResumeAgentRoll"},
		{"PUT", "/sluice/fleet/rolls/r1/abort", "AbortAgentRoll"},
	} {
		r := do(t, srv, tt.method, tt.path, "")
		if _, called := f.called(tt.call); r.status != 200 || !called {
			t.Errorf("%s %s: %d %s, %s called: %v", tt.method, tt.path, r.status, r.body, tt.call, called)
		}
	}
}
