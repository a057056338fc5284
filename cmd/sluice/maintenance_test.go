package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
)

// TestMaintenanceCLI opens a STOPPED window over a running and a paused
// file source with `sluice maintenance open`, lists and shows it, closes
// it and sees each connector restored; `pause --server` acts in one call
// and prints each connector's result, a 404 for an unknown name.
func TestMaintenanceCLI(t *testing.T) {
	cl := startCluster(t)
	u := cl.URL
	dir := t.TempDir()
	writeFile(t, cl.WorkDir, "in.txt", "a\n")
	writeFile(t, dir, "a.yaml", "name: mw-a\nconnector.class: FileStreamSource\nfile: in.txt\ntopic: mw\n")
	writeFile(t, dir, "b.yaml", "name: mw-b\nconnector.class: FileStreamSource\nfile: in.txt\ntopic: mw\n")
	mustCLI(t, "apply", "-f", dir, "--wait", "--url", u)
	mustCLI(t, "pause", "mw-b", "--url", u)
	state := func(name, want string) {
		t.Helper()
		eventually(t, 30*time.Second, func() (bool, string) {
			out := mustCLI(t, "connectors", "status", name, "--url", u)
			var st api.ConnectorStateInfo
			_ = json.Unmarshal([]byte(out), &st)
			return st.Connector.State == want, out
		})
	}
	state("mw-b", "PAUSED")

	out := mustCLI(t, "maintenance", "open", "--match", "mw-*", "--state", "stopped", "--reason", "disk swap", "--url", u)
	id := regexp.MustCompile(`^window (\S+): STOPPED since .* by anonymous \(disk swap\)\n`).FindStringSubmatch(out)
	if id == nil || !regexp.MustCompile(`mw-a\s+RUNNING\n`).MatchString(out) || !regexp.MustCompile(`mw-b\s+PAUSED\n`).MatchString(out) {
		t.Fatalf("maintenance open printed:\n%s", out)
	}
	state("mw-a", "STOPPED")
	state("mw-b", "STOPPED")
	if out := mustCLI(t, "maintenance", "list", "--url", u); !regexp.MustCompile(regexp.QuoteMeta(id[1]) + `\s+STOPPED\s+2\s+`).MatchString(out) {
		t.Fatalf("maintenance list printed:\n%s", out)
	}
	var w api.MaintenanceWindow
	if err := json.Unmarshal([]byte(mustCLI(t, "maintenance", "get", id[1], "-o", "json", "--url", u)), &w); err != nil || w.ID != id[1] || len(w.Connectors) != 2 {
		t.Fatalf("maintenance get -o json: %+v, %v", w, err)
	}
	out = mustCLI(t, "maintenance", "close", id[1], "--url", u)
	if !regexp.MustCompile(`mw-a\s+RUNNING\s+restored\s+RUNNING\n`).MatchString(out) || !regexp.MustCompile(`mw-b\s+PAUSED\s+restored\s+PAUSED\n`).MatchString(out) {
		t.Fatalf("maintenance close printed:\n%s", out)
	}
	state("mw-a", "RUNNING")
	state("mw-b", "PAUSED")
	if _, errOut, code := runCLI(t, "maintenance", "close", id[1], "--url", u); code != exitRefused || !strings.Contains(errOut, "Maintenance window "+id[1]+" not found") {
		t.Fatalf("closing again: exit %d, %s", code, errOut)
	}
	if _, _, code := runCLI(t, "maintenance", "open", "--state", "STOPPED", "--url", u); code != exitUsage {
		t.Fatalf("open without a selection: exit %d", code)
	}

	out, _, code := runCLI(t, "pause", "mw-a", "nope", "--server", "--url", u)
	if code == 0 || !regexp.MustCompile(`mw-a\s+202\s+-\n`).MatchString(out) || !regexp.MustCompile(`nope\s+404\s+Connector nope not found\n`).MatchString(out) {
		t.Fatalf("pause --server: exit %d\n%s", code, out)
	}
	state("mw-a", "PAUSED")
	if out := mustCLI(t, "resume", "--match", "mw-*", "--server", "--wait", "--timeout", "60s", "--url", u); strings.Count(out, " 202 ") != 2 {
		t.Fatalf("resume --server --match --wait:\n%s", out)
	}
	state("mw-a", "RUNNING")
	state("mw-b", "RUNNING")
}
