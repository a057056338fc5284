package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	sluicelog "github.com/sluice-io/sluice/shared/logging"
	"github.com/sluice-io/sluice/shared/logging/logtest"
)

// TestWriteLog: each successful write a client sends is logged once at
// INFO with its operation, connector, principal, status and duration;
// reads, failed writes and writes another coordinator forwarded are not.
func TestWriteLog(t *testing.T) {
	tests := []struct {
		name, method, path, body string
		headers                  []string
		fail                     map[string]error
		want                     map[string]any // nil: no line
	}{
		{name: "create", method: "POST", path: "/connectors", body: `{"name":"new","config":{}}`,
			want: map[string]any{"operation": "connector.create", "connector": "new", "status": json.Number("201")}},
		{name: "pause", method: "PUT", path: "/connectors/a/pause",
			want: map[string]any{"operation": "connector.pause", "connector": "a", "status": json.Number("202")}},
		{name: "delete", method: "DELETE", path: "/connectors/a%2Fb",
			want: map[string]any{"operation": "connector.delete", "connector": "a/b", "status": json.Number("204")}},
		{name: "a logger names no connector", method: "PUT", path: "/admin/loggers/root", body: `{"level":"DEBUG"}`,
			want: map[string]any{"operation": "logger.level", "status": json.Number("200")}},
		{name: "read", method: "GET", path: "/connectors/a"},
		{name: "failed", method: "PUT", path: "/connectors/a/resume", fail: map[string]error{"ResumeConnector": api.Errorf(api.CodeNotFound, "Connector a not found")}},
		{name: "forwarded", method: "PUT", path: "/connectors/a/stop", headers: []string{ForwardedHeader, "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, out := newFake(), &logtest.Buffer{}
			for k, v := range tt.fail {
				f.errs[k] = v
			}
			lg := sluicelog.NewJSON(out, sluicelog.LevelAll)
			srv := httptest.NewServer(NewHandler(f.services(), WithLogger(lg.Logger(sluicelog.REST))))
			t.Cleanup(srv.Close)
			do(t, srv, tt.method, tt.path, tt.body, tt.headers...)
			lines := out.Records(t, msgWrite)
			if tt.want == nil {
				if len(lines) != 0 {
					t.Fatalf("logged %v, want no write line", lines)
				}
				return
			}
			if len(lines) != 1 {
				t.Fatalf("logged %d write lines, want 1: %v", len(lines), lines)
			}
			l := lines[0]
			for k, v := range tt.want {
				if l[k] != v {
					t.Errorf("%s = %v, want %v (line %v)", k, l[k], v, l)
				}
			}
			if _, named := tt.want["connector"]; !named && l["connector"] != nil {
				t.Errorf("connector %v on an operation that names none", l["connector"])
			}
			if d, err := l["duration"].(json.Number).Int64(); l["level"] != "INFO" || l["principal"] != "anonymous" || l["logger"] != sluicelog.REST || err != nil || d <= 0 {
				t.Errorf("line %v: want INFO, principal anonymous, logger %s and a positive duration", l, sluicelog.REST)
			}
		})
	}
}

// TestWriteLogPrincipal: with authentication the line names the caller
// authentication found, and a write refused for its credentials logs none.
func TestWriteLogPrincipal(t *testing.T) {
	out := &logtest.Buffer{}
	lg := sluicelog.NewJSON(out, slog.LevelInfo)
	srv := httptest.NewServer(NewHandler(newFake().services(), WithLogger(lg.Logger(sluicelog.REST)),
		WithSecurity(Security{Authenticator: testAuthenticator(t)})))
	t.Cleanup(srv.Close)
	if got := do(t, srv, "PUT", "/connectors/a/pause", "", "Authorization", basicHeader("ada", "wrong")); got.status != 401 {
		t.Fatalf("bad password: %d %s", got.status, got.body)
	}
	if got := do(t, srv, "PUT", "/connectors/a/pause", "", "Authorization", "Bearer op-token"); got.status != 202 {
		t.Fatalf("operator: %d %s", got.status, got.body)
	}
	lines := out.Records(t, msgWrite)
	if len(lines) != 1 || lines[0]["principal"] != "otto" || lines[0]["connector"] != "a" {
		t.Fatalf("write lines %v, want one naming otto", lines)
	}
}

// TestWriteLogLevel: the write lines follow the REST logger's level, as
// /admin/loggers sets it.
func TestWriteLogLevel(t *testing.T) {
	out := &logtest.Buffer{}
	lg := sluicelog.NewJSON(out, slog.LevelInfo)
	srv := httptest.NewServer(NewHandler(newFake().services(), WithLogger(lg.Logger(sluicelog.REST))))
	t.Cleanup(srv.Close)
	if _, err := lg.SetLevel(sluicelog.REST, "WARN"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	do(t, srv, "PUT", "/connectors/a/pause", "")
	if lines := out.Records(t, msgWrite); len(lines) != 0 {
		t.Fatalf("logged %v at WARN (after %v)", lines, time.Since(start))
	}
}
