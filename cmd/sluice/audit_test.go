package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
)

func TestAuditChange(t *testing.T) {
	st := func(target string, kv ...string) *api.AuditState {
		s := &api.AuditState{TargetState: target, Config: map[string]string{}}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Config[kv[i]] = kv[i+1]
		}
		return s
	}
	for _, tt := range []struct {
		before, after *api.AuditState
		want          string
	}{
		{nil, nil, "-"},
		{nil, st("STOPPED"), "created STOPPED"},
		{st("RUNNING"), nil, "deleted"},
		{st("RUNNING", "a", "1"), st("RUNNING", "a", "1"), "unchanged"},
		{st("RUNNING", "a", "1"), st("PAUSED", "a", "1"), "RUNNING -> PAUSED"},
		{st("RUNNING", "a", "1", "b", "2", "c", "3"), st("STOPPED", "a", "1", "b", "9", "d", "4"), "RUNNING -> STOPPED, config ~b -c +d"},
	} {
		if got := change(api.AuditRecord{Before: tt.before, After: tt.after}); got != tt.want {
			t.Errorf("change(%+v, %+v) = %q, want %q", tt.before, tt.after, got, tt.want)
		}
	}
}

// sluice audit sends its flags as GET /sluice/audit's parameters and
// prints the records as a table.
func TestAuditCommand(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"records":[{"time":"2026-01-02T03:04:05Z","principal":"anonymous","source":"10.1.2.3:4567",` +
			`"operation":"connector.create","method":"POST","path":"/connectors","connector":"c","before":null,` +
			`"after":null,"status":400,"error":"Connector configuration is invalid\nand contains 1 error"}],"more":true,"unwritten":2}`))
	}))
	defer srv.Close()
	var out bytes.Buffer
	app := newApp()
	app.Writer = &out
	if err := app.Run([]string{"sluice", "audit", "--url", srv.URL, "--connector", "c", "--since", "1h", "--limit", "5"}); err != nil {
		t.Fatal(err)
	}
	if got.URL.Path != "/sluice/audit" || got.URL.Query().Encode() != "connector=c&limit=5&since=1h" {
		t.Fatalf("requested %s", got.URL)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Local().Format(time.DateTime)
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "TIME") ||
		strings.Join(strings.Fields(lines[1]), " ") != when+" anonymous 10.1.2.3:4567 connector.create c 400 Connector configuration is invalid and contains 1 error -" ||
		!strings.Contains(lines[2], "older records match") || !strings.Contains(lines[3], "could not write 2 audit record(s)") {
		t.Fatalf("printed:\n%s", out.String())
	}
	out.Reset()
	if err := app.Run([]string{"sluice", "audit", "--url", srv.URL, "--json"}); err != nil {
		t.Fatal(err)
	}
	if got.URL.RawQuery != "" || !strings.Contains(out.String(), `"operation": "connector.create"`) {
		t.Fatalf("requested %s, printed %s", got.URL, out.String())
	}
}

// The audit flags take SLUICE_AUDIT_* variables and reach the coordinator.
func TestAuditFlags(t *testing.T) {
	t.Setenv("SLUICE_AUDIT_TOPIC", "team-audit")
	t.Setenv("SLUICE_AUDIT_TIMEOUT", "750ms")
	c := flagContext(t, coordinatorFlags()...)
	cfg, err := coordinatorConfig(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Audit; a.Topic != "team-audit" || a.Timeout != 750*time.Millisecond || a.Retention != 90*24*time.Hour {
		t.Fatalf("audit config %+v", a)
	}
}

// A principal or a connector name with a newline, a tab or an escape
// sequence cannot forge a row or a column of sluice audit's table: each
// record stays one line, with its control characters shown escaped.
func TestAuditTableCannotBeForged(t *testing.T) {
	forged := api.AuditRecord{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Principal: "eve\n2026-01-02 03:04:05  admin  10.7.7.7:1  connector.delete  team-b-1  204  deleted",
		Source:    "10.0.0.1:1\t", Operation: "connector.create", Connector: "x\x1b[2Jy", Status: 201}
	var out bytes.Buffer
	if err := printAudit(&out, api.AuditLog{Records: []api.AuditRecord{forged}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("one record printed as %d lines:\n%s", len(lines)-1, out.String())
	}
	for _, want := range []string{`eve\n2026-01-02`, `10.0.0.1:1\t`, `x\x1b[2Jy`} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("row %q does not show %q", lines[1], want)
		}
	}
}
