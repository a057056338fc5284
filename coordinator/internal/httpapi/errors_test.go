package httpapi

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

// TestBadBodies covers the 400s of spec §0 and §5.2 with their exact
// messages; none of them may reach the Service.
func TestBadBodies(t *testing.T) {
	const (
		create   = "/connectors"
		put      = "/connectors/a/config"
		validate = "/connector-plugins/X/config/validate"
		offsets  = "/connectors/a/offsets"
	)
	tests := []struct {
		name, method, path, body string
		msg                      string
	}{
		// Syntax, shared by every body.
		{"empty body", "POST", create, "", "Invalid JSON in request body: unexpected end of JSON input"},
		{"blank body", "PUT", put, "  \n", "Invalid JSON in request body: unexpected end of JSON input"},
		{"truncated", "POST", create, `{"name":`, "Invalid JSON in request body: unexpected end of JSON input"},
		{"not json", "PATCH", offsets, `offsets`, "Invalid JSON in request body: invalid character 'o' looking for beginning of value"},
		{"trailing garbage", "POST", create, `{"name":"a","config":{}} x`, "Invalid JSON in request body: invalid character 'x' after top-level value"},
		{"two values", "PUT", validate, `{} {}`, "Invalid JSON in request body: invalid character '{' after top-level value"},

		// Wrong top-level kind.
		{"create array", "POST", create, `[]`, "Invalid JSON in request body: expected a JSON object"},
		{"create null", "POST", create, `null`, "Invalid JSON in request body: expected a JSON object"},
		{"put config string", "PUT", put, `"x"`, "Invalid JSON in request body: expected a JSON object"},
		{"patch config number", "PATCH", put, `1`, "Invalid JSON in request body: expected a JSON object"},
		{"validate array", "PUT", validate, `[{}]`, "Invalid JSON in request body: expected a JSON object"},
		{"offsets array", "PATCH", offsets, `[]`, "Invalid JSON in request body: expected a JSON object"},

		// Create.
		{"create unknown field", "POST", create, `{"name":"a","config":{},"tasks.max":1}`, `Unrecognized field "tasks.max"`},
		{"create field case", "POST", create, `{"Name":"a","config":{}}`, `Unrecognized field "Name"`},
		{"first unknown in document order", "POST", create, `{"zz":1,"aa":2}`, `Unrecognized field "zz"`},
		{"unknown before null config", "POST", create, `{"config":null,"x":1}`, `Unrecognized field "x"`},
		{"create name object", "POST", create, `{"name":{},"config":{}}`, `Invalid value for field "name": expected string`},
		{"create name array", "POST", create, `{"name":["a"],"config":{}}`, `Invalid value for field "name": expected string`},
		{"create config array", "POST", create, `{"name":"a","config":[]}`, `Invalid value for field "config": expected object`},
		{"create config string", "POST", create, `{"name":"a","config":"k=v"}`, `Invalid value for field "config": expected object`},
		{"create config value object", "POST", create, `{"name":"a","config":{"k":{"x":1}}}`, `Invalid value for field "config.k": expected string`},
		{"create config value array", "POST", create, `{"name":"a","config":{"k":[]}}`, `Invalid value for field "config.k": expected string`},
		{"create config value null", "POST", create, `{"name":"a","config":{"k":null}}`, `Invalid value for field "config.k": expected string`},
		{"create config null", "POST", create, `{"name":"a","config":null}`, "Connector config must not be null"},
		{"create config absent", "POST", create, `{"name":"a"}`, "Connector config must not be null"},
		{"create empty object", "POST", create, `{}`, "Connector config must not be null"},
		{"create state object", "POST", create, `{"config":{},"initial_state":{}}`, `Invalid value for field "initial_state": expected string`},
		{"create offsets object", "POST", create, `{"config":{},"initial_offsets":{}}`, `Invalid value for field "initial_offsets": expected array`},
		{"create offsets scalar element", "POST", create, `{"config":{},"initial_offsets":[1]}`, `Invalid value for field "initial_offsets": expected array of objects`},
		{"create offsets unknown entry field", "POST", create, `{"config":{},"initial_offsets":[{"partition":{},"x":1}]}`, `Unrecognized field "x"`},
		{"create offsets partition array", "POST", create, `{"config":{},"initial_offsets":[{"partition":[]}]}`, `Invalid value for field "partition": expected object`},
		{"create offsets null element", "POST", create, `{"config":{},"initial_offsets":[{},null]}`, "Offset entries must not be null"},
		{"create config null before null element", "POST", create, `{"initial_offsets":[null]}`, "Connector config must not be null"},

		// PUT config and validate: a flat map.
		{"put config value object", "PUT", put, `{"k":{}}`, `Invalid value for field "k": expected string`},
		{"put config value null", "PUT", put, `{"k":null}`, `Invalid value for field "k": expected string`},
		{"validate value array", "PUT", validate, `{"connector.class":"X","k":[1]}`, `Invalid value for field "k": expected string`},

		// PATCH config.
		{"patch config value object", "PATCH", put, `{"k":{}}`, `Invalid value for field "k": expected string`},
		{"patch config value array", "PATCH", put, `{"k":[]}`, `Invalid value for field "k": expected string`},

		// PATCH offsets: the binding failures of spec §5.2 step 1, now 400s.
		{"offsets unknown field", "PATCH", offsets, `{"key":[]}`, `Unrecognized field "key"`},
		{"offsets object", "PATCH", offsets, `{"offsets":{}}`, `Invalid value for field "offsets": expected array`},
		{"offsets string", "PATCH", offsets, `{"offsets":"x"}`, `Invalid value for field "offsets": expected array`},
		{"offsets scalar element", "PATCH", offsets, `{"offsets":[123]}`, `Invalid value for field "offsets": expected array of objects`},
		{"offsets array element", "PATCH", offsets, `{"offsets":[[]]}`, `Invalid value for field "offsets": expected array of objects`},
		{"offsets entry unknown field", "PATCH", offsets, `{"offsets":[{"key":"val"}]}`, `Unrecognized field "key"`},
		{"offsets entry extra field", "PATCH", offsets, `{"offsets":[{"partition":{},"offset":{},"x":1}]}`, `Unrecognized field "x"`},
		{"offsets partition array", "PATCH", offsets, `{"offsets":[{"partition":[]}]}`, `Invalid value for field "partition": expected object`},
		{"offsets offset string", "PATCH", offsets, `{"offsets":[{"partition":{},"offset":"5"}]}`, `Invalid value for field "offset": expected object`},
		{"binding before null element", "PATCH", offsets, `{"offsets":[null,{"bad":1}]}`, `Unrecognized field "bad"`},
		// Step 2, ahead of any connector lookup.
		{"offsets missing", "PATCH", offsets, `{}`, "Partitions / offsets need to be provided for an alter offsets request"},
		{"offsets null", "PATCH", offsets, `{"offsets":null}`, "Partitions / offsets need to be provided for an alter offsets request"},
		{"offsets empty", "PATCH", offsets, `{"offsets":[]}`, "Partitions / offsets need to be provided for an alter offsets request"},
		{"offsets null element", "PATCH", offsets, `{"offsets":[null]}`, "Offset entries must not be null"},
		{"offsets null after entry", "PATCH", offsets, `{"offsets":[{"partition":{"a":1},"offset":null},null]}`, "Offset entries must not be null"},
		{"repeated member replaces", "PATCH", offsets, `{"offsets":[null],"offsets":[]}`, "Partitions / offsets need to be provided for an alter offsets request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			// Any call would fail loudly; the 400 must come first anyway.
			for _, m := range []string{"CreateConnector", "PutConnectorConfig", "PatchConnectorConfig", "ValidateConfig", "AlterOffsets"} {
				f.errs[m] = api.Errorf(api.CodeNotFound, "Connector a not found")
			}
			srv := serve(t, f)
			var body io.Reader
			if tt.body != "" || tt.method != "GET" {
				body = strings.NewReader(tt.body)
			}
			got := doReader(t, srv, tt.method, tt.path, body)
			if want := errorBody(400, tt.msg); got.status != 400 || got.body != want {
				t.Fatalf("got %d %s\nwant 400 %s", got.status, got.body, want)
			}
			if ct := got.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if len(f.calls) != 0 {
				t.Errorf("Service called: %v", f.calls)
			}
		})
	}
}

// TestTransportErrors covers the answers produced before a handler runs
// (404, 405, 415, 413) and the mapping of Service errors.
func TestTransportErrors(t *testing.T) {
	big := `{"name":"` + strings.Repeat("a", MaxBodyBytes) + `","config":{}}`
	tests := []struct {
		name, method, path string
		body               io.Reader
		headers            []string
		setup              func(*fake)
		status             int
		msg                string
		allow              string
	}{
		{name: "unknown path", method: "GET", path: "/nope", status: 404, msg: "HTTP 404 Not Found"},
		{name: "unknown sub-path", method: "GET", path: "/connectors/a/b/c", status: 404, msg: "HTTP 404 Not Found"},
		{name: "trailing slash and wrong method", method: "DELETE", path: "/connectors/", status: 405, msg: "HTTP 405 Method Not Allowed", allow: "GET, HEAD, POST"},
		{name: "two trailing slashes", method: "GET", path: "/connectors//", status: 400, msg: "Ambiguous URI empty segment"},
		{name: "empty segment", method: "GET", path: "//connectors", status: 400, msg: "Ambiguous URI empty segment"},
		{name: "escaped dot segment", method: "GET", path: "/connectors/a/%2e/status", status: 400, msg: "Ambiguous URI path segment"},
		{name: "above the root", method: "GET", path: "/a/../..", status: 400, msg: `HTTP 400 Bad Request: ".." above the root in the path`},
		{name: "dot segment is no step", method: "GET", path: "/./connectors", status: 404, msg: "HTTP 404 Not Found"},
		{name: "dot-dot segment is no step", method: "GET", path: "/connectors/a/../a", status: 404, msg: "HTTP 404 Not Found"},
		{name: "task not an int", method: "GET", path: "/connectors/a/tasks/x/status", status: 404, msg: "HTTP 404 Not Found"},
		{name: "task beyond int32", method: "POST", path: "/connectors/a/tasks/2147483648/restart", status: 404, msg: "HTTP 404 Not Found"},
		{name: "wrong method", method: "DELETE", path: "/connectors", status: 405, msg: "HTTP 405 Method Not Allowed", allow: "GET, HEAD, POST"},
		{name: "wrong method on stop", method: "POST", path: "/connectors/a/stop", status: 405, msg: "HTTP 405 Method Not Allowed", allow: "PUT"},
		{name: "wrong method on offsets", method: "PUT", path: "/connectors/a/offsets", status: 405, msg: "HTTP 405 Method Not Allowed", allow: "DELETE, GET, HEAD, PATCH"},
		{name: "text body", method: "POST", path: "/connectors", body: strings.NewReader(`{}`),
			headers: []string{"Content-Type", "text/plain"}, status: 415, msg: "HTTP 415 Unsupported Media Type"},
		{name: "form body", method: "PATCH", path: "/connectors/a/offsets", body: strings.NewReader(`a=b`),
			headers: []string{"Content-Type", "application/x-www-form-urlencoded"}, status: 415, msg: "HTTP 415 Unsupported Media Type"},
		{name: "bad media type on a bodiless route", method: "PUT", path: "/connectors/a/stop",
			headers: []string{"Content-Type", "text/plain"}, status: 415, msg: "HTTP 415 Unsupported Media Type"},
		{name: "malformed media type", method: "PUT", path: "/connectors/a/config", body: strings.NewReader(`{}`),
			headers: []string{"Content-Type", "application/json; =x"}, status: 400, msg: `Invalid Content-Type header "application/json; =x"`},
		{name: "media type without subtype", method: "PUT", path: "/connectors/a/stop",
			headers: []string{"Content-Type", "json"}, status: 400, msg: `Invalid Content-Type header "json"`},
		{name: "JSON suffix type", method: "PUT", path: "/connectors/a/stop",
			headers: []string{"Content-Type", "application/problem+json"}, status: 415, msg: "HTTP 415 Unsupported Media Type"},
		{name: "bad media type on a read", method: "GET", path: "/connectors/a/status",
			headers: []string{"Content-Type", "text/plain"}, status: 415, msg: "HTTP 415 Unsupported Media Type"},
		{name: "bad media type on a delete", method: "DELETE", path: "/connectors/a",
			headers: []string{"Content-Type", "text/plain"}, status: 415, msg: "HTTP 415 Unsupported Media Type"},
		{name: "body without media type", method: "POST", path: "/connectors", body: strings.NewReader(`{"name":"a","config":{}}`),
			headers: []string{"Content-Type", ""}, status: 415, msg: "HTTP 415 Unsupported Media Type"},
		{name: "chunked body without media type", method: "PATCH", path: "/connectors/a/offsets", body: struct{ io.Reader }{strings.NewReader(`{}`)},
			headers: []string{"Content-Type", ""}, status: 415, msg: "HTTP 415 Unsupported Media Type"},
		{name: "large body without media type", method: "PUT", path: "/connectors/a/config", body: strings.NewReader(big),
			headers: []string{"Content-Type", ""}, status: 415, msg: "HTTP 415 Unsupported Media Type"},
		{name: "empty body without media type", method: "PUT", path: "/connector-plugins/X/config/validate", body: strings.NewReader(""),
			headers: []string{"Content-Type", ""}, status: 400, msg: "Invalid JSON in request body: unexpected end of JSON input"},
		{name: "empty chunked body without media type", method: "POST", path: "/connectors", body: struct{ io.Reader }{strings.NewReader("")},
			headers: []string{"Content-Type", ""}, status: 400, msg: "Invalid JSON in request body: unexpected end of JSON input"},
		{name: "404 before 415", method: "POST", path: "/nope", body: strings.NewReader(`{}`),
			headers: []string{"Content-Type", "text/plain"}, status: 404, msg: "HTTP 404 Not Found"},
		{name: "too large with length", method: "POST", path: "/connectors", body: strings.NewReader(big),
			status: 413, msg: "Request body too large (limit 8 MiB)"},
		{name: "too large chunked", method: "POST", path: "/connectors", body: struct{ io.Reader }{strings.NewReader(big)},
			status: 413, msg: "Request body too large (limit 8 MiB)"},
		{name: "too many offsets", method: "PATCH", path: "/connectors/a/offsets", body: strings.NewReader(offsetsBody(`{"offsets":%s}`, maxOffsetsPerRequest+1)),
			status: 413, msg: "Too many offsets in one request: 10001 entries (limit 10000)"},
		{name: "too many initial offsets", method: "POST", path: "/connectors", body: strings.NewReader(offsetsBody(`{"name":"a","config":{},"initial_offsets":%s}`, maxOffsetsPerRequest+1)),
			status: 413, msg: "Too many offsets in one request: 10001 entries (limit 10000)"},
		{name: "service error", method: "GET", path: "/connectors/a",
			setup:  func(f *fake) { f.errs["GetConnector"] = api.Errorf(api.CodeNotFound, "Connector a not found") },
			status: 404, msg: "Connector a not found"},
		{name: "service conflict", method: "POST", path: "/connectors", body: strings.NewReader(`{"name":"a","config":{}}`),
			setup:  func(f *fake) { f.errs["CreateConnector"] = api.Errorf(api.CodeConflict, "Connector a already exists") },
			status: 409, msg: "Connector a already exists"},
		{name: "wrapped service error", method: "PUT", path: "/connectors/a/stop",
			setup: func(f *fake) {
				f.errs["StopConnector"] = errors.Join(errors.New("ctx"), api.Errorf(api.CodeNotFound, "Unknown connector a"))
			},
			status: 404, msg: "Unknown connector a"},
		{name: "plain error", method: "GET", path: "/connectors",
			setup:  func(f *fake) { f.errs["ListConnectors"] = errors.New("store is down") },
			status: 500, msg: "store is down"},
		{name: "unavailable", method: "DELETE", path: "/connectors/a/offsets",
			setup: func(f *fake) {
				f.errs["ResetOffsets"] = api.Errorf(api.CodeUnavailable, "No agent is available to reset offsets for connector a")
			},
			status: 503, msg: "No agent is available to reset offsets for connector a"},
		{name: "panic", method: "GET", path: "/connectors/a/status",
			setup:  func(f *fake) { f.panicOn = "ConnectorStatus" },
			status: 500, msg: "boom in ConnectorStatus"},
		{name: "error on restart", method: "POST", path: "/connectors/a/restart?includeTasks=true",
			setup:  func(f *fake) { f.errs["RestartConnector"] = api.Errorf(api.CodeNotFound, "Unknown connector: a") },
			status: 404, msg: "Unknown connector: a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			if tt.setup != nil {
				tt.setup(f)
			}
			srv := serve(t, f)
			got := doReader(t, srv, tt.method, tt.path, tt.body, tt.headers...)
			if want := errorBody(tt.status, tt.msg); got.status != tt.status || got.body != want {
				t.Fatalf("got %d %s\nwant %d %s", got.status, got.body, tt.status, want)
			}
			if ct := got.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if a := got.header.Get("Allow"); a != tt.allow {
				t.Errorf("Allow %q, want %q", a, tt.allow)
			}
			if tt.setup == nil && len(f.calls) != 0 {
				t.Errorf("Service called: %v", f.calls)
			}
		})
	}
}

// TestMediaTypesAccepted: JSON with parameters, in any case or as a
// wildcard reaches the Service; so does any media type on the root and
// health routes, and a body without one on a route that reads no body.
func TestMediaTypesAccepted(t *testing.T) {
	tests := []struct {
		method, path, body, ct string
		status                 int
	}{
		{"PUT", "/connectors/a/config", `{"k":"v"}`, "application/json", 200},
		{"PUT", "/connectors/a/config", `{"k":"v"}`, "application/json; charset=UTF-8", 200},
		{"PUT", "/connectors/a/config", `{"k":"v"}`, "Application/JSON", 200},
		{"PUT", "/connectors/a/config", `{"k":"v"}`, "application/*", 200},
		{"PUT", "/connectors/a/config", `{"k":"v"}`, "*/*", 200},
		{"PUT", "/connectors/a/stop", `{"k":"v"}`, "", 204},
		{"GET", "/", "", "text/plain", 200},
		{"GET", "/health", "", "text/plain", 503},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path+" "+tt.ct, func(t *testing.T) {
			f := newFake()
			srv := serve(t, f)
			got := do(t, srv, tt.method, tt.path, tt.body, "Content-Type", tt.ct)
			if got.status != tt.status {
				t.Fatalf("got %d %s", got.status, got.body)
			}
		})
	}
}

// offsetsBody fills format's %s with a list of n offsets entries.
func offsetsBody(format string, n int) string {
	return fmt.Sprintf(format, "["+strings.TrimSuffix(strings.Repeat(`{"partition":{"f":"x"},"offset":{"p":1}},`, n), ",")+"]")
}

// TestTrailingSlash: a path with one trailing slash reaches the route of
// the path without it, with its path values; so does one with a dot
// segment as a name, as Jersey matches it.
func TestTrailingSlash(t *testing.T) {
	tests := []struct {
		method, path, body string
		call               string
		args               []any
	}{
		{"GET", "/connectors/", "", "ListConnectors", []any{}},
		{"POST", "/connectors/", `{"name":"a","config":{}}`, "CreateConnector",
			[]any{api.CreateConnectorRequest{Name: "a", Config: map[string]string{}}}},
		{"GET", "/connectors/a%2Fb/", "", "GetConnector", []any{"a/b"}},
		{"GET", "/connectors/a%2F", "", "GetConnector", []any{"a/"}},
		{"GET", "/connectors/./", "", "GetConnector", []any{"."}},
		{"GET", "/connectors/..", "", "GetConnector", []any{".."}},
		{"GET", "/connectors/a/tasks/1/status/", "", "TaskStatus", []any{"a", 1}},
		{"DELETE", "/connectors/a/?reset_offsets=true", "", "DeleteConnector", []any{"a", true}},
		{"PUT", "/connector-plugins/X/config/validate/", `{}`, "ValidateConfig", []any{"X", map[string]string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			f := newFake()
			srv := serve(t, f)
			got := do(t, srv, tt.method, tt.path, tt.body)
			if got.status >= 300 {
				t.Fatalf("got %d %s", got.status, got.body)
			}
			args, ok := f.called(tt.call)
			if !ok {
				t.Fatalf("%s not called; calls: %v", tt.call, f.calls)
			}
			if len(args) != 0 || len(tt.args) != 0 {
				if !reflect.DeepEqual(args, tt.args) {
					t.Errorf("%s args = %#v, want %#v", tt.call, args, tt.args)
				}
			}
		})
	}
}
