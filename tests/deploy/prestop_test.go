package deploy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/sluicetest"
)

// TestShippedPreStopHookIsLiftedWhenTheAgentIsBack runs the agent
// manifest's preStop command line, with the built binary and the
// container's environment, against a running cluster as the kubelet would
// before stopping the pod: the agent is drained as its own pre-stop hook's
// drain; and once the agent is back as a new process (the pod restarted)
// it is active again, with no one uncordoning it (issue 37).
func TestShippedPreStopHookIsLiftedWhenTheAgentIsBack(t *testing.T) {
	c := container(t, decodeManifest(t, filepath.Join(manifestDir, "agent-sidecar.yaml")), "sluice-agent")
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Exec == nil {
		t.Fatal("the agent container has no preStop exec hook")
	}
	cmd := c.Lifecycle.PreStop.Exec.Command
	cl := sluicetest.Start(t, sluicetest.Options{Agents: 2})

	hook := exec.Command(sluiceBinary(t), cmd[1:]...)
	hook.Env = []string{"HOME=" + t.TempDir(), "SLUICE_CONFIG=" + filepath.Join(t.TempDir(), "config.yaml"),
		"SLUICE_URL=" + cl.URL, "SLUICE_ID=agent-1"}
	for _, e := range c.Env {
		if e.ValueFrom == nil && e.Name != "SLUICE_URL" {
			hook.Env = append(hook.Env, e.Name+"="+e.Value)
		}
	}
	if out, err := hook.CombinedOutput(); err != nil {
		t.Fatalf("the preStop hook %q: %v\n%s", cmd, err, out)
	}
	agent := func() api.AgentInfo {
		var a api.AgentInfo
		r := cl.Must(http.StatusOK, http.MethodGet, "/sluice/agents/agent-1", nil)
		if err := json.Unmarshal(r.Body, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	if a := agent(); a.State != api.AgentDraining || a.Cordon == nil || a.Cordon.Origin != api.CordonPreStop {
		t.Fatalf("after the hook agent-1 is %s, cordon %+v: want draining by its pre-stop hook", a.State, a.Cordon)
	}
	cl.StopAgent(0)
	cl.StartAgent(0)
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		a := agent()
		return a.Registered && a.State == api.AgentActive && a.Cordon == nil,
			fmt.Sprintf("agent-1 back: %s, registered %v, cordon %+v", a.State, a.Registered, a.Cordon)
	})
}
