package dashboard

//lint:file-ignore SA1019 sluice.json is a schema-v1 dashboard, the JSON model Grafana imports; the SDK's dashboardv2 is another schema

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	sdk "github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// dashboardPath is deploy/grafana/sluice.json of the repository.
func dashboardPath(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "deploy", "grafana", "sluice.json")
}

func load(t *testing.T) *sdk.Dashboard {
	t.Helper()
	d, err := Load(dashboardPath(t))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDashboardDecodesStrictly: Grafana's dashboard types take the file
// with nothing left over, every panel's options decode into its plugin's
// types, and panel ids are unique and panels fit the 24-column grid.
func TestDashboardDecodesStrictly(t *testing.T) {
	d := load(t)
	if d.Uid == nil || *d.Uid != "sluice-overview" || d.Title == nil || *d.Title != "Sluice" {
		t.Errorf("uid %v, title %v: want sluice-overview, Sluice (links and provisioning use the uid)", d.Uid, d.Title)
	}
	// Nothing is lost on the way: as many panels and targets as the file
	// holds, read as plain JSON.
	var raw struct {
		Panels []struct {
			Type    string            `json:"type"`
			Targets []json.RawMessage `json:"targets"`
		} `json:"panels"`
	}
	data, err := os.ReadFile(dashboardPath(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	panels, targets := 0, 0
	for _, p := range raw.Panels {
		if p.Type != "row" {
			panels++
			targets += len(p.Targets)
		}
	}
	decodedTargets := 0
	for _, p := range Panels(d) {
		decodedTargets += len(p.Targets)
	}
	if got := len(Panels(d)); got != panels || decodedTargets != targets || panels < 20 {
		t.Fatalf("decoded %d panels with %d targets; the file has %d with %d (want at least 20 panels)", got, decodedTargets, panels, targets)
	}
	ids := map[uint32]string{}
	for _, p := range Panels(d) {
		title := *p.Title
		if p.Id == nil {
			t.Errorf("panel %q has no id", title)
			continue
		}
		if other, dup := ids[*p.Id]; dup {
			t.Errorf("panels %q and %q share id %d", title, other, *p.Id)
		}
		ids[*p.Id] = title
		if p.Options == nil || strings.HasPrefix(fmt.Sprintf("%T", p.Options), "map[") {
			t.Errorf("panel %q (%s): options decoded as %T, not its plugin's type", title, p.Type, p.Options)
		}
		if g := p.GridPos; g == nil || g.W <= 0 || g.X+g.W > 24 || g.H <= 0 {
			t.Errorf("panel %q: grid position %+v does not fit 24 columns", title, p.GridPos)
		}
		if p.Datasource == nil || p.Datasource.Uid == nil || *p.Datasource.Uid != "${datasource}" {
			t.Errorf("panel %q: data source %+v, want the datasource variable", title, p.Datasource)
		}
	}
	for _, rp := range d.Panels {
		if rp.RowPanel != nil && rp.RowPanel.Id != 0 {
			if other, dup := ids[rp.RowPanel.Id]; dup {
				t.Errorf("row %v and panel %q share id %d", rp.RowPanel.Title, other, rp.RowPanel.Id)
			}
		}
	}
}

// TestDashboardLoadRefusesUnknownFields: the strict decoding really
// refuses what Grafana's schema lacks, at the top and inside a panel.
func TestDashboardLoadRefusesUnknownFields(t *testing.T) {
	dir := t.TempDir()
	for name, doc := range map[string]string{
		"top":    `{"title":"x","schemaVersion":39,"templating":{"list":[]},"annotations":{"list":[]},"pannels":[]}`,
		"panel":  `{"title":"x","schemaVersion":39,"templating":{"list":[]},"annotations":{"list":[]},"panels":[{"type":"timeseries","id":1,"gridPos":{"x":0,"y":0,"w":1,"h":1},"titel":"t"}]}`,
		"target": `{"title":"x","schemaVersion":39,"templating":{"list":[]},"annotations":{"list":[]},"panels":[{"type":"timeseries","id":1,"gridPos":{"x":0,"y":0,"w":1,"h":1},"targets":[{"datasource":{"type":"prometheus","uid":"u"},"expr":"up","refId":"A","legend":"x"}]}]}`,
	} {
		path := filepath.Join(dir, name+".json")
		writeFile(t, path, doc)
		if _, err := Load(path); err == nil {
			t.Errorf("%s: an unknown field decoded without an error", name)
		}
	}
}

// TestDashboardVariables: the data source and connector variables exist,
// and every query of a metric with a connector label filters on the
// connector variable.
func TestDashboardVariables(t *testing.T) {
	d := load(t)
	vars := map[string]sdk.VariableModel{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if ds, ok := vars["datasource"]; !ok || ds.Type != sdk.VariableTypeDatasource || ds.Query == nil || ds.Query.String == nil || *ds.Query.String != "prometheus" {
		t.Errorf("datasource variable %+v: want a Prometheus data source variable", ds)
	}
	if c, ok := vars["connector"]; !ok || c.Type != sdk.VariableTypeQuery || c.Multi == nil || !*c.Multi || c.IncludeAll == nil || !*c.IncludeAll {
		t.Errorf("connector variable %+v: want a multi-value query variable with All", c)
	}
	qs, err := Queries(d)
	if err != nil {
		t.Fatal(err)
	}
	cat := CatalogueSeries()
	for _, q := range qs {
		if q.Target == nil {
			continue
		}
		if q.Target.Datasource == nil || q.Target.Datasource.Uid == nil || *q.Target.Datasource.Uid != "${datasource}" {
			t.Errorf("%s: data source %+v, want the datasource variable", q.Where, q.Target.Datasource)
		}
		u, err := Analyze(q)
		if err != nil {
			t.Error(err)
			continue
		}
		for name, labels := range u.Series {
			if cat[name].Labels["connector"] && !labels["connector"] {
				t.Errorf("%s: %s has a connector label but the query does not filter on $connector", q.Where, name)
			}
		}
		if !strings.Contains(q.Expr, "$connector") && strings.Contains(q.Expr, "connector=") {
			t.Errorf("%s: filters on a fixed connector", q.Where)
		}
	}
}

// TestDashboardQueriesUseTheCatalogue: every query parses as PromQL, and
// selects only series of the catalogue, matching and grouping only on
// labels those series carry; every required panel is there.
func TestDashboardQueriesUseTheCatalogue(t *testing.T) {
	d := load(t)
	qs, err := Queries(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) == 0 {
		t.Fatal("no queries")
	}
	cat := CatalogueSeries()
	used := map[string]bool{}
	for _, q := range qs {
		u, err := Analyze(q)
		if err != nil {
			t.Error(err)
			continue
		}
		if err := CheckCatalogue(u, cat); err != nil {
			t.Errorf("%s: %v", q.Where, err)
		}
		for name := range u.Series {
			used[name] = true
		}
	}
	// The panels issue 15 asks for, by a metric each must read.
	for panel, metric := range map[string]string{
		"connectors by state": "sluice_connector_state",
		"failed tasks":        "sluice_task_state",
		"records written":     "sluice_task_records_written_total",
		"records put":         "sluice_task_records_put_total",
		"lag per connector":   "sluice_sink_consumer_lag",
		"offsets operations":  "sluice_offsets_operations_total",
		"offsets latency":     "sluice_offsets_operation_duration_seconds_bucket",
		"REST errors":         "sluice_rest_requests_total",
		"agents registered":   "sluice_agent_registered",
		"tasks running":       "sluice_agent_tasks_running",
		"heartbeat age":       "sluice_agent_heartbeat_age_seconds",
		"leader":              "sluice_coordinator_leader",
		"term":                "sluice_coordinator_term",
	} {
		if !used[metric] {
			t.Errorf("no panel shows %s (%s)", panel, metric)
		}
	}
}

// TestParseAndCheck: the checks fail on what they must catch, so that
// the tests above can fail: a query that does not parse, an unknown
// variable, a metric or label not in the catalogue, a grouping label no
// series carries.
func TestParseAndCheck(t *testing.T) {
	cat := CatalogueSeries()
	for _, expr := range []string{`sum(rate(x[5m])`, `rate(sluice_task_records_put_total[$__bogus])`} {
		if _, err := Parse(expr); err == nil {
			t.Errorf("Parse(%q): no error", expr)
		}
	}
	for expr, want := range map[string]string{
		`sluice_connector_states`:                                              "not in the catalogue",
		`sluice_connector_state{conector="a"}`:                                 "no label conector",
		`sum by (agent) (sluice_connector_state)`:                              "grouping by agent",
		`sluice_rest_requests_total{code="500"} and on (le) up`:                "not in the catalogue",
		`sum by (connector) (rate(sluice_task_records_put[$__rate_interval]))`: "not in the catalogue",
		`{__name__="sluice_nope"}`:                                             "not in the catalogue",
	} {
		e, err := Parse(expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", expr, err)
			continue
		}
		u, err := Uses(e)
		if err == nil {
			err = CheckCatalogue(u, cat)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error containing %q", expr, err, want)
		}
	}
	e, err := Parse(`histogram_quantile(0.95, sum by (kind, le) (rate(sluice_offsets_operation_duration_seconds_bucket[$__rate_interval])))`)
	if err != nil {
		t.Fatal(err)
	}
	u, err := Uses(e)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckCatalogue(u, cat); err != nil {
		t.Errorf("a histogram's p95 by kind: %v", err)
	}
}
