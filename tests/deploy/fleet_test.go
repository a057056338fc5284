package deploy

import (
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// TestAgentPreStopDrains checks the agent's part in rolling upgrades
// (issue 17): its container drains its own agent in a preStop hook with the
// image's binary, as its pre-stop drain (--pre-stop, which the leader
// lifts once the agent is back: issue 37), naming it by --self (SLUICE_ID, the pod name: Kubernetes
// does not expand $(VAR) in a hook) at the coordinator's Service; the grace
// period outlasts the hook's wait and the stop after it; the StatefulSet
// replaces pods only when deleted, as sluice fleet roll does; and a
// PodDisruptionBudget lets one agent pod go at a time. The hook's command
// line is run with the built binary and the container's environment, against
// an address where nothing listens: it must get as far as calling the
// coordinator (exit 3), not be refused as a command line (exit 2).
func TestAgentPreStopDrains(t *testing.T) {
	objs := decodeManifest(t, filepath.Join(manifestDir, "agent-sidecar.yaml"))
	s := only[*appsv1.StatefulSet](t, objs)
	c := container(t, objs, "sluice-agent")

	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Exec == nil {
		t.Fatal("the agent container has no preStop exec hook")
	}
	cmd := c.Lifecycle.PreStop.Exec.Command
	img := parseDockerfile(t)
	if len(cmd) < 4 || cmd[0] != img.entrypoint || strings.Join(cmd[1:4], " ") != "agents drain --self" ||
		!slices.Contains(cmd, "--pre-stop") || !slices.Contains(cmd, "--wait") || !slices.Contains(cmd, "--timeout") {
		t.Fatalf("preStop runs %q, want %s agents drain --self --pre-stop --wait --timeout … (--pre-stop: the leader uncordons the agent once it is back)", cmd, img.entrypoint)
	}
	wait, err := time.ParseDuration(cmd[slices.Index(cmd, "--timeout")+1])
	if err != nil {
		t.Fatalf("the hook's --timeout: %v", err)
	}
	grace := s.Spec.Template.Spec.TerminationGracePeriodSeconds
	// After the hook, SIGTERM's stop: tasks commit their offsets (the
	// agent's shutdown timeout, and the coordinator's own stop bound).
	if grace == nil || time.Duration(*grace)*time.Second < wait+30*time.Second {
		t.Errorf("terminationGracePeriodSeconds %v: want at least the hook's %s and 30 s to stop", grace, wait)
	}

	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if id := env["SLUICE_ID"]; id.ValueFrom == nil || id.ValueFrom.FieldRef == nil || id.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("SLUICE_ID is %+v, want the pod's name (the agent's id, which sluice fleet roll deletes the pod by)", id)
	}
	checkURLIsCoordinatorService(t, env["SLUICE_URL"].Value)

	if s.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType {
		t.Errorf("updateStrategy %q, want OnDelete: sluice fleet roll replaces the pods one after the other", s.Spec.UpdateStrategy.Type)
	}
	pdb := only[*policyv1.PodDisruptionBudget](t, objs)
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
		t.Errorf("the PodDisruptionBudget: maxUnavailable %v, minAvailable %v; want maxUnavailable 1", pdb.Spec.MaxUnavailable, pdb.Spec.MinAvailable)
	}
	if pdb.Spec.Selector == nil || len(pdb.Spec.Selector.MatchLabels) == 0 {
		t.Fatal("the PodDisruptionBudget selects no pods")
	}
	for k, v := range pdb.Spec.Selector.MatchLabels {
		if s.Spec.Template.Labels[k] != v {
			t.Errorf("the PodDisruptionBudget selects %s=%s, which the agent pods (%v) do not have", k, v, s.Spec.Template.Labels)
		}
	}

	run := exec.Command(sluiceBinary(t), cmd[1:]...)
	run.Env = []string{"HOME=" + t.TempDir(), "SLUICE_CONFIG=" + filepath.Join(t.TempDir(), "config.yaml")}
	for name, e := range env {
		switch {
		case name == "SLUICE_URL":
			run.Env = append(run.Env, name+"=127.0.0.1:1")
		case name == "SLUICE_ID":
			run.Env = append(run.Env, name+"=web-0")
		case e.ValueFrom == nil:
			run.Env = append(run.Env, name+"="+e.Value)
		}
	}
	out, err := run.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(string(out), "cannot reach Sluice at http://127.0.0.1:1") {
		t.Fatalf("the preStop hook's command: %v\n%s", err, out)
	}
}

// checkURLIsCoordinatorService checks that url is the coordinator's
// Service in coordinator.yaml, on its REST port.
func checkURLIsCoordinatorService(t *testing.T, url string) {
	t.Helper()
	svc := only[*corev1.Service](t, decodeManifest(t, filepath.Join(manifestDir, "coordinator.yaml")))
	for _, p := range svc.Spec.Ports {
		if p.Name == "rest" {
			if want := "http://" + svc.Name + ":" + strconv.Itoa(int(p.Port)); url != want {
				t.Errorf("SLUICE_URL is %q, want the coordinator's Service %s", url, want)
			}
			return
		}
	}
	t.Errorf("the coordinator's Service has no rest port")
}
