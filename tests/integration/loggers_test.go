package integration

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// loggerLevel is the body of GET /admin/loggers/{name}.
type loggerLevel struct {
	Level        string `json:"level"`
	LastModified *int64 `json:"last_modified"`
}

// getLevel reads one logger's level from the coordinator at baseURL.
func getLevel(t *testing.T, baseURL, name string) loggerLevel {
	t.Helper()
	r := sluicetest.Do(t, baseURL, http.MethodGet, "/admin/loggers/"+name, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /admin/loggers/%s at %s: %s", name, baseURL, r)
	}
	var l loggerLevel
	r.JSON(t, &l)
	return l
}

// wantLevel checks a logger's level at baseURL, and whether it was ever
// changed at run time (last_modified set).
func wantLevel(t *testing.T, baseURL, name, level string, modified bool) {
	t.Helper()
	if l := getLevel(t, baseURL, name); l.Level != level || (l.LastModified != nil) != modified {
		t.Fatalf("logger %s at %s: %+v, want level %s, modified %v", name, baseURL, l, level, modified)
	}
}

// waitLogged waits until the cluster logged a line holding every part.
func waitLogged(t *testing.T, c *sluicetest.Cluster, parts ...string) {
	t.Helper()
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		return len(c.Logged(parts...)) > 0, fmt.Sprintf("no line logged with %q", parts)
	})
}

// TestLoggersWorkerScope: PUT /admin/loggers/{name} without a scope changes
// the coordinator that received it, and really changes what it logs: its
// REST component logs every call at DEBUG from then on, GET shows the level
// and when it changed, and the agents log as before.
func TestLoggersWorkerScope(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})

	wantJSON(t, c.Do(http.MethodGet, "/admin/loggers", nil), http.StatusOK, `{
		"root":                         {"level":"WARN","last_modified":null},
		"io.sluice.coordinator":        {"level":"WARN","last_modified":null},
		"io.sluice.coordinator.herder": {"level":"WARN","last_modified":null},
		"io.sluice.coordinator.rest":   {"level":"WARN","last_modified":null}}`)
	wantError(t, c.Do(http.MethodGet, "/admin/loggers/io.sluice.nope", nil), http.StatusNotFound, "Logger io.sluice.nope not found.")
	wantError(t, c.Do(http.MethodPut, "/admin/loggers/io.sluice.coordinator", map[string]string{"level": "LOUD"}),
		http.StatusNotFound, "invalid log level 'LOUD'.")
	if lines := c.Logged("process=coordinator", "level=DEBUG"); len(lines) > 0 {
		t.Fatalf("DEBUG lines at WARN: %q", lines)
	}

	before := time.Now().UnixMilli()
	wantJSON(t, c.Do(http.MethodPut, "/admin/loggers/io.sluice.coordinator", map[string]string{"level": "debug"}), http.StatusOK,
		`["io.sluice.coordinator","io.sluice.coordinator.herder","io.sluice.coordinator.rest"]`)
	after := time.Now().UnixMilli()

	c.Must(http.StatusOK, http.MethodGet, "/connectors", nil)
	waitLogged(t, c, "process=coordinator", "level=DEBUG", `msg="rest call"`, "op=list_connectors")

	rest := getLevel(t, c.URL, "io.sluice.coordinator.rest")
	if rest.Level != "DEBUG" || rest.LastModified == nil || *rest.LastModified < before || *rest.LastModified > after {
		t.Fatalf("io.sluice.coordinator.rest: %+v, want DEBUG modified within [%d, %d]", rest, before, after)
	}
	wantLevel(t, c.URL, "ROOT", "WARN", false)
	// The same level again changes nothing.
	wantJSON(t, c.Do(http.MethodPut, "/admin/loggers/io.sluice.coordinator.rest", map[string]string{"level": "DEBUG"}), http.StatusOK, `[]`)

	// The agent's loggers are not the coordinator's: its task starts (an
	// assignment reached it) without a DEBUG line from it.
	name := c.Name("worker-scope")
	mustCreate(c, name, generatorCfg(c.Name("worker-scope-data")), "")
	c.WaitState(name, "RUNNING", 1, "RUNNING")
	if lines := c.Logged("process=agent-1", "level=DEBUG"); len(lines) > 0 {
		t.Fatalf("the agent logs at DEBUG after a worker-scope change on the coordinator: %q", lines)
	}
}

// TestLoggersClusterScope: PUT …?scope=cluster answers 204 and reaches
// every agent (their components log at the new level) and every
// coordinator: one started later, one that restarts, and an agent that
// restarts get the level from the config topic too. A cluster-scope change
// sent to a follower goes through the leader; a worker-scope one stays on
// the coordinator that received it.
func TestLoggersClusterScope(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2})
	debug := map[string]string{"level": "DEBUG"}

	wantNoBody(t, c.Do(http.MethodPut, "/admin/loggers/io.sluice.agent?scope=cluster", debug), http.StatusNoContent)
	wantLevel(t, c.URL, "io.sluice.agent", "DEBUG", true)
	// Each agent says so at INFO, which it logs only because the level of
	// its components is below the harness's WARN now.
	for _, a := range []string{"agent-1", "agent-2"} {
		waitLogged(t, c, "process="+a, "level=INFO", `msg="log level set"`, "namespace=io.sluice.agent ")
	}
	// And they log at DEBUG: each agent's transport logs the assignment of
	// the task it runs.
	name := c.Name("cluster-scope")
	mustCreate(c, name, generatorCfg(c.Name("cluster-scope-data"), "streams", "2", "tasks.max", "2"), "")
	st := c.WaitState(name, "RUNNING", 2, "RUNNING")
	for _, a := range taskWorkers(st) {
		waitLogged(t, c, "process="+a, "level=DEBUG", `msg="assign received"`)
	}

	// A coordinator started later reads the level from the config topic.
	_, url2 := c.StartExtraCoordinator()
	wantLevel(t, url2, "io.sluice.agent", "DEBUG", true)
	// A cluster-scope change sent to it (a follower) is written by the
	// leader and set on both.
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		r := sluicetest.Do(t, url2, http.MethodPut, "/admin/loggers/io.sluice.coordinator.rest?scope=cluster", debug)
		return r.Status == http.StatusNoContent && len(r.Body) == 0, r.String()
	})
	for _, u := range []string{c.URL, url2} {
		wantLevel(t, u, "io.sluice.coordinator.rest", "DEBUG", true)
	}
	sluicetest.Do(t, url2, http.MethodGet, "/connectors", nil)
	waitLogged(t, c, "process=coordinator-2", "level=DEBUG", `msg="rest call"`, "op=list_connectors")
	// A worker-scope change sent to it stays on it.
	wantJSON(t, sluicetest.Do(t, url2, http.MethodPut, "/admin/loggers/io.sluice.coordinator.herder", map[string]string{"level": "TRACE"}),
		http.StatusOK, `["io.sluice.coordinator.herder"]`)
	wantLevel(t, url2, "io.sluice.coordinator.herder", "TRACE", true)
	wantLevel(t, c.URL, "io.sluice.coordinator.herder", "WARN", false)

	// A restarted coordinator comes back at the cluster's levels, not at
	// another coordinator's worker-scope ones.
	c.StopCoordinator()
	c.StartCoordinator()
	wantLevel(t, c.URL, "io.sluice.agent", "DEBUG", true)
	wantLevel(t, c.URL, "io.sluice.coordinator.rest", "DEBUG", true)
	wantLevel(t, c.URL, "io.sluice.coordinator.herder", "WARN", false)

	// So does a restarted agent: the leader sends it the levels when it
	// registers again.
	set := []string{"process=agent-1", "level=INFO", `msg="log level set"`, "namespace=io.sluice.agent "}
	before := len(c.Logged(set...))
	c.StopAgent(0)
	c.StartAgent(0)
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		n := len(c.Logged(set...))
		return n > before, fmt.Sprintf("the restarted agent-1 did not set the cluster's level (%d lines, %d before)", n, before)
	})
}
