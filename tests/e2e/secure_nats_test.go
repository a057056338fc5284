package e2e

import (
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSecureNATSProcesses runs a coordinator and agents as separate sluice
// processes on a NATS server configured with deploy/nats, each with
// --nats-nkey-seed of its own user: connectors run; a coordinator killed and
// restarted leads a new term, with a new signing key, and the agents obey
// it; an agent started with another agent's nkey never registers, and the
// server's refusals are in its log; a seed file that is not a seed stops an
// agent at once, naming the file and the field.
func TestSecureNATSProcesses(t *testing.T) {
	t.Parallel()
	c := procs.Start(t, procs.Options{Agents: 2, SecureNATS: true})
	gen := map[string]string{"connector.class": "GeneratorSource", "topic": c.Name("gen"), "tasks.max": "2", "streams": "2"}
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": "gen", "config": gen})
	c.WaitRunning("gen", 2)

	mark := c.Coordinator.Mark()
	c.Coordinator.Kill()
	c.Coordinator.Restart()
	c.WaitHealthy()
	c.WaitRegistered(mark, "agent-1", "agent-2")
	c.Must(http.StatusNoContent, http.MethodPost, "/connectors/gen/tasks/1/restart", nil)
	c.WaitRunning("gen", 2)
	for _, p := range append(c.Agents, c.Coordinator) {
		if n := p.CountLog("NATS server refused"); n > 0 {
			t.Errorf("%s: the server refused %d of its operations: %q", p.Name(), n, p.LogLines("NATS server refused"))
		}
	}

	// agent-3 with agent-1's nkey: its subscriptions and registrations are
	// refused.
	impostor := procs.StartProc(t, "agent-3", "agent", "--nats", c.NATSURL, "--kafka", c.Brokers, "--id", "agent-3",
		"--group-id", c.Prefix, "--offsets-topic", c.Prefix+"-offsets", "--work-dir", c.WorkDir, "--log-level", "debug",
		"--nats-nkey-seed", c.NATSCreds.Agents["agent-1"])
	sluicetest.Eventually(t, 15*time.Second, func() (bool, string) {
		return impostor.CountLog("NATS server refused", "Permissions Violation") > 0, "agent-3 has not logged a refusal"
	})
	sluicetest.Consistently(t, 2*time.Second, func() (bool, string) {
		return c.Coordinator.CountLog(`msg="agent registered"`, "agent=agent-3 ") == 0, "an agent with another agent's nkey registered"
	})
	if n := c.Coordinator.CountLog(`msg="agent registered"`, "agent=agent-3 "); n > 0 {
		t.Fatal("an agent with another agent's nkey registered")
	}
	impostor.Kill()

	bad := filepath.Join(t.TempDir(), "bad.nk")
	if err := os.WriteFile(bad, []byte("not a seed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	broken := procs.StartProc(t, "agent-4", "agent", "--nats", c.NATSURL, "--kafka", c.Brokers, "--id", "agent-4",
		"--group-id", c.Prefix, "--offsets-topic", c.Prefix+"-offsets", "--nats-nkey-seed", bad)
	code, ok := broken.Wait(10 * time.Second)
	if !ok || code == 0 {
		t.Fatalf("an agent with a bad seed file: exited %v with code %d", ok, code)
	}
	if lines := broken.LogLines("nkey seed file " + bad + ": field seed"); len(lines) == 0 {
		t.Fatalf("the agent's error does not name the file and field: %q", broken.LogLines())
	}
}
