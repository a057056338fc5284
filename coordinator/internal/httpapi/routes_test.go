package httpapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

const (
	infoJSON  = `{"name":"a","config":{"k":"v"},"tasks":[],"type":"source"}`
	stateJSON = `{"name":"a","connector":{"state":"RUNNING","worker_id":"w:8083"},"tasks":[],"type":"source"}`
)

func ptr(s string) *string { return &s }

// TestRoutes covers every route's success answer: status, exact body,
// headers, and the Service call it made.
func TestRoutes(t *testing.T) {
	tests := []struct {
		name         string
		setup        func(*fake)
		method, path string
		body         string
		status       int
		want         string            // exact body; "" is no body
		headers      map[string]string // {base} is the server URL
		call         string
		args         []any
	}{
		{name: "server info", method: "GET", path: "/", status: 200,
			want: `{"version":"1.0","commit":"abc","kafka_cluster_id":"kc"}`, call: "ServerInfo", args: []any{}},
		{name: "health uses the Service's status", method: "GET", path: "/health", status: 503,
			want: `{"status":"starting","message":"Worker is still starting up."}`, call: "Health", args: []any{}},
		{name: "list", method: "GET", path: "/connectors", status: 200, want: `["a","b"]`,
			call: "ListConnectors", args: []any{}},
		{name: "expand status and info", method: "GET", path: "/connectors?expand=status&expand=info",
			setup: func(f *fake) {
				i, s := info("a"), state("a")
				f.expanded = map[string]api.ConnectorExpanded{"a": {Status: &s, Info: &i}}
			},
			status: 200, want: `{"a":{"status":` + stateJSON + `,"info":` + infoJSON + `}}`,
			call: "ExpandConnectors", args: []any{true, true}},
		{name: "expand unknown value", method: "GET", path: "/connectors?expand=bogus&expand=STATUS",
			setup:  func(f *fake) { f.expanded = map[string]api.ConnectorExpanded{"a": {}} },
			status: 200, want: `{"a":{}}`, call: "ExpandConnectors", args: []any{false, false}},
		{name: "expand empty with nil map", method: "GET", path: "/connectors?expand=",
			status: 200, want: `{}`, call: "ExpandConnectors", args: []any{false, false}},
		{name: "create", method: "POST", path: "/connectors",
			body:   `{"name":"a","config":{"connector.class":"X"}}`,
			status: 201, want: infoJSON, headers: map[string]string{"Location": "{base}/connectors/a"},
			call: "CreateConnector",
			args: []any{api.CreateConnectorRequest{Name: "a", Config: map[string]string{"connector.class": "X"}}}},
		{name: "create escapes Location", method: "POST", path: "/connectors",
			body:   `{"name":"a/b c?%","config":{}}`,
			status: 201, headers: map[string]string{"Location": "{base}/connectors/a%2Fb%20c%3F%25"},
			want: strings.Replace(infoJSON, `"a"`, `"a/b c?%"`, 1), call: "CreateConnector",
			args: []any{api.CreateConnectorRequest{Name: "a/b c?%", Config: map[string]string{}}}},
		{name: "get", method: "GET", path: "/connectors/a", status: 200, want: infoJSON,
			call: "GetConnector", args: []any{"a"}},
		{name: "name arrives decoded", method: "GET", path: "/connectors/a%2Fb%20c", status: 200,
			want: strings.Replace(infoJSON, `"a"`, `"a/b c"`, 1), call: "GetConnector", args: []any{"a/b c"}},
		{name: "get config", method: "GET", path: "/connectors/a/config", status: 200, want: `{"k":"v"}`,
			call: "GetConnectorConfig", args: []any{"a"}},
		{name: "put config replaces", method: "PUT", path: "/connectors/a/config", body: `{"k":"v2"}`,
			status: 200, want: infoJSON, headers: map[string]string{"Location": ""},
			call: "PutConnectorConfig", args: []any{"a", map[string]string{"k": "v2"}}},
		{name: "put config creates", method: "PUT", path: "/connectors/a%20b/config", body: `{}`,
			setup:  func(f *fake) { f.created = true },
			status: 201, headers: map[string]string{"Location": "{base}/connectors/a%20b"},
			want: strings.Replace(infoJSON, `"a"`, `"a b"`, 1),
			call: "PutConnectorConfig", args: []any{"a b", map[string]string{}}},
		{name: "patch config", method: "PATCH", path: "/connectors/a/config", body: `{"x":null,"y":1,"z":"s"}`,
			status: 200, want: infoJSON, call: "PatchConnectorConfig",
			args: []any{"a", map[string]*string{"x": nil, "y": ptr("1"), "z": ptr("s")}}},
		{name: "status", method: "GET", path: "/connectors/a/status", status: 200, want: stateJSON,
			call: "ConnectorStatus", args: []any{"a"}},
		{name: "tasks", method: "GET", path: "/connectors/a/tasks", status: 200,
			want: `[{"id":{"connector":"a","task":0},"config":{"t":"1"}}]`, call: "TaskConfigs", args: []any{"a"}},
		{name: "task status", method: "GET", path: "/connectors/a/tasks/3/status", status: 200,
			want: `{"id":3,"state":"FAILED","worker_id":"w:8083","trace":"x"}`, call: "TaskStatus", args: []any{"a", 3}},
		{name: "task status negative id", method: "GET", path: "/connectors/a/tasks/-1/status", status: 200,
			want: `{"id":-1,"state":"FAILED","worker_id":"w:8083","trace":"x"}`, call: "TaskStatus", args: []any{"a", -1}},
		{name: "stop", method: "PUT", path: "/connectors/a/stop", status: 204, call: "StopConnector", args: []any{"a"}},
		{name: "pause", method: "PUT", path: "/connectors/a/pause", status: 202, call: "PauseConnector", args: []any{"a"}},
		{name: "resume", method: "PUT", path: "/connectors/a/resume", status: 202, call: "ResumeConnector", args: []any{"a"}},
		{name: "restart without flags", method: "POST", path: "/connectors/a/restart", status: 204,
			call: "RestartConnector", args: []any{"a", false, false}},
		{name: "restart with flags", method: "POST", path: "/connectors/a/restart?includeTasks=TRUE&onlyFailed=yes",
			setup: func(f *fake) { s := state("a"); f.restart = &s }, status: 202, want: stateJSON,
			call: "RestartConnector", args: []any{"a", true, false}},
		{name: "restart first value counts", method: "POST", path: "/connectors/a/restart?onlyFailed=true&onlyFailed=false",
			setup: func(f *fake) { s := state("a"); f.restart = &s }, status: 202, want: stateJSON,
			call: "RestartConnector", args: []any{"a", false, true}},
		{name: "restart task", method: "POST", path: "/connectors/a/tasks/0/restart", status: 204,
			call: "RestartTask", args: []any{"a", 0}},
		{name: "delete", method: "DELETE", path: "/connectors/a", status: 204,
			call: "DeleteConnector", args: []any{"a", false}},
		{name: "delete resetting offsets", method: "DELETE", path: "/connectors/a?reset_offsets=True", status: 204,
			call: "DeleteConnector", args: []any{"a", true}},
		{name: "delete reset_offsets=1 is false", method: "DELETE", path: "/connectors/a?reset_offsets=1", status: 204,
			call: "DeleteConnector", args: []any{"a", false}},
		{name: "topics", method: "GET", path: "/connectors/a/topics", status: 200, want: `{"a":{"topics":["t1"]}}`,
			call: "ConnectorTopics", args: []any{"a"}},
		{name: "topics reset", method: "PUT", path: "/connectors/a/topics/reset", status: 202,
			call: "ResetConnectorTopics", args: []any{"a"}},
		{name: "plugins", method: "GET", path: "/connector-plugins", status: 200,
			want: `[{"class":"x.FileStreamSourceConnector","type":"source","version":"1"}]`,
			call: "ListPlugins", args: []any{true}},
		{name: "plugins all kinds", method: "GET", path: "/connector-plugins?connectorsOnly=FALSE", status: 200,
			want: `[{"class":"x.FileStreamSourceConnector","type":"source","version":"1"}]`,
			call: "ListPlugins", args: []any{false}},
		{name: "plugin config", method: "GET", path: "/connector-plugins/FileStreamSource/config", status: 200,
			want: `[]`, call: "PluginConfig", args: []any{"FileStreamSource"}},
		{name: "validate", method: "PUT", path: "/connector-plugins/X/config/validate", body: `{"connector.class":"X","n":5}`,
			status: 200, want: `{"name":"X","error_count":0,"groups":[],"configs":[]}`,
			call: "ValidateConfig", args: []any{"X", map[string]string{"connector.class": "X", "n": "5"}}},
		{name: "get offsets", method: "GET", path: "/connectors/a/offsets", status: 200, want: `{"offsets":[]}`,
			call: "GetOffsets", args: []any{"a"}},
		{name: "alter offsets", method: "PATCH", path: "/connectors/a/offsets",
			body:   `{"offsets":[{"partition":{"filename":"f"},"offset":{"position":30}},{"partition":null,"offset":null}]}`,
			status: 200, want: `{"message":"The offsets for this connector have been altered successfully"}`,
			call: "AlterOffsets", args: []any{"a", []api.ConnectorOffset{
				{Partition: map[string]any{"filename": "f"}, Offset: map[string]any{"position": json.Number("30")}},
				{},
			}}},
		{name: "reset offsets", method: "DELETE", path: "/connectors/a/offsets", status: 200,
			want: `{"message":"The offsets for this connector have been reset successfully"}`,
			call: "ResetOffsets", args: []any{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			if tt.setup != nil {
				tt.setup(f)
			}
			srv := serve(t, f)
			got := do(t, srv, tt.method, tt.path, tt.body)
			if got.status != tt.status || got.body != tt.want {
				t.Fatalf("got %d %s, want %d %s", got.status, got.body, tt.status, tt.want)
			}
			ct := got.header.Get("Content-Type")
			if tt.want != "" && ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if tt.want == "" && ct != "" {
				t.Errorf("Content-Type %q on an answer without body", ct)
			}
			for k, v := range tt.headers {
				v = strings.ReplaceAll(v, "{base}", srv.URL)
				if h := got.header.Get(k); h != v {
					t.Errorf("header %s = %q, want %q", k, h, v)
				}
			}
			args, ok := f.called(tt.call)
			if !ok {
				t.Fatalf("%s not called; calls: %v", tt.call, f.calls)
			}
			if len(args) == 0 && len(tt.args) == 0 {
				return
			}
			if !reflect.DeepEqual(args, tt.args) {
				t.Errorf("%s args = %#v, want %#v", tt.call, args, tt.args)
			}
		})
	}
}
