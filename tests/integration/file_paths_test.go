package integration

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// allowedDirs makes a directory the agents allow and one beside it they do
// not, both with symlinks resolved (as agents announce them).
func allowedDirs(t *testing.T) (allowed, other string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	allowed, other = filepath.Join(root, "files"), filepath.Join(root, "other")
	for _, d := range []string{allowed, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return allowed, other
}

// TestFileAllowedPathsValidation checks issue 14 §5: with
// --file-allowed-paths set on the agents, a file connector naming a path
// outside them (/etc/passwd, or a way out through "..") is refused by
// validate as an error on its file key, and by create with Kafka Connect's
// invalid-config 400; a path inside is accepted, and a file round trip
// inside the allowed directory works.
func TestFileAllowedPathsValidation(t *testing.T) {
	t.Parallel()
	allowed, _ := allowedDirs(t)
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, FileAllowedPaths: [][]string{{allowed}, {allowed}}})
	topic := c.Name("lines")
	wantMsg := func(path string) string {
		return "The path " + path + " is not under the allowed paths of any agent that can run this connector (" + allowed +
			"); agents allow only the directories of their --file-allowed-paths"
	}
	for _, path := range []string{"/etc/passwd", filepath.Join(allowed, "..", "..", "etc", "passwd"), "relative.txt"} {
		for _, plugin := range []struct{ name string }{{"FileStreamSource"}, {"FileStreamSink"}} {
			cfg := fileSourceCfg(path, topic)
			if plugin.name == "FileStreamSink" {
				cfg = fileSinkCfg(path, topic)
			}
			v := validateConfig(c, plugin.name, cfgWith(cfg, "name", "x"))
			if v.ErrorCount != 1 || len(v.Errors["file"]) != 1 || v.Errors["file"][0] != wantMsg(path) {
				t.Errorf("%s %s: validate = %+v, want one error on file: %q", plugin.name, path, v, wantMsg(path))
			}
			r := c.Do("POST", "/connectors", map[string]any{"name": c.Name("refused"), "config": cfg})
			wantError(t, r, http.StatusBadRequest, "Connector configuration is invalid and contains the following 1 error(s):\n"+
				wantMsg(path)+"\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
		}
	}
	if r := c.Do("GET", "/connectors/"+c.Name("refused"), nil); r.Status != http.StatusNotFound {
		t.Fatalf("a refused connector was created: %s", r)
	}

	// Inside the allowed directory: a round trip.
	lines := numbered(1, 50)
	writeLines(t, filepath.Join(allowed, "in.txt"), lines)
	if v := validateConfig(c, "FileStreamSource", cfgWith(fileSourceCfg(filepath.Join(allowed, "in.txt"), topic), "name", "src")); v.ErrorCount != 0 {
		t.Fatalf("an allowed path was refused: %+v", v)
	}
	mustCreate(c, "src", fileSourceCfg(filepath.Join(allowed, "in.txt"), topic), "")
	mustCreate(c, "sink", fileSinkCfg(filepath.Join(allowed, "sub", "..", "out.txt"), topic), "")
	c.WaitState("src", "RUNNING", 1, "RUNNING")
	c.WaitState("sink", "RUNNING", 1, "RUNNING")
	waitFile(t, filepath.Join(allowed, "out.txt"), lines)
}

// TestFileAllowedPathsAgentRefuses checks that an agent judges the path
// itself, whatever validation concluded: a symlink inside the allowed
// directory that leads out passes the coordinator's lexical check, and a
// task moved to an agent whose allowed paths differ, and the agent refuses
// both: the task is FAILED with a trace saying why, and nothing is read.
func TestFileAllowedPathsAgentRefuses(t *testing.T) {
	t.Parallel()
	allowed, other := allowedDirs(t)
	secret := filepath.Join(other, "secret.txt")
	writeLines(t, secret, []string{"do not read"})
	if err := os.Symlink(secret, filepath.Join(allowed, "link.txt")); err != nil {
		t.Fatal(err)
	}
	writeLines(t, filepath.Join(allowed, "in.txt"), numbered(1, 10))
	// agent-1 allows the directory, agent-2 only the other one.
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, FileAllowedPaths: [][]string{{allowed}, {other}}})
	topic := c.Name("lines")

	waitFailed := func(name string) string {
		t.Helper()
		var trace string
		sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
			st, _ := c.Status(name)
			if len(st.Tasks) != 1 || st.Tasks[0].State != "FAILED" {
				return false, fmt.Sprintf("status %+v", st)
			}
			trace = st.Tasks[0].Trace
			return true, ""
		})
		return trace
	}

	// The link: allowed as written, refused once resolved.
	mustCreate(c, "linked", fileSourceCfg(filepath.Join(allowed, "link.txt"), topic), "")
	trace := waitFailed("linked")
	if !strings.Contains(trace, "this agent refuses the task: file: the path "+filepath.Join(allowed, "link.txt")+" is not allowed") {
		t.Errorf("trace = %q", trace)
	}

	// A task placed on, or moved to, agent-2, which does not allow the
	// directory: agent-1 allows it, so validation lets it through.
	mustCreate(c, "moved", fileSourceCfg(filepath.Join(allowed, "in.txt"), topic), "")
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		st, _ := c.Status("moved")
		return len(st.Tasks) == 1 && (st.Tasks[0].State == "RUNNING" || st.Tasks[0].State == "FAILED"), fmt.Sprintf("status %+v", st)
	})
	if st, _ := c.Status("moved"); st.Tasks[0].State == "RUNNING" {
		c.StopAgent(0) // on agent-1: it leaves, and the task moves to agent-2
	}
	trace = waitFailed("moved")
	if !strings.Contains(trace, "this agent refuses the task: file: the path "+filepath.Join(allowed, "in.txt")+" is not allowed") ||
		!strings.Contains(trace, other) {
		t.Errorf("trace = %q", trace)
	}
	for _, r := range c.ReadTopic(topic) {
		if strings.Contains(string(r.Value), "do not read") {
			t.Fatalf("the secret was read into the topic: %q", r.Value)
		}
	}
}
