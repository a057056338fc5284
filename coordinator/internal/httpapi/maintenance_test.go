package httpapi

import (
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

// TestSelectorBodies checks how the bulk and maintenance routes bind their
// bodies and queries, and the 400s of what they do not take.
func TestSelectorBodies(t *testing.T) {
	f := newFake()
	srv := serve(t, f)
	bad := []struct{ name, method, path, body, msg string }{
		{"bulk field unknown", "POST", "/sluice/connectors/pause", `{"match":"a*","force":true}`, `Unrecognized field "force"`},
		{"bulk names not strings", "POST", "/sluice/connectors/stop", `{"names":["a",1]}`, `Invalid value for field "names": expected an array of strings`},
		{"bulk match not a string", "POST", "/sluice/connectors/resume", `{"match":["a*"]}`, `Invalid value for field "match"`},
		{"bulk body not an object", "POST", "/sluice/connectors/pause", `["a"]`, "Invalid JSON in request body: expected a JSON object"},
		{"bulk without a body", "POST", "/sluice/connectors/pause", ``, "Invalid JSON"},
		{"bulk parameter unknown", "POST", "/sluice/connectors/pause?dry_run=true", `{"match":"a*"}`, "Unknown query parameter 'dry_run': POST /sluice/connectors/pause takes []"},
		{"bulk restart flag not a boolean", "POST", "/sluice/connectors/restart?includeTasks=yes", `{"match":"a*"}`, "Invalid value 'yes' for query parameter 'includeTasks': must be true or false"},
		{"window field unknown", "POST", "/sluice/maintenance", `{"match":"a*","state":"STOPPED","until":"1h"}`, `Unrecognized field "until"`},
		{"window without state", "POST", "/sluice/maintenance", `{"match":"a*"}`, `Give "state": STOPPED or PAUSED`},
		{"window state not a string", "POST", "/sluice/maintenance", `{"match":"a*","state":{}}`, `Invalid value for field "state"`},
		{"window parameter unknown", "POST", "/sluice/maintenance?x=1", `{"match":"a*","state":"PAUSED"}`, "Unknown query parameter 'x'"},
		{"list parameter unknown", "GET", "/sluice/maintenance?all=true", ``, "Unknown query parameter 'all': GET /sluice/maintenance takes []"},
		{"close parameter unknown", "DELETE", "/sluice/maintenance/w1?force=true", ``, "Unknown query parameter 'force': DELETE /sluice/maintenance/{id} takes []"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, srv, tt.method, tt.path, tt.body)
			if r.status != 400 || !strings.Contains(r.body, jsonText(t, tt.msg)) || !strings.Contains(r.body, `"error_code":400`) {
				t.Fatalf("%s %s %s: got %d %s, want 400 with %q", tt.method, tt.path, tt.body, r.status, r.body, tt.msg)
			}
		})
	}

	if r := do(t, srv, "POST", "/sluice/connectors/restart?includeTasks=true&onlyFailed=true", `{"names":["a","b"]}`); r.status != 200 ||
		r.body != `{"results":[{"connector":"a","status":202},{"connector":"b","status":202}]}` {
		t.Fatalf("bulk restart: %d %s", r.status, r.body)
	}
	args, _ := f.called("BulkAction")
	if sel := args[1].(api.Selector); args[0] != "restart" || strings.Join(sel.Names, ",") != "a,b" || args[2] != true || args[3] != true {
		t.Fatalf("bulk restart bound %v", args)
	}
	do(t, srv, "POST", "/sluice/connectors/stop", `{"match":"orders-*"}`)
	if args, _ = f.called("BulkAction"); args[0] != "stop" || args[1].(api.Selector).Match != "orders-*" || args[2] != false {
		t.Fatalf("bulk stop bound %v", args)
	}

	if r := do(t, srv, "POST", "/sluice/maintenance", `{"names":["a"],"state":"PAUSED","reason":"upgrade"}`); r.status != 201 {
		t.Fatalf("open window: %d %s", r.status, r.body)
	}
	args, _ = f.called("OpenMaintenance")
	if req := args[0].(api.MaintenanceRequest); strings.Join(req.Names, ",") != "a" || req.State != "PAUSED" || req.Reason != "upgrade" {
		t.Fatalf("open window bound %+v", req)
	}
	if r := do(t, srv, "DELETE", "/sluice/maintenance/w1", ""); r.status != 200 {
		t.Fatalf("close window: %d %s", r.status, r.body)
	}
	if args, _ = f.called("CloseMaintenance"); args[0] != "w1" {
		t.Fatalf("close window bound %v", args)
	}
}
