package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// The fake's /admin/loggers answers: two loggers, one changed at a known time.

func (f *fake) LoggerLevels(ctx context.Context) (map[string]wire.LoggerLevel, error) {
	ms := int64(1700000000123)
	return map[string]wire.LoggerLevel{
		"root":                         {Level: "INFO"},
		"io.sluice.coordinator.herder": {Level: "DEBUG", LastModified: &ms},
	}, f.record("LoggerLevels")
}

func (f *fake) LoggerLevel(ctx context.Context, name string) (wire.LoggerLevel, error) {
	return wire.LoggerLevel{Level: "WARN"}, f.record("LoggerLevel", name)
}

// SetWorkerLoggerLevel reports no change for the namespace "same", to show
// that the answer is [] and not null.
func (f *fake) SetWorkerLoggerLevel(ctx context.Context, namespace, level string) ([]string, error) {
	err := f.record("SetWorkerLoggerLevel", namespace, level)
	if namespace == "same" {
		return nil, err
	}
	return []string{namespace, namespace + ".tasks"}, err
}

func (f *fake) SetClusterLoggerLevel(ctx context.Context, namespace, level string) error {
	return f.record("SetClusterLoggerLevel", namespace, level)
}

// TestLoggers covers /admin/loggers as Kafka Connect 4.4 answers it: the
// shapes, the status of each scope, and each check's status and message in
// the order LoggingResource makes them.
func TestLoggers(t *testing.T) {
	const put = "PUT"
	tests := []struct {
		name         string
		setup        func(*fake)
		method, path string
		body         string
		status       int
		want         string // exact body; "" is no body
		call         string // "" is no Service call
		args         []any
	}{
		{name: "list", method: "GET", path: "/admin/loggers", status: 200,
			want: `{"io.sluice.coordinator.herder":{"level":"DEBUG","last_modified":1700000000123},"root":{"level":"INFO","last_modified":null}}`,
			call: "LoggerLevels"},
		{name: "one", method: "GET", path: "/admin/loggers/io.sluice.agent", status: 200,
			want: `{"level":"WARN","last_modified":null}`, call: "LoggerLevel", args: []any{"io.sluice.agent"}},
		{name: "unknown logger", method: "GET", path: "/admin/loggers/nope",
			setup:  func(f *fake) { f.errs["LoggerLevel"] = api.Errorf(api.CodeNotFound, "Logger nope not found.") },
			status: 404, want: errorBody(404, "Logger nope not found."), call: "LoggerLevel", args: []any{"nope"}},
		{name: "worker scope by default", method: put, path: "/admin/loggers/io.sluice.agent", body: `{"level":"DEBUG"}`,
			status: 200, want: `["io.sluice.agent","io.sluice.agent.tasks"]`,
			call: "SetWorkerLoggerLevel", args: []any{"io.sluice.agent", "DEBUG"}},
		{name: "worker scope named", method: put, path: "/admin/loggers/root?scope=worker", body: `{"level":"warn"}`,
			status: 200, want: `["root","root.tasks"]`, call: "SetWorkerLoggerLevel", args: []any{"root", "warn"}},
		{name: "nothing changed is an empty list", method: put, path: "/admin/loggers/same", body: `{"level":"INFO"}`,
			status: 200, want: `[]`, call: "SetWorkerLoggerLevel", args: []any{"same", "INFO"}},
		{name: "cluster scope", method: put, path: "/admin/loggers/io.sluice.agent?scope=cluster", body: `{"level":"TRACE"}`,
			status: 204, call: "SetClusterLoggerLevel", args: []any{"io.sluice.agent", "TRACE"}},
		{name: "cluster scope in any case", method: put, path: "/admin/loggers/root?scope=CLUSTER", body: `{"level":"off"}`,
			status: 204, call: "SetClusterLoggerLevel", args: []any{"root", "off"}},
		{name: "an unknown scope falls back to the worker", method: put, path: "/admin/loggers/root?scope=galaxy", body: `{"level":"ERROR"}`,
			status: 200, want: `["root","root.tasks"]`, call: "SetWorkerLoggerLevel", args: []any{"root", "ERROR"}},
		{name: "an empty scope falls back to the worker", method: put, path: "/admin/loggers/root?scope=", body: `{"level":"ERROR"}`,
			status: 200, want: `["root","root.tasks"]`, call: "SetWorkerLoggerLevel", args: []any{"root", "ERROR"}},
		{name: "other members are allowed, scalars are strings", method: put, path: "/admin/loggers/x",
			body: `{"note":5,"level":"debug","also":null}`, status: 200, want: `["x","x.tasks"]`,
			call: "SetWorkerLoggerLevel", args: []any{"x", "debug"}},
		{name: "the last level wins", method: put, path: "/admin/loggers/x", body: `{"level":"nope","level":"FATAL"}`,
			status: 200, want: `["x","x.tasks"]`, call: "SetWorkerLoggerLevel", args: []any{"x", "FATAL"}},
		{name: "no level", method: put, path: "/admin/loggers/x", body: `{}`,
			status: 400, want: errorBody(400, "Desired 'level' parameter was not specified in request.")},
		{name: "null level", method: put, path: "/admin/loggers/x?scope=cluster", body: `{"level":null}`,
			status: 400, want: errorBody(400, "Desired 'level' parameter was not specified in request.")},
		{name: "empty level, log4j's exception", method: put, path: "/admin/loggers/x", body: `{"level":""}`,
			status: 500, want: errorBody(500, "Illegal null or empty Level name.")},
		{name: "invalid level", method: put, path: "/admin/loggers/x", body: `{"level":"LOUD"}`,
			status: 404, want: errorBody(404, "invalid log level 'LOUD'.")},
		{name: "invalid level, cluster scope", method: put, path: "/admin/loggers/x?scope=cluster", body: `{"level":"warning"}`,
			status: 404, want: errorBody(404, "invalid log level 'warning'.")},
		{name: "a number is a level's text", method: put, path: "/admin/loggers/x", body: `{"level":5}`,
			status: 404, want: errorBody(404, "invalid log level '5'.")},
		{name: "level of the wrong type", method: put, path: "/admin/loggers/x", body: `{"level":{"name":"DEBUG"}}`,
			status: 400, want: errorBody(400, `Invalid value for field "level": expected string`)},
		{name: "body not an object", method: put, path: "/admin/loggers/x", body: `["DEBUG"]`,
			status: 400, want: errorBody(400, "Invalid JSON in request body: expected a JSON object")},
		{name: "service failure", method: put, path: "/admin/loggers/x?scope=cluster", body: `{"level":"DEBUG"}`,
			setup: func(f *fake) {
				f.errs["SetClusterLoggerLevel"] = api.Errorf(api.CodeInternal, "Error writing logger level to Kafka: broker down")
			},
			status: 500, want: errorBody(500, "Error writing logger level to Kafka: broker down"),
			call: "SetClusterLoggerLevel", args: []any{"x", "DEBUG"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			if tt.setup != nil {
				tt.setup(f)
			}
			got := do(t, serve(t, f), tt.method, tt.path, tt.body)
			if got.status != tt.status || got.body != tt.want {
				t.Fatalf("got %d %s\nwant %d %s", got.status, got.body, tt.status, tt.want)
			}
			if tt.call == "" {
				if len(f.calls) != 0 {
					t.Fatalf("Service called: %v", f.calls)
				}
				return
			}
			args, ok := f.called(tt.call)
			if !ok || !reflect.DeepEqual(args, tt.args) {
				t.Fatalf("%s called %v with %v, want %v", tt.call, ok, args, tt.args)
			}
		})
	}
}

// TestLoggersRouting: a follower sets a worker-scope level on itself, as a
// Kafka Connect worker does, and forwards a cluster-scope one to the leader,
// which writes it for the whole cluster.
func TestLoggersRouting(t *testing.T) {
	var forwarded atomic.Int32
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forwarded.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer leader.Close()
	tests := []struct {
		name, path string
		status     int
		forwarded  int32
		call       string
	}{
		{"worker scope is served here", "/admin/loggers/root", 200, 0, "SetWorkerLoggerLevel"},
		{"an unknown scope is served here", "/admin/loggers/root?scope=everywhere", 200, 0, "SetWorkerLoggerLevel"},
		{"cluster scope goes to the leader", "/admin/loggers/root?scope=cluster", 204, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forwarded.Store(0)
			f := newFake()
			srv := httptest.NewServer(NewHandler(f.services(), WithLeaderRouting(follower{url: leader.URL})))
			defer srv.Close()
			got := do(t, srv, "PUT", tt.path, `{"level":"DEBUG"}`)
			if got.status != tt.status || forwarded.Load() != tt.forwarded {
				t.Fatalf("answer %d, forwarded %d; want %d, %d", got.status, forwarded.Load(), tt.status, tt.forwarded)
			}
			if _, called := f.called("SetWorkerLoggerLevel"); called != (tt.call != "") {
				t.Fatalf("served here: %v, want %v", called, tt.call != "")
			}
		})
	}
}
