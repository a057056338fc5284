package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

// TestMigrationBodies: POST /sluice/migrations binds its body and
// dry_run, answers 400 for what it does not take, and hands the service
// the caller's admin check of each name.
func TestMigrationBodies(t *testing.T) {
	f := newFake()
	srv := serve(t, f)
	bad := []struct{ name, path, body, msg string }{
		{"no url", "/sluice/migrations", `{"connectors":"a"}`, `Give "url": the Kafka Connect REST URL to migrate from`},
		{"unknown field", "/sluice/migrations", `{"url":"http://c","token":"x"}`, `Unrecognized field "token"`},
		{"password without user", "/sluice/migrations", `{"url":"http://c","password":"p"}`, `"password" needs a "user"`},
		{"dry_run not a boolean", "/sluice/migrations?dry_run=yes", `{"url":"http://c"}`, "Invalid value 'yes' for query parameter 'dry_run': must be true or false"},
		{"body dry_run not a boolean", "/sluice/migrations", `{"url":"http://c","dry_run":"yes"}`, `Invalid value for field "dry_run"`},
		{"unknown parameter", "/sluice/migrations?force=true", `{"url":"http://c"}`, "Unknown query parameter 'force'"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, srv, "POST", tt.path, tt.body)
			if r.status != 400 || !strings.Contains(r.body, jsonText(t, tt.msg)) {
				t.Fatalf("%s %s: got %d %s, want 400 with %q", tt.path, tt.body, r.status, r.body, tt.msg)
			}
		})
	}
	r := do(t, srv, "POST", "/sluice/migrations?dry_run=true", `{"url":"http://c:8083","connectors":"a","leave_stopped":true,"delete_source":true,"stop_timeout":"1m","user":"u","password":"p"}`)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	args, _ := f.called("Migrate")
	want := api.MigrationRequest{URL: "http://c:8083", Connectors: "a", LeaveStopped: true, DeleteSource: true, StopTimeout: "1m", User: "u", Password: "p", DryRun: true}
	if args[0].(api.MigrationRequest) != want || args[1] != true {
		t.Fatalf("bound %+v", args)
	}
	// dry_run in the body, as the console sends it.
	do(t, srv, "POST", "/sluice/migrations", `{"url":"http://c:8083","dry_run":true}`)
	if args, _ = f.called("Migrate"); args[1] != true {
		t.Fatalf("dry_run in the body: %+v", args)
	}
	do(t, srv, "POST", "/sluice/migrations", `{"url":"http://c:8083","dry_run":false}`)
	if args, _ = f.called("Migrate"); args[1] != false {
		t.Fatalf("dry_run false: %+v", args)
	}

	// Only an admin may.
	secured := httptest.NewServer(NewHandler(f.services(), WithSecurity(Security{Authenticator: testAuthenticator(t)})))
	t.Cleanup(secured.Close)
	r = do(t, secured, "POST", "/sluice/migrations", `{"url":"http://c","connectors":"x"}`, "Authorization", basicHeader("tom", "pw-tom"))
	if r.status != 403 {
		t.Fatalf("an operator: %d %s", r.status, r.body)
	}
	r = do(t, secured, "POST", "/sluice/migrations", `{"url":"http://c","connectors":"x,y"}`, "Authorization", basicHeader("ada", "pw-ada"))
	if r.status != 200 || strings.Count(r.body, `"result":"migrated"`) != 2 {
		t.Fatalf("an admin: %d %s", r.status, r.body)
	}
}
