package httpapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/auth"
)

// testPrincipals are the callers of the authorization tests, each with the
// Authorization header it sends.
var testPrincipals = []struct{ name, header string }{
	{"anonymous", ""},
	{"viewer", basicHeader("vera", "pw-vera")},
	{"operator", "Bearer op-token"},
	{"admin", basicHeader("ada", "pw-ada")},
	{"team-a operator", basicHeader("tom", "pw-tom")},
}

func basicHeader(user, pw string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
}

func mustHash(t *testing.T, pw string) []byte {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// testAuthenticator knows the testPrincipals.
func testAuthenticator(t *testing.T) *auth.Authenticator {
	t.Helper()
	f := &auth.File{Entries: []auth.Entry{
		{Name: "vera", PasswordHash: mustHash(t, "pw-vera"), Grants: []auth.Grant{{Role: auth.RoleViewer}}},
		{Name: "otto", TokenHash: auth.TokenHash("op-token"), Grants: []auth.Grant{{Role: auth.RoleOperator}}},
		{Name: "ada", PasswordHash: mustHash(t, "pw-ada"), Grants: []auth.Grant{{Role: auth.RoleAdmin}}},
		{Name: "tom", PasswordHash: mustHash(t, "pw-tom"), Grants: []auth.Grant{{Role: auth.RoleOperator, Connectors: []string{"team-a-*"}}}},
	}}
	a, err := auth.NewAuthenticator(context.Background(), auth.Config{File: f})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// operatorOps are the operations an operator may call beyond reads, as
// docs/security.md lists them (written out here, not taken from the
// route table, so that the test checks the table).
var operatorOps = map[string]bool{
	"create_connector": true, "put_connector_config": true, "patch_connector_config": true,
	"restart_task": true, "stop_connector": true, "pause_connector": true, "resume_connector": true,
	"restart_connector": true, "reset_connector_topics": true, "validate_config": true,
	"bulk_pause": true, "bulk_resume": true, "bulk_stop": true, "bulk_restart": true,
	"open_maintenance": true, "close_maintenance": true,
	"create_rollout": true, "pause_rollout": true, "resume_rollout": true, "abort_rollout": true,
	"restore_config": true,
	"send_signal":    true,
}

// adminReads are the GETs that only admins may make: the audit trail
// shows every write with its configs, so it is an admin's (issue 14).
var adminReads = map[string]bool{"audit_log": true}

// postReads are the POSTs that change nothing, which viewers may make: a
// preview of an offsets change.
var postReads = map[string]bool{"preview_offsets": true}

// requestFor is a request of route rt on connector conn that the fake
// Service answers with success.
func requestFor(rt route, conn string) (method, path, body string) {
	method, path, _ = strings.Cut(rt.pattern, " ")
	path = strings.NewReplacer("{$}", "", "{task}", "0", "{plugin}", "X", "{id}", goodID).Replace(path)
	if strings.HasPrefix(path, "/admin/loggers/") {
		path = "/admin/loggers/root"
	}
	path = strings.ReplaceAll(path, "{name}", conn)
	switch rt.op {
	case "create_connector":
		body = `{"name":"` + conn + `","config":{}}`
	case "put_connector_config", "patch_connector_config":
		body = `{}`
	case "validate_config":
		body = `{"connector.class":"X"}`
	case "alter_offsets":
		body = `{"offsets":[{"partition":{"f":"x"},"offset":{"p":1}}]}`
	case "set_logger_level":
		body = `{"level":"DEBUG"}`
	case "preview_offsets":
		body = `{"reset":true}`
	case "reset_offsets_to":
		body = `{"to":"earliest"}`
	case "restore_offsets":
		body = `{"from":"x"}`
	case "move_connector":
		body = `{"to":"` + conn + `-2"}`
	case "send_signal":
		body = `{"type":"stop-snapshot"}`
	case "bulk_pause", "bulk_resume", "bulk_stop", "bulk_restart":
		body = `{"names":["` + conn + `"]}`
	case "open_maintenance":
		body = `{"names":["` + conn + `"],"state":"STOPPED"}`
	case "create_rollout":
		body = `{"match":"` + conn + `*","patch":{"k":"v"}}`
	case "migrate":
		body = `{"url":"http://connect:8083","connectors":"` + conn + `"}`
	}
	return method, path, body
}

// TestAuthorizationMatrix calls every route as every test principal, on a
// connector of team a and on another one: anonymous gets 401 with a
// challenge, a caller without the role 403 naming it, everyone else the
// answer the route gives without security.
func TestAuthorizationMatrix(t *testing.T) {
	open := httptest.NewServer(NewHandler(newFake().services()))
	t.Cleanup(open.Close)
	secured := httptest.NewServer(NewHandler(newFake().services(), WithSecurity(Security{Authenticator: testAuthenticator(t)})))
	t.Cleanup(secured.Close)
	for _, rt := range routes() {
		for _, conn := range []string{"team-a-1", "b"} {
			method, path, body := requestFor(rt, conn)
			base := do(t, open, method, path, body)
			if base.status >= 300 && rt.op != "health" {
				t.Fatalf("%s %s without security: %d %s", method, path, base.status, base.body)
			}
			for _, p := range testPrincipals {
				t.Run(rt.op+"/"+conn+"/"+p.name, func(t *testing.T) {
					var allowed bool
					read := method == http.MethodGet && !adminReads[rt.op] || postReads[rt.op]
					switch p.name {
					case "viewer":
						allowed = read
					case "operator":
						allowed = read || operatorOps[rt.op]
					case "admin":
						allowed = true
					case "team-a operator":
						allowed = (read || operatorOps[rt.op]) && (!rt.connectorScoped() || strings.HasPrefix(conn, "team-a-"))
					}
					got := do(t, secured, method, path, body, "Authorization", p.header)
					want := base.status
					switch {
					case p.name == "anonymous":
						want = http.StatusUnauthorized
					case !allowed:
						want = http.StatusForbidden
					}
					if got.status != want {
						t.Fatalf("%s %s: %d %s, want %d", method, path, got.status, got.body, want)
					}
					if want == http.StatusUnauthorized && !strings.Contains(got.header.Get("WWW-Authenticate"), "Basic realm=") {
						t.Errorf("401 without a Basic challenge: %v", got.header)
					}
					if want == http.StatusForbidden && !strings.Contains(got.body, `"error_code":403`) {
						t.Errorf("403 body %s", got.body)
					}
				})
			}
		}
	}
}

// TestEveryRouteDeclaresRole fails for a route added without a role.
func TestEveryRouteDeclaresRole(t *testing.T) {
	for _, rt := range routes() {
		if rt.role == auth.RoleNone {
			t.Errorf("route %s (%s) declares no role", rt.pattern, rt.op)
		}
	}
}

// TestDeniedMessages checks the 401 and 403 messages say who and why.
func TestDeniedMessages(t *testing.T) {
	srv := httptest.NewServer(NewHandler(newFake().services(), WithSecurity(Security{Authenticator: testAuthenticator(t)})))
	t.Cleanup(srv.Close)
	tests := []struct {
		method, path, header, want string
	}{
		{"DELETE", "/connectors/team-a-1", basicHeader("tom", "pw-tom"),
			`User tom may not DELETE /connectors/team-a-1: the role admin is needed, and tom has operator for connectors team-a-*`},
		{"PUT", "/connectors/b/pause", basicHeader("tom", "pw-tom"),
			`User tom may not PUT /connectors/b/pause: the role operator for connector b is needed, and tom has operator for connectors team-a-*`},
		{"GET", "/connectors", basicHeader("tom", "wrong"), `The Basic credentials were refused: unknown user \"tom\" or wrong password`},
		{"GET", "/connectors", "Bearer nope", `The bearer token was refused: it is no token of the auth file`},
		{"GET", "/connectors", "", `Authentication required: no credentials were sent (send HTTP Basic or a bearer token)`},
		{"GET", "/connectors", "Digest x", `The Authorization scheme \"Digest\" is not supported: use Basic or Bearer`},
	}
	for _, tt := range tests {
		got := do(t, srv, tt.method, tt.path, "", "Authorization", tt.header)
		if !strings.Contains(got.body, tt.want) {
			t.Errorf("%s %s: %d %s, want message %s", tt.method, tt.path, got.status, got.body, tt.want)
		}
	}
}

// TestListShowsOnlyVisible checks GET /connectors (plain and expanded)
// lists only the connectors the caller may see.
func TestListShowsOnlyVisible(t *testing.T) {
	f := newFake()
	f.expanded = map[string]api.ConnectorExpanded{"team-a-1": {}, "b": {}}
	srv := httptest.NewServer(NewHandler(f.services(), WithSecurity(Security{Authenticator: testAuthenticator(t)})))
	t.Cleanup(srv.Close)
	tom := basicHeader("tom", "pw-tom")
	if got := do(t, srv, "GET", "/connectors", "", "Authorization", tom); got.body != `[]` {
		t.Errorf("list as tom: %s", got.body) // the fake lists a and b
	}
	if got := do(t, srv, "GET", "/connectors?expand=status", "", "Authorization", tom); got.body != `{"team-a-1":{}}` {
		t.Errorf("expanded list as tom: %s", got.body)
	}
	if got := do(t, srv, "GET", "/connectors", "", "Authorization", basicHeader("vera", "pw-vera")); got.body != `["a","b"]` {
		t.Errorf("list as vera: %s", got.body)
	}
}

// TestOpenProbes checks --rest-auth-open-probes leaves GET / and /health
// open, and only them.
func TestOpenProbes(t *testing.T) {
	srv := httptest.NewServer(NewHandler(newFake().services(), WithSecurity(Security{Authenticator: testAuthenticator(t), OpenProbes: true})))
	t.Cleanup(srv.Close)
	for path, want := range map[string]int{"/": 200, "/health": 503, "/connectors": 401} {
		if got := do(t, srv, "GET", path, ""); got.status != want {
			t.Errorf("GET %s anonymous: %d %s, want %d", path, got.status, got.body, want)
		}
	}
}
