package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluice-io/sluice/shared/natsconn"
	"github.com/sluice-io/sluice/shared/wire"
)

// TestDevSecure starts `sluice dev --secure`: its embedded NATS refuses a
// client without credentials, its coordinator and agents run with the
// nkeys it wrote to the data dir (readable by the owner only), an agent's
// nkey is confined to that agent's subjects, and connectors run as they
// do without --secure (through REST with the admin credential --secure
// wrote, once REST authentication is part of it).
func TestDevSecure(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	listen := sluicetest.FreeAddr(t)
	dev := procs.StartProc(t, "dev", "dev", "--secure", "--data-dir", dataDir, "--listen", listen, "--log-level", "info")
	// --secure may print more than the ready line (how to use the REST
	// credential it made): find the ready line among them.
	var m []string
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		if !dev.Running() {
			t.Fatal("sluice dev --secure exited before it was ready")
		}
		for _, line := range dev.StdoutLines() {
			if m = readyRE.FindStringSubmatch(line); m != nil {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no ready line in %q", dev.StdoutLines())
	})
	natsURL := "nats://127.0.0.1:" + m[2]

	if nc, err := nats.Connect(natsURL); !errors.Is(err, nats.ErrAuthorization) {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("anonymous connect to the secured NATS: %v, want an authorization violation", err)
	}
	auth := filepath.Join(dataDir, "nats-auth")
	for _, f := range []string{"nats-server.conf", "coordinator-coordinator.nk", "agent-agent-1.nk", "agent-agent-2.nk"} {
		st, err := os.Stat(filepath.Join(auth, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v (%v), want mode 0600", f, err, st)
		}
	}
	violations := make(chan error, 8)
	opts, err := natsconn.Auth{NkeySeedFile: filepath.Join(auth, "agent-agent-1.nk")}.Options()
	if err != nil {
		t.Fatal(err)
	}
	opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { violations <- err }))
	nc, err := nats.Connect(natsURL, opts...)
	if err != nil {
		t.Fatalf("connect with agent-1's nkey: %v", err)
	}
	defer nc.Close()
	subject := wire.AgentSubject(wire.SubjectAgentAssign, "sluice", "agent-2")
	if err := nc.Publish(subject, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-violations:
		if !errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), subject) {
			t.Fatalf("publish of an assign with agent-1's nkey: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("agent-1's nkey published an assign to agent-2 unrefused")
	}

	rest := devREST{t: t, url: "http://" + listen, passwordFile: filepath.Join(dataDir, "rest-auth", "admin.password")}
	gen := map[string]string{"connector.class": "GeneratorSource", "topic": procs.UniquePrefix(t) + "-gen", "tasks.max": "2", "streams": "2"}
	if status, body := rest.do(http.MethodPost, "/connectors", map[string]any{"name": "gen", "config": gen}); status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		var st sluicetest.Status
		status, body := rest.do(http.MethodGet, "/connectors/gen/status", nil)
		if status != http.StatusOK || json.Unmarshal(body, &st) != nil {
			return false, fmt.Sprintf("status: %d %s", status, body)
		}
		running := 0
		for _, task := range st.Tasks {
			if task.State == "RUNNING" {
				running++
			}
		}
		return st.Connector.State == "RUNNING" && running == 2, fmt.Sprintf("status: %s", body)
	})
	if lines := dev.LogLines("NATS server refused"); len(lines) > 0 {
		t.Fatalf("the server refused the dev process's own operations:\n%s", strings.Join(lines, "\n"))
	}
	if lines := dev.LogLines("embedded NATS secured"); len(lines) != 1 {
		t.Fatalf("dev did not say it secured NATS: %q", lines)
	}
	dev.Terminate(syscall.SIGINT, 10*time.Second)
}

// devREST calls the REST API of `sluice dev --secure`, with the admin
// password it wrote to the data dir when REST authentication is on.
type devREST struct {
	t            *testing.T
	url          string
	passwordFile string
}

func (d devREST) do(method, path string, body any) (int, []byte) {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, d.url+path, rd)
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if pw, err := os.ReadFile(d.passwordFile); err == nil {
		req.SetBasicAuth("admin", strings.TrimSpace(string(pw)))
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}
