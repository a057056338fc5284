package integration

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

// roleCaller is a caller of TestRESTRolesOnCluster: its credentials and
// whether it may call a route of a role on a connector of team a or not.
type roleCaller struct {
	name string
	// principal is the name the audit trail records for the caller.
	principal string
	headers   []string
	may       func(role string, teamA bool) bool
}

// TestRESTRolesOnCluster calls every REST route of a running cluster as
// anonymous, a viewer, an operator, an admin and an operator limited to
// team a's connectors, on a connector of team a and one of another team.
// Callers without the right are refused first (401 or 403, nothing
// changes); then the least caller with the right gets the route's success.
func TestRESTRolesOnCluster(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	authFile := writeFile(t, dir, "auth.yaml", []byte(fmt.Sprintf(`principals:
  - {name: vera, password_bcrypt: %q, grants: [{role: viewer}]}
  - {name: tom, password_bcrypt: %q, grants: [{role: operator, connectors: ["team-a-*"]}]}
  - {name: otto, password_bcrypt: %q, grants: [{role: operator}]}
  - {name: ada, password_bcrypt: %q, grants: [{role: admin}]}
`, bcryptOf(t, "v"), bcryptOf(t, "t"), bcryptOf(t, "o"), bcryptOf(t, "a"))))
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, RESTSecurity: coordinator.RESTSecurity{AuthFile: authFile}})
	c.Headers = basicAuth("vera", "v") // for the harness's status reads
	rank := map[string]int{"viewer": 1, "operator": 2, "admin": 3}
	callers := []roleCaller{
		{"anonymous", "anonymous", nil, func(string, bool) bool { return false }},
		{"viewer", "vera", basicAuth("vera", "v"), func(role string, _ bool) bool { return rank[role] <= 1 }},
		{"team-a operator", "tom", basicAuth("tom", "t"), func(role string, teamA bool) bool { return rank[role] <= 2 && teamA }},
		{"operator", "otto", basicAuth("otto", "o"), func(role string, _ bool) bool { return rank[role] <= 2 }},
		{"admin", "ada", basicAuth("ada", "a"), func(string, bool) bool { return true }},
	}
	topic := c.Name("t")
	mine, theirs := "team-a-"+c.Name("src"), c.Name("src")
	writeLines(t, filepath.Join(c.WorkDir, "in.txt"), []string{"x"})
	cfg := fileSourceCfg("in.txt", topic)
	offsets := map[string]any{"offsets": []any{map[string]any{"partition": map[string]any{"filename": "in.txt"}, "offset": map[string]any{"position": 1}}}}
	type step struct {
		method, path string
		body         any
		role         string
		want         int
		// teamA: the route acts on team a's connector (or names none:
		// the role alone counts).
		teamA bool
		after func()
	}
	running := func(name string) func() {
		return func() { c.WaitState(name, "RUNNING", 1, "RUNNING") }
	}
	var steps []step
	for _, n := range []string{mine, theirs} {
		a := n == mine
		p := "/connectors/" + n
		steps = append(steps,
			step{"POST", "/connectors", map[string]any{"name": n, "config": cfg}, "operator", 201, a, running(n)},
			step{"GET", p, nil, "viewer", 200, a, nil},
			step{"GET", p + "/config", nil, "viewer", 200, a, nil},
			step{"GET", p + "/status", nil, "viewer", 200, a, nil},
			step{"GET", p + "/tasks", nil, "viewer", 200, a, nil},
			step{"GET", p + "/tasks/0/status", nil, "viewer", 200, a, nil},
			step{"GET", p + "/topics", nil, "viewer", 200, a, nil},
			step{"GET", p + "/offsets", nil, "viewer", 200, a, nil},
			step{"GET", "/sluice" + p + "/gauges", nil, "viewer", 200, a, nil},
			step{"PUT", p + "/config", cfg, "operator", 200, a, nil},
			step{"PATCH", p + "/config", map[string]any{"batch.size": "10"}, "operator", 200, a, nil},
			step{"PUT", p + "/pause", nil, "operator", 202, a, nil},
			step{"PUT", p + "/resume", nil, "operator", 202, a, running(n)},
			step{"POST", p + "/restart", nil, "operator", 204, a, nil},
			step{"POST", p + "/tasks/0/restart", nil, "operator", 204, a, nil},
			step{"PUT", p + "/topics/reset", nil, "operator", 202, a, nil},
			step{"PUT", p + "/stop", nil, "operator", 204, a, nil},
			step{"POST", "/sluice" + p + "/offsets/preview", map[string]any{"reset": true}, "viewer", 200, a, nil},
			step{"POST", "/sluice" + p + "/offsets/reset", map[string]any{"to": "earliest"}, "admin", 200, a, nil},
			step{"PATCH", p + "/offsets", offsets, "admin", 200, a, nil},
			step{"GET", "/sluice" + p + "/offsets/history", nil, "viewer", 200, a, nil},
			step{"DELETE", p + "/offsets", nil, "admin", 200, a, nil},
			step{"POST", "/sluice" + p + "/offsets/restore", map[string]any{"from": n}, "admin", 200, a, nil},
			step{"POST", "/sluice" + p + "/move", map[string]any{"to": n + "-copy", "copy": true}, "admin", 200, a, nil},
			step{"DELETE", p + "-copy", nil, "admin", 204, a, nil},
			step{"DELETE", p, nil, "admin", 204, a, nil},
		)
	}
	steps = append(steps,
		step{"GET", "/", nil, "viewer", 200, true, nil},
		step{"GET", "/health", nil, "viewer", 200, true, nil},
		step{"GET", "/connectors", nil, "viewer", 200, true, nil},
		step{"GET", "/connector-plugins", nil, "viewer", 200, true, nil},
		step{"GET", "/connector-plugins/FileStreamSource/config", nil, "viewer", 200, true, nil},
		step{"PUT", "/connector-plugins/FileStreamSource/config/validate", cfg, "operator", 200, true, nil},
		step{"GET", "/admin/loggers", nil, "viewer", 200, true, nil},
		step{"GET", "/admin/loggers/root", nil, "viewer", 200, true, nil},
		step{"PUT", "/admin/loggers/root", map[string]string{"level": "WARN"}, "admin", 200, true, nil},
		step{"GET", "/sluice/audit", nil, "admin", 200, true, nil},
		// The selector routes' roles; their grants per connector are
		// TestMaintenanceGrants'.
		step{"POST", "/sluice/connectors/pause", map[string]any{"match": "none-*"}, "operator", 400, true, nil},
		step{"POST", "/sluice/connectors/resume", map[string]any{"match": "none-*"}, "operator", 400, true, nil},
		step{"POST", "/sluice/connectors/stop", map[string]any{"match": "none-*"}, "operator", 400, true, nil},
		step{"POST", "/sluice/connectors/restart", map[string]any{"match": "none-*"}, "operator", 400, true, nil},
		step{"POST", "/sluice/maintenance", map[string]any{"match": "none-*", "state": "STOPPED"}, "operator", 400, true, nil},
		step{"GET", "/sluice/maintenance", nil, "viewer", 200, true, nil},
		step{"GET", "/sluice/maintenance/none", nil, "viewer", 404, true, nil},
		step{"DELETE", "/sluice/maintenance/none", nil, "operator", 404, true, nil},
	)
	// Every write, refused or not, must leave its audit record naming its
	// caller.
	type write struct {
		principal, method, path string
		status                  int
	}
	var writes []write
	for _, s := range steps {
		var allowed []roleCaller
		for _, cl := range callers {
			if cl.may(s.role, s.teamA) {
				allowed = append(allowed, cl)
				continue
			}
			r := sluicetest.DoWith(t, c.URL, s.method, s.path, s.body, cl.headers...)
			want := http.StatusForbidden
			if cl.name == "anonymous" {
				want = http.StatusUnauthorized
			}
			if r.Status != want {
				t.Fatalf("%s %s as %s: %s, want %d", s.method, s.path, cl.name, r, want)
			}
			if s.method != "GET" {
				writes = append(writes, write{cl.principal, s.method, s.path, want})
			}
		}
		// A read may be repeated by everyone allowed; a write is made
		// once, by the least caller allowed.
		if s.method != "GET" {
			allowed = allowed[:1]
		}
		for _, cl := range allowed {
			var r sluicetest.Response
			sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
				r = sluicetest.DoWith(t, c.URL, s.method, s.path, s.body, cl.headers...)
				// A just-created connector's task may not be listed
				// yet: only a 404 is tried again.
				return r.Status != http.StatusNotFound || s.want == http.StatusNotFound, r.String()
			})
			if r.Status != s.want {
				t.Fatalf("%s %s as %s: %s, want %d", s.method, s.path, cl.name, r, s.want)
			}
			if s.method != "GET" {
				writes = append(writes, write{cl.principal, s.method, s.path, s.want})
			}
		}
		if s.after != nil {
			s.after()
		}
	}
	var trail struct {
		Records []api.AuditRecord `json:"records"`
	}
	sluicetest.DoWith(t, c.URL, "GET", "/sluice/audit?limit=10000", nil, basicAuth("ada", "a")...).JSON(t, &trail)
	recorded := map[write]int{}
	for _, rec := range trail.Records {
		recorded[write{rec.Principal, rec.Method, rec.Path, rec.Status}]++
	}
	want := map[write]int{}
	for _, w := range writes {
		want[w]++
	}
	for w, n := range want {
		if recorded[w] != n {
			t.Errorf("%s %s by %s (%d): %d audit records, want %d", w.method, w.path, w.principal, w.status, recorded[w], n)
		}
	}
	if len(trail.Records) != len(writes) {
		t.Errorf("%d audit records for %d writes", len(trail.Records), len(writes))
	}
	// The offsets history names the authenticated caller of each change.
	var hist api.OffsetsHistory
	sluicetest.DoWith(t, c.URL, "GET", "/sluice/connectors/"+mine+"/offsets/history", nil, basicAuth("vera", "v")...).JSON(t, &hist)
	var ops []string
	for _, e := range hist.Entries {
		ops = append(ops, e.Operation+" by "+e.Principal)
	}
	if want := []string{"restore by ada", "reset by ada", "alter by ada", "reset-to by ada"}; !slices.Equal(ops, want) {
		t.Errorf("history of %s: %v, want %v", mine, ops, want)
	}
	// GET /connectors shows only what the caller may see.
	mustCreate := func(name string) {
		if r := sluicetest.DoWith(t, c.URL, "POST", "/connectors", map[string]any{"name": name, "config": cfg}, basicAuth("ada", "a")...); r.Status != 201 {
			t.Fatalf("create %s: %s", name, r)
		}
	}
	mustCreate(mine)
	mustCreate(theirs)
	var names []string
	sluicetest.DoWith(t, c.URL, "GET", "/connectors", nil, basicAuth("tom", "t")...).JSON(t, &names)
	if !slices.Equal(names, []string{mine}) {
		t.Errorf("tom lists %v, want only %s", names, mine)
	}
	// A connector just created may have no status yet, and is then left
	// out of ?expand=status: ask until tom's own shows.
	var expanded map[string]any
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		expanded = nil
		sluicetest.DoWith(t, c.URL, "GET", "/connectors?expand=status", nil, basicAuth("tom", "t")...).JSON(t, &expanded)
		_, mineShown := expanded[mine]
		return mineShown, fmt.Sprintf("tom's expanded list: %v", expanded)
	})
	if _, ok := expanded[theirs]; ok || len(expanded) != 1 {
		t.Errorf("tom's expanded list: %v", expanded)
	}
	sluicetest.DoWith(t, c.URL, "GET", "/connectors", nil, basicAuth("vera", "v")...).JSON(t, &names)
	if !slices.Contains(names, theirs) || !slices.Contains(names, mine) {
		t.Errorf("vera lists %v", names)
	}
}
