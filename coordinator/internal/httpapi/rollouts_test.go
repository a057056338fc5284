package httpapi

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

func (f *fake) CreateRollout(ctx context.Context, req api.RolloutRequest, allow func(string) error) (api.Rollout, error) {
	if err := allowAll(allow, req.Selector.Names); err != nil {
		return api.Rollout{}, err
	}
	return api.Rollout{ID: "r1", State: api.RolloutRunning, Request: req}, f.record("CreateRollout", req)
}

func (f *fake) PlanRollout(ctx context.Context, req api.RolloutRequest, allow func(string) error) (api.Rollout, error) {
	if err := allowAll(allow, req.Selector.Names); err != nil {
		return api.Rollout{}, err
	}
	return api.Rollout{State: api.RolloutPlanned, Request: req}, f.record("PlanRollout", req)
}

func (f *fake) Rollouts(ctx context.Context) (api.RolloutList, error) {
	return api.RolloutList{Rollouts: []api.Rollout{}}, f.record("Rollouts")
}

func (f *fake) Rollout(ctx context.Context, id string) (api.Rollout, error) {
	return api.Rollout{ID: id}, f.record("Rollout", id)
}

func (f *fake) PauseRollout(ctx context.Context, id string, allow func(string) error) (api.Rollout, error) {
	if err := allowAll(allow, fakeRolloutConnectors(id)); err != nil {
		return api.Rollout{}, err
	}
	return api.Rollout{ID: id, State: api.RolloutPaused}, f.record("PauseRollout", id)
}

func (f *fake) ResumeRollout(ctx context.Context, id string, allow func(string) error) (api.Rollout, error) {
	if err := allowAll(allow, fakeRolloutConnectors(id)); err != nil {
		return api.Rollout{}, err
	}
	return api.Rollout{ID: id, State: api.RolloutRunning}, f.record("ResumeRollout", id)
}

func (f *fake) AbortRollout(ctx context.Context, id string, allow func(string) error) (api.Rollout, error) {
	if err := allowAll(allow, fakeRolloutConnectors(id)); err != nil {
		return api.Rollout{}, err
	}
	return api.Rollout{ID: id, State: api.RolloutAborted}, f.record("AbortRollout", id)
}

// fakeRolloutConnectors are the connectors of the fake's rollout id: those
// listed after "of:" (a,b), or none.
func fakeRolloutConnectors(id string) []string {
	list, ok := strings.CutPrefix(id, "of:")
	if !ok {
		return nil
	}
	return strings.Split(list, ",")
}

// allowAll is the 403 of the first connector allow refuses, as the herder
// answers it.
func allowAll(allow func(string) error, names []string) error {
	for _, n := range names {
		if err := allow(n); err != nil {
			return api.Errorf(api.CodeForbidden, "%s", err.Error())
		}
	}
	return nil
}

// TestRolloutGrants: the rollout routes hand their service the caller's
// grant check, as an operator; a refusal names POST /sluice/rollouts for a
// create and the rollout's path (not the action's) for a change.
func TestRolloutGrants(t *testing.T) {
	srv := httptest.NewServer(NewHandler(newFake().services(), WithSecurity(Security{Authenticator: testAuthenticator(t)})))
	t.Cleanup(srv.Close)
	tom, otto := basicHeader("tom", "pw-tom"), "Bearer op-token"
	tests := []struct {
		method, path, body, caller string
		status                     int
		want                       string
	}{
		{"POST", "/sluice/rollouts", `{"names":["team-a-1","b"],"patch":{"k":"v"}}`, tom, 403,
			`User tom may not POST /sluice/rollouts: the role operator for connector b is needed, and tom has operator for connectors team-a-*`},
		{"POST", "/sluice/rollouts", `{"names":["team-a-1","b"],"patch":{"k":"v"}}`, otto, 201, ""},
		{"PUT", "/sluice/rollouts/of:team-a-1,b/abort", "", tom, 403,
			`User tom may not PUT /sluice/rollouts/of:team-a-1,b: the role operator for connector b is needed, and tom has operator for connectors team-a-*`},
		{"PUT", "/sluice/rollouts/of:team-a-1/pause", "", tom, 200, ""},
		{"PUT", "/sluice/rollouts/of:team-a-1,b/resume", "", otto, 200, ""},
	}
	for _, tc := range tests {
		got := do(t, srv, tc.method, tc.path, tc.body, "Authorization", tc.caller)
		if got.status != tc.status || (tc.want != "" && !strings.Contains(got.body, tc.want)) {
			t.Errorf("%s %s: %d %s, want %d %s", tc.method, tc.path, got.status, got.body, tc.status, tc.want)
		}
	}
}

// TestRolloutBodies checks how POST /sluice/rollouts binds its body: every
// field, null patch values kept, batches as their JSON, and a 400 naming
// what it does not take.
func TestRolloutBodies(t *testing.T) {
	f := newFake()
	srv := serve(t, f)
	bad := []struct{ name, body, msg string }{
		{"unknown field", `{"match":"a*","patch":{"k":"v"},"batch":[1]}`, `Unrecognized field "batch"`},
		{"unknown health field", `{"match":"a*","patch":{"k":"v"},"health":{"running":"1s"}}`, `Unrecognized field "running"`},
		{"health not an object", `{"match":"a*","patch":{"k":"v"},"health":"1s"}`, `Invalid value for field "health": expected object`},
		{"patch not an object", `{"match":"a*","patch":["k"]}`, `Invalid value for field "patch": expected object`},
		{"patch value an object", `{"match":"a*","patch":{"k":{}}}`, `Invalid value for field "k": expected string`},
		{"batches not an array", `{"match":"a*","patch":{"k":"v"},"batches":1}`, `Invalid value for field "batches": expected an array of numbers and strings`},
		{"batch an object", `{"match":"a*","patch":{"k":"v"},"batches":[{}]}`, `Invalid value for field "batches": expected an array of numbers and strings`},
		{"names not strings", `{"names":[1],"patch":{"k":"v"}}`, `Invalid value for field "names": expected an array of strings`},
		{"max_failed_tasks not an integer", `{"match":"a*","patch":{"k":"v"},"health":{"max_failed_tasks":1.5}}`, `Invalid value for field "health.max_failed_tasks": expected an integer`},
		{"query parameter", `{"match":"a*","patch":{"k":"v"}}`, "Unknown query parameter 'force'"},
		{"dry_run not a bool", `{"match":"a*","patch":{"k":"v"}}`, "dry_run"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			path := "/sluice/rollouts"
			switch tt.name {
			case "query parameter":
				path += "?force=true"
			case "dry_run not a bool":
				path += "?dry_run=maybe"
			}
			r := do(t, srv, "POST", path, tt.body)
			if r.status != 400 || !strings.Contains(r.body, jsonText(t, tt.msg)) {
				t.Fatalf("POST %s %s: got %d %s, want 400 with %q", path, tt.body, r.status, r.body, tt.msg)
			}
		})
	}

	r := do(t, srv, "POST", "/sluice/rollouts", `{"match":"orders-*","patch":{"k":"v","gone":null,"n":5},
		"batches":[1,"25%","rest"],"health":{"running_for":"10s","max_failed_tasks":2},"on_failure":"rollback"}`)
	if r.status != 201 || r.header.Get("Location") != "/sluice/rollouts/r1" {
		t.Fatalf("create: %d %v %s", r.status, r.header, r.body)
	}
	args, _ := f.called("CreateRollout")
	req := args[0].(api.RolloutRequest)
	batches, _ := json.Marshal(req.Batches)
	if req.Match != "orders-*" || *req.Patch["k"] != "v" || *req.Patch["n"] != "5" || req.Patch["gone"] != nil || len(req.Patch) != 3 ||
		string(batches) != `[1,"25%","rest"]` || req.Health.RunningFor != "10s" || req.Health.MaxFailedTasks != 2 || req.OnFailure != "rollback" {
		t.Fatalf("bound %+v, batches %s", req, batches)
	}
	// A dry run answers the plan, 200 with no Location, and creates nothing.
	r = do(t, srv, "POST", "/sluice/rollouts?dry_run=true", `{"match":"orders-*","patch":{"k":"v"}}`)
	if r.status != 200 || r.header.Get("Location") != "" || !strings.Contains(r.body, `"state":"planned"`) {
		t.Fatalf("dry run: %d %v %s", r.status, r.header, r.body)
	}
	if args, _ := f.called("PlanRollout"); args[0].(api.RolloutRequest).Match != "orders-*" {
		t.Fatalf("plan got %v", args)
	}
	for _, action := range []string{"pause", "resume", "abort"} {
		if r := do(t, srv, "PUT", "/sluice/rollouts/r1/"+action, ""); r.status != 200 {
			t.Fatalf("%s: %d %s", action, r.status, r.body)
		}
	}
	if args, _ := f.called("AbortRollout"); args[0] != "r1" {
		t.Fatalf("abort got %v", args)
	}
}
