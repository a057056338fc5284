package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/connect/allowedpaths"
)

// TestManifestsRestrictFiles checks that the shipped agent manifests set
// --file-allowed-paths (issue 14 §5), to absolute directories that cover
// the agent's working directory, and turn on the config providers.
func TestManifestsRestrictFiles(t *testing.T) {
	objs := decodeManifest(t, filepath.Join(manifestDir, "agent-sidecar.yaml"))
	c := container(t, objs, "sluice-agent")
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	checkAllowed(t, "agent-sidecar.yaml", env["SLUICE_FILE_ALLOWED_PATHS"], env["SLUICE_WORK_DIR"])
	if env["SLUICE_CONFIG_PROVIDERS"] == "" {
		t.Error("agent-sidecar.yaml: no SLUICE_CONFIG_PROVIDERS")
	}

	unit, err := os.ReadFile(filepath.Join("..", "..", "deploy", "systemd", "sluice-agent.service"))
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]string{}
	for _, line := range strings.Split(string(unit), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(k, "#") {
			if name, val, ok := strings.Cut(v, "="); ok && k == "Environment" {
				vals[name] = val
			} else {
				vals[k] = v
			}
		}
	}
	checkAllowed(t, "sluice-agent.service", vals["SLUICE_FILE_ALLOWED_PATHS"], vals["WorkingDirectory"])
}

func checkAllowed(t *testing.T, file, list, workDir string) {
	t.Helper()
	p, err := allowedpaths.Parse(list)
	if err != nil || !p.Restricted() {
		t.Fatalf("%s: file allowed paths %q: %v", file, list, err)
	}
	if !allowedpaths.AllowsLexically(workDir, "/", strings.Split(list, ",")) {
		t.Errorf("%s: the work dir %q is outside the allowed paths %q", file, workDir, list)
	}
}
