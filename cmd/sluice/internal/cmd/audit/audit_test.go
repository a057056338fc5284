package audit

import (
	"bytes"
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
