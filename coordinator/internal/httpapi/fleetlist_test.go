package httpapi

import (
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

// TestFleetQuery: the fleet listing binds every parameter, in any case
// where a value is a name of a set, and answers 400 naming the parameter
// for one it does not take, one given twice, and a value out of its set.
func TestFleetQuery(t *testing.T) {
	f := newFake()
	srv := serve(t, f)
	bad := []struct{ name, query, msg string }{
		{"unknown parameter", "?status=RUNNING", "Unknown query parameter 'status': GET /sluice/fleet/connectors takes [q state health type agent plugin label sort offset limit]"},
		{"a parameter twice", "?state=RUNNING&state=FAILED", "Query parameter 'state' is given 2 times: give it once"},
		{"bad state", "?state=RUNNING,SLEEPING", "Invalid value 'RUNNING,SLEEPING' for query parameter 'state': must be one or more of RUNNING, PAUSED, STOPPED, FAILED, RESTARTING, UNASSIGNED, comma-separated"},
		{"bad health", "?health=sick", "Invalid value 'sick' for query parameter 'health': must be one or more of failed, degraded, unassigned, paused, stopped, healthy, comma-separated"},
		{"bad type", "?type=both", "Invalid value 'both' for query parameter 'type'"},
		{"bad sort", "?sort=age", "Invalid value 'age' for query parameter 'sort': must be one of attention, name, changed"},
		{"limit too big", "?limit=501", "Invalid value '501' for query parameter 'limit': must be an integer from 1 to 500"},
		{"limit zero", "?limit=0", "Invalid value '0' for query parameter 'limit'"},
		{"offset negative", "?offset=-1", "Invalid value '-1' for query parameter 'offset'"},
		{"offset not a number", "?offset=ten", "Invalid value 'ten' for query parameter 'offset'"},
		{"label without a value", "?label=team", "Invalid value 'team' for query parameter 'label': must be key=value"},
		{"label without a key", "?label==a", "Invalid value '=a' for query parameter 'label'"},
		{"label key twice", "?label=team=a&label=team=b", "Query parameter 'label' gives key 'team' twice, as 'a' and 'b': no connector has both"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, srv, "GET", "/sluice/fleet/connectors"+tt.query, "")
			if r.status != 400 || !strings.Contains(r.body, jsonText(t, tt.msg)) || !strings.Contains(r.body, `"error_code":400`) {
				t.Fatalf("%s: got %d %s, want 400 with %q", tt.query, r.status, r.body, tt.msg)
			}
		})
	}
	if _, ok := f.called("FleetConnectors"); ok {
		t.Fatal("a refused query reached the service")
	}

	r := do(t, srv, "GET", "/sluice/fleet/connectors?q=Ord&state=running,Failed&health=FAILED&type=Sink&agent=agent-1&plugin=FileStreamSink"+
		"&label=team%3Dorders&label=env=prod&label=team=orders&sort=Changed&offset=50&limit=25", "")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	args, _ := f.called("FleetConnectors")
	want := api.FleetQuery{Q: "Ord", States: []string{"RUNNING", "FAILED"}, Healths: []string{"failed"}, Types: []string{"sink"}, Agent: "agent-1",
		Plugin: "FileStreamSink", Labels: map[string]string{"team": "orders", "env": "prod"}, Sort: "changed", Offset: 50, Limit: 25}
	if got := args[0].(api.FleetQuery); !reflect.DeepEqual(got, want) {
		t.Fatalf("bound %+v, want %+v", got, want)
	}
	do(t, srv, "GET", "/sluice/fleet/connectors", "")
	args, _ = f.called("FleetConnectors")
	if got := args[0].(api.FleetQuery); !reflect.DeepEqual(got, api.FleetQuery{Limit: api.DefaultFleetLimit}) {
		t.Fatalf("defaults %+v", got)
	}
}

// TestFleetListingIsTheCallersView: the service is asked only about the
// connectors the caller may view; with authentication off, about all.
func TestFleetListingIsTheCallersView(t *testing.T) {
	f := newFake()
	f.expanded = map[string]api.ConnectorExpanded{"team-a-1": {}, "team-a-2": {}, "team-b-1": {}}
	srv := httptest.NewServer(NewHandler(f.services(), WithSecurity(Security{Authenticator: testAuthenticator(t)})))
	t.Cleanup(srv.Close)
	for _, tc := range []struct{ who, header, want, total string }{
		{"a team's operator", basicHeader("tom", "pw-tom"), `"team-a-1","team-a-2"`, `"total":2`},
		{"a viewer of every connector", basicHeader("vera", "pw-vera"), `"team-a-1","team-a-2","team-b-1"`, `"total":3`},
	} {
		r := do(t, srv, "GET", "/sluice/fleet/connectors", "", "Authorization", tc.header)
		if r.status != 200 || !strings.Contains(r.body, tc.total) || names(r.body) != tc.want {
			t.Fatalf("%s: %d %s", tc.who, r.status, r.body)
		}
	}
	if r := do(t, srv, "GET", "/sluice/fleet/connectors", ""); r.status != 401 {
		t.Fatalf("anonymous: %d %s", r.status, r.body)
	}
	open := serve(t, f)
	if r := do(t, open, "GET", "/sluice/fleet/connectors", ""); r.status != 200 || names(r.body) != `"team-a-1","team-a-2","team-b-1"` {
		t.Fatalf("without authentication: %d %s", r.status, r.body)
	}
}

// names are the "name" values of a listing's body, in order, quoted and
// comma-separated.
func names(body string) string {
	var out []string
	for _, part := range strings.Split(body, `"name":`)[1:] {
		n, _, _ := strings.Cut(part, ",")
		out = append(out, n)
	}
	return strings.Join(out, ",")
}
