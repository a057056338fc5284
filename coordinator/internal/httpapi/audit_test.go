package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/audit"
)

func (f *fake) AuditLog(ctx context.Context, q audit.Query) (api.AuditLog, error) {
	return api.AuditLog{Records: []api.AuditRecord{}}, f.record("AuditLog", q)
}

// recorded is a Recorder that keeps the records, the side-effect seam of
// the audit middleware (the topic itself is tested in tests/integration).
type recorded struct {
	mu   sync.Mutex
	recs []api.AuditRecord
}

func (r *recorded) Write(rec api.AuditRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
}

func (r *recorded) all() []api.AuditRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]api.AuditRecord(nil), r.recs...)
}

// states is a fixed config store.
type states map[string]audit.Snapshot

func (s states) ConnectorState(name string) (map[string]string, string, bool) {
	c, ok := s[name]
	return c.Config, c.TargetState, ok
}

func serveAudited(t *testing.T, f *fake, a Audit) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(NewHandler(f.services(), WithAudit(a)))
	t.Cleanup(srv.Close)
	return srv
}

// Every write route has a short operation name in the audit records, and
// no read route is taken for a write.
func TestAuditOpsCoverWrites(t *testing.T) {
	for _, rt := range routes() {
		method, _, _ := strings.Cut(rt.pattern, " ")
		_, named := auditOps[rt.op]
		if write := method != http.MethodGet; write != named {
			t.Errorf("route %s (%s): write %v, but has an audit operation name: %v", rt.pattern, rt.op, write, named)
		}
	}
}

func TestAuditWrites(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	st := states{"a": {Config: map[string]string{"connector.class": "X", "k": "v"}, TargetState: "STARTED"}}
	tests := []struct {
		name, method, path, body string
		headers                  []string
		fail                     map[string]error
		want                     *api.AuditRecord // nil: no record
	}{
		{name: "read", method: "GET", path: "/connectors/a"},
		{name: "forwarded", method: "PUT", path: "/connectors/a/pause", headers: []string{ForwardedHeader, "1"}},
		{name: "pause", method: "PUT", path: "/connectors/a/pause/",
			want: &api.AuditRecord{Operation: "connector.pause", Method: "PUT", Path: "/connectors/a/pause/", Connector: "a", Status: 202,
				Before: &api.AuditState{Config: st["a"].Config, TargetState: "RUNNING"}, After: &api.AuditState{Config: st["a"].Config, TargetState: "RUNNING"}}},
		{name: "create with its name in the body", method: "POST", path: "/connectors", body: `{"config":{},"name":"new"}`,
			want: &api.AuditRecord{Operation: "connector.create", Method: "POST", Path: "/connectors", Connector: "new", Status: 201}},
		{name: "refused", method: "DELETE", path: "/connectors/a", fail: map[string]error{"DeleteConnector": api.Errorf(api.CodeNotFound, "Connector a not found")},
			want: &api.AuditRecord{Operation: "connector.delete", Method: "DELETE", Path: "/connectors/a", Connector: "a", Status: 404, Error: "Connector a not found",
				Before: &api.AuditState{Config: st["a"].Config, TargetState: "RUNNING"}, After: &api.AuditState{Config: st["a"].Config, TargetState: "RUNNING"}}},
		{name: "query kept", method: "POST", path: "/connectors/b/restart?includeTasks=true",
			want: &api.AuditRecord{Operation: "connector.restart", Method: "POST", Path: "/connectors/b/restart", Query: "includeTasks=true", Connector: "b", Status: 204}},
		{name: "an escaped name", method: "PUT", path: "/connectors/a%2Fb/stop",
			want: &api.AuditRecord{Operation: "connector.stop", Method: "PUT", Path: "/connectors/a%2Fb/stop", Connector: "a/b", Status: 204}},
		{name: "a logger is no connector", method: "PUT", path: "/admin/loggers/a", body: `{"level":"INFO"}`,
			want: &api.AuditRecord{Operation: "logger.level", Method: "PUT", Path: "/admin/loggers/a", Status: 200}},
		{name: "no route", method: "POST", path: "/connectors/a/status",
			want: &api.AuditRecord{Operation: "unknown", Method: "POST", Path: "/connectors/a/status", Status: 405, Error: "HTTP 405 Method Not Allowed"}},
		{name: "refused path", method: "PUT", path: "//connectors",
			want: &api.AuditRecord{Operation: "unknown", Method: "PUT", Path: "//connectors", Status: 400, Error: "Ambiguous URI empty segment"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, rec := newFake(), &recorded{}
			for k, v := range tt.fail {
				f.errs[k] = v
			}
			srv := serveAudited(t, f, Audit{Recorder: rec, States: st, Coordinator: "c:8083", Now: func() time.Time { return now },
				Principal: func(*http.Request) string { return "alice" }})
			got := do(t, srv, tt.method, tt.path, tt.body, tt.headers...)
			recs := rec.all()
			if tt.want == nil {
				if len(recs) != 0 {
					t.Fatalf("recorded %+v, want nothing", recs)
				}
				return
			}
			if len(recs) != 1 {
				t.Fatalf("answer %d %s; recorded %d records, want 1", got.status, got.body, len(recs))
			}
			r := recs[0]
			if !strings.HasPrefix(r.Source, "127.0.0.1:") {
				t.Errorf("source %q, want the client's address", r.Source)
			}
			want := *tt.want
			want.Time, want.Principal, want.Source, want.Coordinator = now, "alice", r.Source, "c:8083"
			if !sameRecord(r, want) {
				t.Errorf("recorded\n%+v\nwant\n%+v", r, want)
			}
			if r.Status != got.status {
				t.Errorf("recorded status %d, answered %d", r.Status, got.status)
			}
		})
	}
}

// The create's body, read for its name, still reaches the Service whole.
func TestAuditCreateBodyReachesService(t *testing.T) {
	f := newFake()
	srv := serveAudited(t, f, Audit{Recorder: &recorded{}, States: states{}})
	got := do(t, srv, "POST", "/connectors", `{"name":"n","config":{"k":"v"}}`)
	if got.status != 201 {
		t.Fatalf("got %d %s", got.status, got.body)
	}
	args, _ := f.called("CreateConnector")
	if req := args[0].(api.CreateConnectorRequest); req.Name != "n" || req.Config["k"] != "v" {
		t.Fatalf("the Service got %+v", req)
	}
}

func TestAuditDefaults(t *testing.T) {
	rec := &recorded{}
	srv := serveAudited(t, newFake(), Audit{Recorder: rec, States: states{}})
	do(t, srv, "PUT", "/connectors/x/stop", "")
	if recs := rec.all(); len(recs) != 1 || recs[0].Principal != audit.Anonymous || recs[0].Time.IsZero() {
		t.Fatalf("recorded %+v, want one record of an anonymous caller with a time", recs)
	}
}

func TestAuditLogQuery(t *testing.T) {
	f := newFake()
	srv := serve(t, f)
	if got := do(t, srv, "GET", "/sluice/audit?connector=a&principal=ada&operation=offsets.*&until=2026-12-01T10:00:00Z&limit=5", ""); got.status != 200 || got.body != `{"records":[],"more":false,"unwritten":0}` {
		t.Fatalf("got %d %s", got.status, got.body)
	}
	args, _ := f.called("AuditLog")
	if q := args[0].(audit.Query); q.Connector != "a" || q.Principal != "ada" || q.Operation != "offsets.*" || q.Limit != 5 || !q.Since.IsZero() ||
		!q.Until.Equal(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("query %+v", q)
	}
	for _, tt := range []struct{ query, msg string }{
		{"limit=0", "Invalid limit '0': must be an integer from 1 to 10000"},
		{"since=yesterday", "Invalid since 'yesterday': must be an RFC 3339 time (2026-01-02T15:04:05Z) or a positive duration back from now (90s, 1h, 7d)"},
		{"connectors=a", "Unknown query parameter 'connectors': GET /sluice/audit takes connector, principal, operation, since, until and limit"},
	} {
		if got := do(t, srv, "GET", "/sluice/audit?"+tt.query, ""); got.status != 400 || got.body != errorBody(400, tt.msg) {
			t.Errorf("%s: got %d %s, want 400 %q", tt.query, got.status, got.body, tt.msg)
		}
	}
}

func sameRecord(a, b api.AuditRecord) bool {
	return a.Time.Equal(b.Time) && a.Principal == b.Principal && a.Source == b.Source && a.Coordinator == b.Coordinator &&
		a.Operation == b.Operation && a.Method == b.Method && a.Path == b.Path && a.Query == b.Query &&
		a.Connector == b.Connector && a.Status == b.Status && a.Error == b.Error &&
		sameState(a.Before, b.Before) && sameState(a.After, b.After)
}

func sameState(a, b *api.AuditState) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.TargetState != b.TargetState || len(a.Config) != len(b.Config) {
		return false
	}
	for k, v := range a.Config {
		if b.Config[k] != v {
			return false
		}
	}
	return true
}

// blockingRecorder holds each record's write until released.
type blockingRecorder struct {
	entered, release chan struct{}
}

func (b blockingRecorder) Write(api.AuditRecord) {
	b.entered <- struct{}{}
	<-b.release
}

// A write's answer goes out only once its record is written: a client
// that has its answer finds the record in the topic.
func TestAuditAnswersAfterRecord(t *testing.T) {
	rec := blockingRecorder{entered: make(chan struct{}), release: make(chan struct{})}
	srv := serveAudited(t, newFake(), Audit{Recorder: rec, States: states{}})
	answered := make(chan int, 1)
	go func() {
		// Not do: a failed request must not call t.Fatal off the test's
		// goroutine.
		status := 0
		req, _ := http.NewRequest("PUT", srv.URL+"/connectors/a/pause", nil)
		if resp, err := srv.Client().Do(req); err == nil {
			resp.Body.Close()
			status = resp.StatusCode
		}
		answered <- status
	}()
	<-rec.entered
	select {
	case status := <-answered:
		t.Fatalf("answered %d before the record was written", status)
	case <-time.After(200 * time.Millisecond):
	}
	close(rec.release)
	if status := <-answered; status != 202 {
		t.Fatalf("answered %d, want 202", status)
	}
}

// TestAuditCreateName: a create's record names the connector the create's
// decoder reads — the member named exactly "name", trimmed — not another
// member that differs only in case.
func TestAuditCreateName(t *testing.T) {
	for body, want := range map[string]string{
		`{"name":"team-a-x","config":{},"NAME":"team-b-y"}`: "team-a-x",
		`{"NAME":"team-b-y","config":{}}`:                   "",
		`{"name":" padded ","config":{}}`:                   "padded",
		`{"name":"first","name":"last"}`:                    "last",
		`{"name":7}`:                                        "7",
		`not json`:                                          "",
		`["name"]`:                                          "",
	} {
		if got := bodyName([]byte(body)); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}
