package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
)

// fakeFleet answers GET /sluice/fleet/connectors with pages of rows, the
// query's offset and limit applied, and keeps each query it got.
type fakeFleet struct {
	mu      sync.Mutex
	rows    []api.FleetConnector
	queries []string
}

func (f *fakeFleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path != "/sluice/fleet/connectors" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	f.queries = append(f.queries, r.URL.RawQuery)
	q := r.URL.Query()
	if q.Get("health") == "sick" {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(api.Error{Code: 400, Message: "Invalid value 'sick' for query parameter 'health'"})
		return
	}
	offset, _ := strconv.Atoi(q.Get("offset"))
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil {
		limit = api.DefaultFleetLimit
	}
	page := api.FleetConnectors{Total: len(f.rows), Offset: offset, Limit: limit, Connectors: []api.FleetConnector{},
		Counts: api.FleetCounts{Health: map[string]int{"failed": 1, "healthy": 2}, State: map[string]int{}, Type: map[string]int{}}}
	for i := offset; i < len(f.rows) && i < offset+limit; i++ {
		page.Connectors = append(page.Connectors, f.rows[i])
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

// TestFleetConnectors: fleet connectors sends the filters as the query of
// GET /sluice/fleet/connectors, shows a page as a table with the rows
// shown and the fleet's healths on stderr, reads every page with --all,
// and passes a refused query's message on.
func TestFleetConnectors(t *testing.T) {
	changed := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	lag := int64(120000)
	f := &fakeFleet{rows: []api.FleetConnector{
		{Name: "orders-sink", Health: api.HealthFailed, State: api.StateRunning, Type: api.TypeSink, TasksRunning: 0, TasksTotal: 2,
			Agents: []string{"agent-1", "agent-2"}, SinkLag: &lag, Changed: &changed, Reason: "2 of 2 tasks FAILED: task 0: boom"},
		{Name: "orders-src", Health: api.HealthHealthy, State: api.StateRunning, Type: api.TypeSource, TasksRunning: 1, TasksTotal: 1, Agents: []string{"agent-1"}, Reason: "1 of 1 tasks RUNNING"},
		{Name: "users-src", Health: api.HealthHealthy, State: api.StateRunning, Type: api.TypeSource, TasksRunning: 1, TasksTotal: 1, Agents: []string{}, Reason: "1 of 1 tasks RUNNING"},
	}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)

	stdout, errOut, code := runCLI(t, "fleet", "connectors", "ord", "--state", "RUNNING,FAILED", "--health", "failed", "--health", "healthy",
		"--type", "sink", "--agent", "agent-1", "--plugin", "FileStreamSink", "--label", "team=orders", "--sort", "changed", "--limit", "2", "--url", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "agent=agent-1&health=failed%2Chealthy&label=team%3Dorders&limit=2&plugin=FileStreamSink&q=ord&sort=changed&state=RUNNING%2CFAILED&type=sink"
	if f.queries[0] != want {
		t.Errorf("query %s\nwant  %s", f.queries[0], want)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[0], "REASON") ||
		strings.Join(strings.Fields(lines[1]), " ") != "orders-sink failed RUNNING sink 0/2 agent-1,agent-2 120000 2026-12-06T10:00:00Z 2 of 2 tasks FAILED: task 0: boom" ||
		strings.Join(strings.Fields(lines[2]), " ") != "orders-src healthy RUNNING source 1/1 agent-1 - - 1 of 1 tasks RUNNING" {
		t.Errorf("table:\n%s", stdout)
	}
	if errOut != "rows 1-2 of 3; fleet: failed 1, healthy 2\n" {
		t.Errorf("summary %q", errOut)
	}

	f.queries = nil
	stdout, _, code = runCLI(t, "fleet", "connectors", "--all", "--limit", "1", "-o", "json", "--url", srv.URL)
	var all api.FleetConnectors
	if code != 0 || json.Unmarshal([]byte(stdout), &all) != nil || len(all.Connectors) != 3 || all.Total != 3 || len(f.queries) != 3 ||
		all.Connectors[2].Name != "users-src" || f.queries[2] != "limit=1&offset=2&sort=attention" {
		t.Errorf("--all: %d %s %v", code, stdout, f.queries)
	}

	if _, errOut, code := runCLI(t, "fleet", "connectors", "--health", "sick", "--url", srv.URL); code != exitRefused ||
		errOut != "sluice: 400: Invalid value 'sick' for query parameter 'health'\n" {
		t.Errorf("refused: %d %q", code, errOut)
	}
	if _, _, code := runCLI(t, "fleet", "connectors", "--label", "team", "--url", srv.URL); code != exitUsage {
		t.Errorf("a label without a value: exit %d", code)
	}
}

// TestMigrateOnCoordinator: migrate --on-coordinator sends the migration
// to the coordinator (POST /sluice/migrations) with the --from-* flags'
// credentials, and shows its answer as migrate does.
func TestMigrateOnCoordinator(t *testing.T) {
	var got api.MigrationRequest
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/sluice/migrations" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		query = r.URL.RawQuery
		_ = json.NewDecoder(r.Body).Decode(&got)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(api.MigrationResult{DryRun: true, URL: got.URL, Connectors: []api.MigratedConnector{
			{Name: "files-a", Type: api.TypeSource, Class: "FileStreamSource", State: api.StateRunning, Result: api.MigrationWouldMigrate, OffsetsCount: 2},
			{Name: "jdbc", Type: api.TypeSource, Class: "JdbcSource", Result: api.MigrationFailed, Step: "check in Sluice", Detail: "check in Sluice: no plugin"}}})
	}))
	t.Cleanup(srv.Close)
	pw := writeFile(t, t.TempDir(), "pw", "s3cret\n")
	stdout, errOut, code := runCLI(t, "migrate", "--on-coordinator", "--from", "http://connect-1:8083", "--from-user", "mover", "--from-password-file", pw,
		"--connectors", "files-*", "--dry-run", "--leave-stopped", "--stop-timeout", "90s", "--url", srv.URL)
	want := api.MigrationRequest{URL: "http://connect-1:8083", Connectors: "files-*", LeaveStopped: true, StopTimeout: "1m30s", User: "mover", Password: "s3cret"}
	if got != want || query != "dry_run=true" {
		t.Errorf("sent %+v ?%s", got, query)
	}
	if code != exitRefused || !strings.Contains(errOut, "1 of 2 connectors failed") ||
		!strings.Contains(stdout, "files-a  source  FileStreamSource  2           RUNNING  would migrate") || !strings.Contains(stdout, "failed: check in Sluice: no plugin") {
		t.Errorf("exit %d\n%s%s", code, stdout, errOut)
	}
	if _, _, code := runCLI(t, "migrate", "--on-coordinator", "--from", "http://c:8083", "--from-ca", pw, "--url", srv.URL); code != exitUsage {
		t.Errorf("--from-ca with --on-coordinator: exit %d", code)
	}
}
