package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

// fleetList reads GET /sluice/fleet/connectors with query at baseURL as
// the caller of headers.
func fleetList(t *testing.T, baseURL, query string, headers []string) api.FleetConnectors {
	t.Helper()
	r := sluicetest.DoWith(t, baseURL, "GET", "/sluice/fleet/connectors"+query, nil, headers...)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /sluice/fleet/connectors%s: %s", query, r)
	}
	var out api.FleetConnectors
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatalf("%s: %v", r.Body, err)
	}
	return out
}

// fleetNames are the names of a listing's rows, in order.
func fleetNames(l api.FleetConnectors) string {
	var ns []string
	for _, c := range l.Connectors {
		ns = append(ns, c.Name)
	}
	return strings.Join(ns, ",")
}

// fleetRow is the row of name in l.
func fleetRow(l api.FleetConnectors, name string) (api.FleetConnector, bool) {
	for _, c := range l.Connectors {
		if c.Name == name {
			return c, true
		}
	}
	return api.FleetConnector{}, false
}

// TestFleetListing: the fleet listing of a real cluster shows each
// connector's health as its tasks run (healthy, paused, stopped, and
// unassigned with the placement's reason), its agents, labels and last
// change; a sink's lag once the coordinator read it; filters and the
// attention order; counts of the caller's whole fleet; a team's viewer
// sees its connectors only; and a follower answers from its own view.
func TestFleetListing(t *testing.T) {
	t.Parallel()
	authFile := writeFile(t, t.TempDir(), "auth.yaml", []byte(fmt.Sprintf(`principals:
  - {name: ada, password_bcrypt: %q, grants: [{role: admin}]}
  - {name: vera, password_bcrypt: %q, grants: [{role: viewer, connectors: ["team-a-*"]}]}
`, bcryptOf(t, "a"), bcryptOf(t, "v"))))
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, RESTSecurity: coordinator.RESTSecurity{AuthFile: authFile}})
	ada, vera := basicAuth("ada", "a"), basicAuth("vera", "v")
	c.Headers = ada
	topic := c.Name("lines")
	gen, sink := "team-a-"+c.Name("gen"), "team-a-"+c.Name("sink")
	paused, nowhere, theirs := "team-a-"+c.Name("paused"), "team-a-"+c.Name("nowhere"), "team-b-"+c.Name("src")
	mustCreate(c, gen, generatorCfg(topic, "sluice.labels", "tier=gold, team=a"), "")
	mustCreate(c, sink, cfgWith(fileSinkCfg(filepath.Join(t.TempDir(), "out.txt"), topic), "sluice.labels", "tier=gold"), "")
	mustCreate(c, paused, generatorCfg(c.Name("p")), "PAUSED")
	mustCreate(c, nowhere, generatorCfg(c.Name("n"), "sluice.agent.selector", "zone=mars"), "")
	mustCreate(c, theirs, generatorCfg(c.Name("t")), "STOPPED")
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": c.Name("bad-labels"),
		"config": generatorCfg(topic, "sluice.labels", "tier")}), http.StatusBadRequest,
		"Connector configuration is invalid and contains the following 1 error(s):\nInvalid value tier for configuration sluice.labels: Expected comma-separated key=value pairs with non-empty keys, such as zone=a,host=web-1\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")

	var l api.FleetConnectors
	want := fmt.Sprintf("%s,%s,%s,%s,%s", nowhere, paused, theirs, gen, sink)
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		l = fleetList(t, c.URL, "", ada)
		// The unplaced task's status (placement's reason) is written a
		// moment after its task config: until then it has "no status yet".
		n, _ := fleetRow(l, nowhere)
		return fleetNames(l) == want && l.Counts.Health[api.HealthHealthy] == 2 && n.Reason != "task 0 unassigned: no status yet", fmt.Sprintf("%+v", l)
	})
	g, _ := fleetRow(l, gen)
	if g.Type != api.TypeSource || g.Class != classGenerator || g.Version == "" || g.State != api.StateRunning || g.Reason != "1 of 1 tasks RUNNING" ||
		g.TasksRunning != 1 || g.TasksTotal != 1 || len(g.Agents) == 0 || g.Labels["tier"] != "gold" || g.Labels["team"] != "a" ||
		g.Changed == nil || time.Since(*g.Changed) > time.Minute || g.SinkLag != nil {
		t.Errorf("generator row %+v", g)
	}
	if n, _ := fleetRow(l, nowhere); n.Health != api.HealthUnassigned || n.Reason != "task 0 unassigned: No live agent matches sluice.agent.selector zone=mars" ||
		n.TasksRunning != 0 || n.TasksTotal != 1 || len(n.Agents) != 0 {
		t.Errorf("unplaced row %+v", n)
	}
	if p, _ := fleetRow(l, paused); p.Health != api.HealthPaused || p.State != api.StatePaused {
		t.Errorf("paused row %+v", p)
	}
	if s, _ := fleetRow(l, theirs); s.Health != api.HealthStopped || s.State != api.StateStopped || s.TasksTotal != 0 {
		t.Errorf("stopped row %+v", s)
	}
	wantCounts := api.FleetCounts{Health: map[string]int{"healthy": 2, "paused": 1, "stopped": 1, "unassigned": 1},
		State: map[string]int{"RUNNING": 3, "PAUSED": 1, "STOPPED": 1}, Type: map[string]int{"source": 4, "sink": 1}}
	if fmt.Sprint(l.Counts) != fmt.Sprint(wantCounts) || l.Total != 5 {
		t.Errorf("counts %+v total %d", l.Counts, l.Total)
	}

	// Filters, with the counts of the whole fleet still.
	for _, f := range []struct{ query, want string }{
		{"?label=tier=gold", gen + "," + sink},
		{"?label=tier=gold&label=team=a", gen},
		{"?type=sink", sink},
		{"?health=unassigned,paused", nowhere + "," + paused},
		{"?state=STOPPED", theirs},
		{"?plugin=FileStreamSink", sink},
		{"?agent=" + g.Agents[0] + "&q=GEN", gen},
		{"?sort=name&limit=2&offset=1", nowhere + "," + paused},
	} {
		got := fleetList(t, c.URL, f.query, ada)
		if fleetNames(got) != f.want || fmt.Sprint(got.Counts) != fmt.Sprint(wantCounts) {
			t.Errorf("%s: %s (counts %+v), want %s", f.query, fleetNames(got), got.Counts, f.want)
		}
	}
	wantError(t, c.Do("GET", "/sluice/fleet/connectors?health=sick", nil), http.StatusBadRequest,
		"Invalid value 'sick' for query parameter 'health': must be one or more of failed, degraded, unassigned, paused, stopped, healthy, comma-separated")

	// A sink's lag shows once the coordinator read it (GET …/lag here;
	// a Prometheus scrape reads every sink's).
	c.Must(http.StatusOK, "GET", "/sluice/connectors/"+sink+"/lag", nil)
	if s, _ := fleetRow(fleetList(t, c.URL, "?type=sink", ada), sink); s.SinkLag == nil || s.SinkLagAt == nil || *s.SinkLag < 0 {
		t.Errorf("sink row after a lag read %+v", s)
	}

	// A team's viewer sees its own connectors, and counts them alone.
	mine := fleetList(t, c.URL, "", vera)
	if fleetNames(mine) != fmt.Sprintf("%s,%s,%s,%s", nowhere, paused, gen, sink) || mine.Counts.Health[api.HealthStopped] != 0 || mine.Counts.Type["source"] != 3 {
		t.Errorf("team a's viewer: %s %+v", fleetNames(mine), mine.Counts)
	}

	// A follower answers from its own view of the topics.
	_, follower := c.StartExtraCoordinator()
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		r := sluicetest.DoWith(t, follower, "GET", "/sluice/fleet/connectors?sort=name", nil, ada...)
		var got api.FleetConnectors
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &got) != nil {
			return false, r.String()
		}
		return fleetNames(got) == fmt.Sprintf("%s,%s,%s,%s,%s", gen, nowhere, paused, sink, theirs) && got.Counts.Health[api.HealthHealthy] == 2, r.String()
	})
}
