package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
)

// TestDevSecureKeepsCredentialsAcrossRestarts: `sluice dev --secure`
// restarted on the same data dir keeps the credentials its first start
// generated — the REST admin password and token, the NATS nkeys — so a
// kcctl context or a script that stored them keeps working.
func TestDevSecureKeepsCredentialsAcrossRestarts(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	listen := sluicetest.FreeAddr(t)
	base := "http://" + listen
	dev := procs.StartProc(t, "dev", "dev", "--secure", "--data-dir", dataDir, "--listen", listen, "--log-level", "warn")
	waitReadyLines(t, dev, 1)

	secrets := []string{
		filepath.Join(dataDir, "rest-auth", "admin.password"),
		filepath.Join(dataDir, "rest-auth", "admin.token"),
		filepath.Join(dataDir, "rest-auth", "auth.yaml"),
		filepath.Join(dataDir, "nats-auth", "coordinator-coordinator.nk"),
		filepath.Join(dataDir, "nats-auth", "agent-agent-1.nk"),
	}
	first := map[string]string{}
	for _, f := range secrets {
		first[f] = readTrimmed(t, f)
	}
	password, token := first[secrets[0]], first[secrets[1]]
	checkAuth := func(when string) {
		t.Helper()
		for _, tc := range []struct {
			how  string
			set  func(*http.Request)
			want int
		}{
			{"no credential", func(*http.Request) {}, http.StatusUnauthorized},
			{"the stored password", func(r *http.Request) { r.SetBasicAuth("admin", password) }, http.StatusOK},
			{"the stored token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }, http.StatusOK},
		} {
			req, err := http.NewRequest(http.MethodGet, base+"/connectors", nil)
			if err != nil {
				t.Fatal(err)
			}
			tc.set(req)
			resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
			if err != nil {
				t.Fatalf("%s, %s: %v", when, tc.how, err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s, GET /connectors with %s: %d, want %d", when, tc.how, resp.StatusCode, tc.want)
			}
		}
	}
	checkAuth("first start")

	dev.Terminate(syscall.SIGINT, 20*time.Second)
	dev.Start()
	waitReadyLines(t, dev, 2)
	for _, f := range secrets {
		if got := readTrimmed(t, f); got != first[f] {
			t.Errorf("%s changed across the restart", f)
		}
	}
	var kept bool
	for _, line := range dev.StdoutLines() {
		kept = kept || strings.Contains(line, "REST authentication is on: user admin, password "+password+" ") && strings.Contains(line, "kept from an earlier run")
	}
	if !kept {
		t.Errorf("the restart does not print the kept credential: %q", dev.StdoutLines())
	}
	checkAuth("after the restart")
	dev.Terminate(syscall.SIGINT, 20*time.Second)
}

// waitReadyLines waits until dev printed its ready line n times (its
// stdout is appended to across restarts).
func waitReadyLines(t *testing.T, dev *procs.Proc, n int) {
	t.Helper()
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		if !dev.Running() {
			t.Fatalf("sluice dev exited before it was ready (start %d)", n)
		}
		ready := 0
		for _, line := range dev.StdoutLines() {
			if readyRE.MatchString(line) {
				ready++
			}
		}
		return ready >= n, fmt.Sprintf("%d ready lines of %d in %q", ready, n, dev.StdoutLines())
	})
}

func readTrimmed(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}
