package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

// waitTarget waits until a connector (of at most one task) shows state:
// its task in the same state, or none when it is STOPPED (a connector
// created PAUSED has no task yet either).
func waitTarget(c *sluicetest.Cluster, name, state string) {
	c.T.Helper()
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		s, ok := c.Status(name)
		if !ok || s.Connector.State != state {
			return false, fmt.Sprintf("%s: %+v", name, s)
		}
		want := 1
		if state == api.StateStopped {
			want = 0
		}
		if len(s.Tasks) > want || state == api.StateRunning && len(s.Tasks) != 1 {
			return false, fmt.Sprintf("%s: %+v", name, s)
		}
		for _, ts := range s.Tasks {
			if ts.State != state {
				return false, fmt.Sprintf("%s: %+v", name, s)
			}
		}
		return true, ""
	})
}

// createInStates creates one single-task generator connector per name, in
// the state given (RUNNING, PAUSED or STOPPED), and waits for each.
func createInStates(c *sluicetest.Cluster, states map[string]string) {
	c.T.Helper()
	for name, state := range states {
		mustCreate(c, name, generatorCfg(c.Name(name), "streams", "1", "tasks.max", "1"), state)
	}
	for name, state := range states {
		waitTarget(c, name, state)
	}
}

// results decodes a bulk answer into connector → result.
func results(t *testing.T, r sluicetest.Response) map[string]api.BulkResult {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("bulk answer %s, want 200", r)
	}
	var body api.BulkResults
	r.JSON(t, &body)
	out := map[string]api.BulkResult{}
	for _, res := range body.Results {
		out[res.Connector] = res
	}
	return out
}

// wantResults checks a bulk answer's status per connector, exactly those
// connectors, and messages where want gives one.
func wantResults(t *testing.T, r sluicetest.Response, status map[string]int, messages map[string]string) {
	t.Helper()
	got := results(t, r)
	if len(got) != len(status) {
		t.Fatalf("results %s, want connectors %v", r.Body, status)
	}
	for name, code := range status {
		if got[name].Status != code || got[name].Message != messages[name] {
			t.Fatalf("result of %s: %+v, want %d %q (answer %s)", name, got[name], code, messages[name], r.Body)
		}
	}
}

// TestBulkLifecycle pauses, resumes, stops and restarts connectors by a
// glob and by names: each connector's result is what its own endpoint
// answers, connectors outside the selector are untouched, an unknown name
// is that name's 404, and a selector matching nothing is a 400.
func TestBulkLifecycle(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	createInStates(c, map[string]string{"orders-a": "RUNNING", "orders-b": "RUNNING", "billing": "RUNNING"})
	orders := map[string]int{"orders-a": 202, "orders-b": 202}

	wantResults(t, c.Do("POST", "/sluice/connectors/pause", map[string]any{"match": "orders-*"}), orders, nil)
	waitTarget(c, "orders-a", "PAUSED")
	waitTarget(c, "orders-b", "PAUSED")
	waitTarget(c, "billing", "RUNNING")

	wantResults(t, c.Do("POST", "/sluice/connectors/resume", map[string]any{"names": []string{"orders-a", "nope", "orders-a"}}),
		map[string]int{"orders-a": 202, "nope": 404}, map[string]string{"nope": "Unknown connector nope"})
	waitTarget(c, "orders-a", "RUNNING")
	waitTarget(c, "orders-b", "PAUSED")

	wantResults(t, c.Do("POST", "/sluice/connectors/stop", map[string]any{"match": "orders-?"}), map[string]int{"orders-a": 204, "orders-b": 204}, nil)
	waitTarget(c, "orders-a", "STOPPED")
	waitTarget(c, "orders-b", "STOPPED")

	wantResults(t, c.Do("POST", "/sluice/connectors/resume", map[string]any{"match": "orders-*"}), orders, nil)
	waitTarget(c, "orders-a", "RUNNING")
	waitTarget(c, "orders-b", "RUNNING")

	wantResults(t, c.Do("POST", "/sluice/connectors/restart", map[string]any{"names": []string{"billing", "gone"}}),
		map[string]int{"billing": 204, "gone": 404}, map[string]string{"gone": "Unknown connector: gone"})
	wantResults(t, c.Do("POST", "/sluice/connectors/restart?includeTasks=true", map[string]any{"names": []string{"billing"}}),
		map[string]int{"billing": 202}, nil)
	waitTarget(c, "billing", "RUNNING")

	t.Run("bad selectors", func(t *testing.T) {
		wantError(t, c.Do("POST", "/sluice/connectors/pause", map[string]any{"match": "nothing-*"}), 400,
			`The selector matches no connector: no connector's name matches "nothing-*"`)
		wantError(t, c.Do("POST", "/sluice/connectors/pause", map[string]any{}), 400, `Give exactly one of "names" or "match"`)
		wantError(t, c.Do("POST", "/sluice/connectors/pause", map[string]any{"names": []string{"billing"}, "match": "*"}), 400,
			`Give exactly one of "names" or "match"`)
		wantError(t, c.Do("POST", "/sluice/connectors/stop", map[string]any{"match": "["}), 400,
			`Invalid "match" pattern "[": syntax error in pattern`)
		wantError(t, c.Do("POST", "/sluice/connectors/stop", map[string]any{"match": "*", "state": "x"}), 400,
			`Unrecognized field "state"`)
		wantError(t, c.Do("POST", "/sluice/connectors/restart?include_tasks=true", map[string]any{"match": "*"}), 400,
			"Unknown query parameter 'include_tasks': POST /sluice/connectors/restart takes [includeTasks onlyFailed]")
		waitTarget(c, "billing", "RUNNING")
	})
}

// window decodes a maintenance window answer of status want.
func window(t *testing.T, r sluicetest.Response, want int) api.MaintenanceWindow {
	t.Helper()
	if r.Status != want {
		t.Fatalf("got %s, want %d", r, want)
	}
	var w api.MaintenanceWindow
	r.JSON(t, &w)
	return w
}

// wantConnectors checks a window's connectors: name → previous state, and
// outcome and state once it closed ("" for an open window).
func wantConnectors(t *testing.T, w api.MaintenanceWindow, want map[string][3]string) {
	t.Helper()
	if len(w.Connectors) != len(want) {
		t.Fatalf("window connectors %+v, want %v", w.Connectors, want)
	}
	for _, mc := range w.Connectors {
		if got := [3]string{mc.Previous, mc.Outcome, mc.State}; got != want[mc.Name] {
			t.Fatalf("window connector %s: %v, want %v (window %+v)", mc.Name, got, want[mc.Name], w)
		}
	}
}

// closeWindow closes a window, checks its connectors as wantConnectors
// does, and waits for each that still exists to show its state.
func closeWindow(t *testing.T, c *sluicetest.Cluster, id string, want map[string][3]string) {
	t.Helper()
	wantConnectors(t, window(t, c.Do("DELETE", "/sluice/maintenance/"+id, nil), 200), want)
	for name, w := range want {
		if w[2] != "" {
			waitTarget(c, name, w[2])
		}
	}
}

// TestMaintenanceWindow opens a STOPPED window over RUNNING, PAUSED and
// STOPPED connectors and closes it: each comes back to exactly its state.
// During a second window, a connector resumed by hand is left RUNNING and
// one deleted is skipped, each reported; an overlapping window is a 409
// and an unknown id a 404.
func TestMaintenanceWindow(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	createInStates(c, map[string]string{"orders-run": "RUNNING", "orders-paused": "PAUSED", "orders-stopped": "STOPPED", "other": "RUNNING"})

	w := window(t, c.Do("POST", "/sluice/maintenance", map[string]any{"match": "orders-*", "state": "STOPPED", "reason": "broker upgrade"}), 201)
	if w.ID == "" || w.State != "STOPPED" || w.Reason != "broker upgrade" || w.Selector.Match != "orders-*" || w.Principal != "anonymous" {
		t.Fatalf("window %+v", w)
	}
	wantConnectors(t, w, map[string][3]string{"orders-paused": {"PAUSED"}, "orders-run": {"RUNNING"}, "orders-stopped": {"STOPPED"}})
	for _, n := range []string{"orders-run", "orders-paused", "orders-stopped"} {
		waitTarget(c, n, "STOPPED")
	}
	waitTarget(c, "other", "RUNNING")
	var list api.MaintenanceList
	c.Must(200, "GET", "/sluice/maintenance", nil).JSON(t, &list)
	if len(list.Windows) != 1 || list.Windows[0].ID != w.ID {
		t.Fatalf("open windows %+v", list)
	}
	if got := window(t, c.Do("GET", "/sluice/maintenance/"+w.ID, nil), 200); got.ID != w.ID || len(got.Connectors) != 3 {
		t.Fatalf("window %+v", got)
	}

	t.Run("overlap", func(t *testing.T) {
		wantError(t, c.Do("POST", "/sluice/maintenance", map[string]any{"names": []string{"other", "orders-run"}, "state": "PAUSED"}), 409,
			"Connector orders-run is in maintenance window "+w.ID+" (STOPPED); close that window first")
		waitTarget(c, "other", "RUNNING")
	})

	closeWindow(t, c, w.ID, map[string][3]string{
		"orders-paused":  {"PAUSED", "restored", "PAUSED"},
		"orders-run":     {"RUNNING", "restored", "RUNNING"},
		"orders-stopped": {"STOPPED", "restored", "STOPPED"},
	})
	wantJSON(t, c.Do("GET", "/sluice/maintenance", nil), 200, `{"windows":[]}`)
	wantError(t, c.Do("GET", "/sluice/maintenance/"+w.ID, nil), 404, "Maintenance window "+w.ID+" not found")
	wantError(t, c.Do("DELETE", "/sluice/maintenance/"+w.ID, nil), 404, "Maintenance window "+w.ID+" not found")

	t.Run("changed by hand and deleted", func(t *testing.T) {
		w := window(t, c.Do("POST", "/sluice/maintenance", map[string]any{"names": []string{"orders-run", "orders-paused", "other"}, "state": "paused"}), 201)
		wantConnectors(t, w, map[string][3]string{"orders-paused": {"PAUSED"}, "orders-run": {"RUNNING"}, "other": {"RUNNING"}})
		waitTarget(c, "orders-run", "PAUSED")
		waitTarget(c, "other", "PAUSED")
		// Kafka Connect's own endpoints keep working in a window.
		wantNoBody(t, c.Do("PUT", "/connectors/orders-run/resume", nil), 202)
		wantNoBody(t, c.Do("DELETE", "/connectors/other", nil), 204)
		waitTarget(c, "orders-run", "RUNNING")
		closeWindow(t, c, w.ID, map[string][3]string{
			"orders-paused": {"PAUSED", "restored", "PAUSED"},
			"orders-run":    {"RUNNING", "changed by hand", "RUNNING"},
			"other":         {"RUNNING", "deleted", ""},
		})
	})

	t.Run("bad input", func(t *testing.T) {
		wantError(t, c.Do("POST", "/sluice/maintenance", map[string]any{"match": "orders-*", "state": "RUNNING"}), 400,
			`Invalid "state" 'RUNNING': a maintenance window's state is STOPPED or PAUSED`)
		wantError(t, c.Do("POST", "/sluice/maintenance", map[string]any{"match": "orders-*"}), 400,
			`Give "state": STOPPED or PAUSED, the state the window holds its connectors in`)
		wantError(t, c.Do("POST", "/sluice/maintenance", map[string]any{"match": "none-*", "state": "STOPPED"}), 400,
			`The selector matches no connector: no connector's name matches "none-*"`)
		wantError(t, c.Do("POST", "/sluice/maintenance", map[string]any{"names": []string{"orders-run", "ghost"}, "state": "STOPPED"}), 404,
			"Connector ghost not found")
		wantError(t, c.Do("POST", "/sluice/maintenance", map[string]any{"match": "orders-*", "state": "STOPPED", "until": "1h"}), 400,
			`Unrecognized field "until"`)
		wantError(t, c.Do("DELETE", "/sluice/maintenance/nope", nil), 404, "Maintenance window nope not found")
		wantJSON(t, c.Do("GET", "/sluice/maintenance", nil), 200, `{"windows":[]}`)
		waitTarget(c, "orders-run", "RUNNING")
	})
}

// waitLeader waits until the coordinator at c.URL leads.
func waitLeader(t *testing.T, c *sluicetest.Cluster) {
	t.Helper()
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		r := c.Do("GET", "/health", nil)
		var h api.Health
		_ = json.Unmarshal(r.Body, &h)
		return h.Role == "leader", r.String()
	})
}

// TestMaintenanceWindowSurvivesLeaderChange opens a window, moves the
// leadership to another coordinator, and closes the window there: the new
// leader read it from the fleet topic, and every connector gets exactly
// its previous state back.
func TestMaintenanceWindowSurvivesLeaderChange(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	createInStates(c, map[string]string{"db-run": "RUNNING", "db-paused": "PAUSED", "db-stopped": "STOPPED", "cache": "RUNNING"})
	w := window(t, c.Do("POST", "/sluice/maintenance", map[string]any{"match": "db-*", "state": "PAUSED"}), 201)
	waitTarget(c, "db-run", "PAUSED")
	waitTarget(c, "db-stopped", "STOPPED") // a PAUSED window leaves a STOPPED connector stopped

	_, second := c.StartExtraCoordinator()
	sluicetest.WaitKnowsLeader(t, second)
	// Opened through the follower (forwarded to the leader), and shown by
	// it at once.
	other := window(t, sluicetest.Do(t, second, "POST", "/sluice/maintenance", map[string]any{"names": []string{"cache"}, "state": "STOPPED"}), 201)
	window(t, sluicetest.Do(t, second, "GET", "/sluice/maintenance/"+other.ID, nil), 200)
	c.StopCoordinator()
	c.URL = second
	waitLeader(t, c)
	if got := window(t, c.Do("GET", "/sluice/maintenance/"+w.ID, nil), 200); len(got.Connectors) != 3 {
		t.Fatalf("window on the new leader: %+v", got)
	}
	closeWindow(t, c, w.ID, map[string][3]string{
		"db-run":     {"RUNNING", "restored", "RUNNING"},
		"db-paused":  {"PAUSED", "restored", "PAUSED"},
		"db-stopped": {"STOPPED", "restored", "STOPPED"},
	})
	closeWindow(t, c, other.ID, map[string][3]string{"cache": {"RUNNING", "restored", "RUNNING"}})
	wantJSON(t, c.Do("GET", "/sluice/maintenance", nil), 200, `{"windows":[]}`)
}

// TestMaintenanceGrants checks the grants of an operator limited to team
// a's connectors on the selector routes: a bulk action over everything
// acts on team a's connectors and leaves the others out, counted as
// hidden (the operator may not list them); one naming another team's
// connector answers it as its own 403; a window is refused whole when it
// holds another team's connector — naming it only when the caller did —
// and windows over other teams' connectors are neither listed nor shown.
func TestMaintenanceGrants(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	authFile := writeFile(t, dir, "auth.yaml", []byte(fmt.Sprintf(`principals:
  - {name: tom, password_bcrypt: %q, grants: [{role: operator, connectors: ["team-a-*"]}]}
  - {name: otto, password_bcrypt: %q, grants: [{role: operator}]}
`, bcryptOf(t, "t"), bcryptOf(t, "o"))))
	c := sluicetest.Start(t, sluicetest.Options{RESTSecurity: coordinator.RESTSecurity{AuthFile: authFile}})
	c.Headers = basicAuth("otto", "o")
	createInStates(c, map[string]string{"team-a-x": "RUNNING", "team-b-x": "RUNNING"})
	tom := func(method, path string, body any) sluicetest.Response {
		return sluicetest.DoWith(t, c.URL, method, path, body, basicAuth("tom", "t")...)
	}

	wantJSON(t, tom("POST", "/sluice/connectors/pause", map[string]any{"match": "team-*"}), 200,
		`{"results":[{"connector":"team-a-x","status":202}],"hidden":1}`)
	waitTarget(c, "team-a-x", "PAUSED")
	waitTarget(c, "team-b-x", "RUNNING")
	r := tom("POST", "/sluice/connectors/pause", map[string]any{"names": []string{"team-b-x"}})
	got := results(t, r)
	if got["team-b-x"].Status != 403 ||
		got["team-b-x"].Message != "User tom may not POST /sluice/connectors/pause: the role operator for connector team-b-x is needed, and tom has operator for connectors team-a-*" {
		t.Fatalf("bulk pause of another team's connector, named: %s", r.Body)
	}
	waitTarget(c, "team-b-x", "RUNNING")

	wantError(t, tom("POST", "/sluice/maintenance", map[string]any{"match": "team-*", "state": "STOPPED"}), 403,
		"User tom may not POST /sluice/maintenance: the selector matches connectors tom may not list")
	wantError(t, tom("POST", "/sluice/maintenance", map[string]any{"names": []string{"team-a-x", "team-b-x"}, "state": "STOPPED"}), 403,
		"User tom may not POST /sluice/maintenance: the role operator for connector team-b-x is needed, and tom has operator for connectors team-a-*")
	waitTarget(c, "team-b-x", "RUNNING")
	theirs := window(t, c.Do("POST", "/sluice/maintenance", map[string]any{"names": []string{"team-b-x"}, "state": "STOPPED"}), 201)
	mine := window(t, tom("POST", "/sluice/maintenance", map[string]any{"names": []string{"team-a-x"}, "state": "STOPPED"}), 201)
	var list api.MaintenanceList
	tom("GET", "/sluice/maintenance", nil).JSON(t, &list)
	if len(list.Windows) != 1 || list.Windows[0].ID != mine.ID {
		t.Fatalf("windows a team operator sees: %+v", list)
	}
	if r := tom("GET", "/sluice/maintenance/"+theirs.ID, nil); r.Status != 403 {
		t.Fatalf("another team's window: %s", r)
	}
	if r := tom("DELETE", "/sluice/maintenance/"+theirs.ID, nil); r.Status != 403 {
		t.Fatalf("closing another team's window: %s", r)
	}
	waitTarget(c, "team-b-x", "STOPPED")
	wantConnectors(t, window(t, tom("DELETE", "/sluice/maintenance/"+mine.ID, nil), 200),
		map[string][3]string{"team-a-x": {"PAUSED", "restored", "PAUSED"}})
	if w := window(t, c.Do("DELETE", "/sluice/maintenance/"+theirs.ID, nil), 200); w.Principal != "otto" {
		t.Fatalf("window opened by otto: %+v", w)
	}
	waitTarget(c, "team-b-x", "RUNNING")
}

// TestMaintenanceWindowSurvivesRestart stops the only coordinator while a
// window is open and starts it again: the window is read back from the
// fleet topic and closes to the exact previous states.
func TestMaintenanceWindowSurvivesRestart(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	createInStates(c, map[string]string{"kv-run": "RUNNING", "kv-paused": "PAUSED"})
	w := window(t, c.Do("POST", "/sluice/maintenance", map[string]any{"names": []string{"kv-run", "kv-paused"}, "state": "STOPPED", "reason": "restart"}), 201)
	waitTarget(c, "kv-run", "STOPPED")
	c.StopCoordinator()
	c.StartCoordinator()
	waitLeader(t, c)
	var list api.MaintenanceList
	c.Must(200, "GET", "/sluice/maintenance", nil).JSON(t, &list)
	if len(list.Windows) != 1 || list.Windows[0].ID != w.ID || list.Windows[0].Reason != "restart" {
		t.Fatalf("windows after a restart: %+v", list)
	}
	waitTarget(c, "kv-paused", "STOPPED")
	closeWindow(t, c, w.ID, map[string][3]string{
		"kv-run":    {"RUNNING", "restored", "RUNNING"},
		"kv-paused": {"PAUSED", "restored", "PAUSED"},
	})
}
