package conformance

import (
	"strings"
	"testing"
)

// TestDataLoads checks that the scenario list and the §0 rules parse.
func TestDataLoads(t *testing.T) {
	s, err := LoadSuite()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Scenarios) < 30 {
		t.Fatalf("only %d scenarios", len(s.Scenarios))
	}
	if _, err := LoadRules(); err != nil {
		t.Fatal(err)
	}
}

// TestCompare runs the comparator on answers of the shapes the two systems
// give: same after normalisation, a §0 row, and a mismatch.
func TestCompare(t *testing.T) {
	rules, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	up := System{ConnPrefix: "up1-", TopicPrefix: "t-up-", Dir: "/tmp/x/up"}
	sl := System{ConnPrefix: "sl1-", TopicPrefix: "t-sl-", Dir: "/tmp/x/sl"}
	sc := Scenario{Name: "create-initial-invalid", Steps: []Step{
		{ID: "status", Method: "GET", Path: "/connectors/${c}a/status"},
		{ID: "create", Method: "POST", Path: "/connectors"},
		{ID: "get", Method: "GET", Path: "/connectors/${c}a"},
	}}
	rec := func(i, status int, body string) Record {
		return Record{Step: sc.Steps[i], Status: status, Body: []byte(body)}
	}
	upRecs := []Record{
		rec(0, 200, `{"name":"up1-a","connector":{"state":"RUNNING","worker_id":"127.0.0.1:18083"},"tasks":[{"id":1,"state":"RUNNING","worker_id":"a"},{"id":0,"state":"RUNNING","worker_id":"a"}],"type":"source"}`),
		rec(1, 500, `{"error_code":500,"message":"Cannot construct instance of `+"`org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest$InitialState`"+`, problem: No enum constant"}`),
		rec(2, 404, `{"error_code":404,"message":"Connector up1-a not found"}`),
	}
	slRecs := []Record{
		rec(0, 200, `{"type":"source","tasks":[{"id":0,"state":"RUNNING","worker_id":"agent-1"},{"id":1,"state":"RUNNING","worker_id":"agent-2"}],"connector":{"state":"RUNNING","worker_id":"127.0.0.1:18084"},"name":"sl1-a"}`),
		rec(1, 400, `{"error_code":400,"message":"Invalid initial_state 'BOGUS': must be one of RUNNING, PAUSED, STOPPED"}`),
		rec(2, 404, `{"error_code":404,"message":"Connector sl1-a not found"}`),
	}
	v := Compare(sc, rules, up, sl, upRecs, slRecs)
	if v.Word != Deviation || len(v.Rows) != 1 || !strings.Contains(v.Rows[0], "initial_state") {
		t.Fatalf("verdict %+v, want one initial_state deviation", v)
	}
	slRecs[2] = rec(2, 404, `{"error_code":404,"message":"Connector sl1-a does not exist"}`)
	if v := Compare(sc, rules, up, sl, upRecs, slRecs); v.Word != Mismatch || v.Diffs[len(v.Diffs)-1].Step != "get" {
		t.Fatalf("verdict %+v, want a mismatch on step get", v)
	}
	if v := Compare(Scenario{Name: "other", Steps: sc.Steps}, rules, up, sl, upRecs, slRecs); v.Word != Mismatch {
		t.Fatalf("the initial_state row applies to another scenario: %+v", v)
	}
}

// TestCompareServerRefusals: an HTML page (or no body) from Kafka Connect's
// web server and Sluice's JSON error body with the same status and reason
// make the §0 row; a different reason is a mismatch.
func TestCompareServerRefusals(t *testing.T) {
	rules, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	sc := Scenario{Name: "unusual-paths", Steps: []Step{{ID: "p", Method: "GET", Path: "//connectors"}}}
	page := func(status int, reason string) Record {
		return Record{Step: sc.Steps[0], Status: status, Body: []byte("<html>\n<head>\n<title>Error " + itoa(status) + " " + reason + "</title>\n</head></html>")}
	}
	body := func(status int, msg string) Record {
		return Record{Step: sc.Steps[0], Status: status, Body: []byte(`{"error_code":` + itoa(status) + `,"message":"` + msg + `"}`)}
	}
	tests := []struct {
		name     string
		up, sl   Record
		wantWord string
	}{
		{"empty segment", page(400, "Ambiguous URI empty segment"), body(400, "Ambiguous URI empty segment"), Deviation},
		{"empty segment, Jetty's JSON", Record{Step: sc.Steps[0], Status: 400, Body: []byte(`{ "message":"Ambiguous URI empty segment", "url":"http://h//connectors", "status":"400" }`)},
			body(400, "Ambiguous URI empty segment"), Deviation},
		{"Jetty's JSON, another reason", Record{Step: sc.Steps[0], Status: 400, Body: []byte(`{ "message":"Ambiguous URI empty segment", "url":"http://h//connectors", "status":"400" }`)},
			body(400, "Ambiguous URI path segment"), Mismatch},
		{"escaped dot", page(400, "Ambiguous URI path segment"), body(400, "Ambiguous URI path segment"), Deviation},
		{"bad escape", page(400, "Bad Request"), body(400, `HTTP 400 Bad Request: invalid URL escape \"%c\"`), Deviation},
		{"headers too large", page(431, "Request Header Fields Too Large"), body(431, "Request headers too large (limit 64 KiB)"), Deviation},
		{"malformed Content-Type", Record{Step: sc.Steps[0], Status: 400}, body(400, `Invalid Content-Type header \"garbage\"`), Deviation},
		{"another reason", page(400, "Ambiguous URI empty segment"), body(400, "Ambiguous URI path segment"), Mismatch},
		{"another status", page(400, "Ambiguous URI empty segment"), body(404, "Ambiguous URI empty segment"), Mismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Compare(sc, rules, System{}, System{}, []Record{tt.up}, []Record{tt.sl})
			if v.Word != tt.wantWord {
				t.Fatalf("verdict %+v, want %s", v, tt.wantWord)
			}
		})
	}
}
