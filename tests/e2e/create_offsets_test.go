package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
)

// holdOffsetsEnv is the agent's test-only seam (cmd/sluice, compiled in by
// -tags sluicetest, which BuildBinary passes): an agent started with it
// holds every offsets request that writes offsets, after creating the marker
// file it names, until the request's deadline.
const holdOffsetsEnv = "SLUICE_TEST_HOLD_OFFSETS"

// fileSrc is a file source offsets entry.
func fileSrc(file string, pos int) map[string]any {
	return map[string]any{"partition": map[string]any{"filename": file}, "offset": map[string]any{"position": pos}}
}

// offsetsOf is GET /connectors/{name}/offsets, canonical.
func offsetsOf(c *procs.Cluster, name string) string {
	c.T.Helper()
	var body struct {
		Offsets []map[string]any `json:"offsets"`
	}
	c.Must(http.StatusOK, http.MethodGet, "/connectors/"+name+"/offsets", nil).JSON(c.T, &body)
	return sluicetest.CanonOffsets(c.T, body.Offsets)
}

// nameOffsets reads the offsets stored under a name with no connector: a
// STOPPED connector of that name is created, its offsets read, and it is
// deleted again (offsets outlive it).
func nameOffsets(c *procs.Cluster, name string, config map[string]string) string {
	c.T.Helper()
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": name, "config": config, "initial_state": "STOPPED"})
	got := offsetsOf(c, name)
	c.Must(http.StatusNoContent, http.MethodDelete, "/connectors/"+name, nil)
	return got
}

// bgT lets sluicetest.Do run on another goroutine: a failure is reported with
// Errorf and ends that goroutine only.
type bgT struct{ t testing.TB }

func (g bgT) Helper() {}

func (g bgT) Fatalf(format string, args ...any) {
	g.t.Errorf(format, args...)
	runtime.Goexit()
}

// TestCreateOffsetsAgentKilled kills -9 the agent that is writing a
// create's initial offsets (held there by SLUICE_TEST_HOLD_OFFSETS) while a
// second agent runs. The coordinator stops waiting on the dead agent once
// its lease expires and carries the operation out on the survivor — fence
// first, so the dead agent's open transaction is aborted — and the create
// succeeds with exactly the initial offsets, the stale ones gone.
func TestCreateOffsetsAgentKilled(t *testing.T) {
	t.Parallel()
	c := procs.Start(t, procs.Options{Agents: 1})
	name := c.Name("held")
	if err := os.WriteFile(filepath.Join(c.WorkDir, "held.txt"), []byte("line-1\nline-2\nline-3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	config := map[string]string{"connector.class": "FileStreamSource", "file": "held.txt", "topic": c.Name("held")}
	previous := []map[string]any{fileSrc("held.txt", 7), fileSrc("stale.txt", 4)}
	initial := []map[string]any{fileSrc("held.txt", 14)}

	// The previous offsets, written through agent-1 before the holding
	// agent exists.
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": name, "config": config, "initial_state": "STOPPED"})
	c.Must(http.StatusOK, http.MethodPatch, "/connectors/"+name+"/offsets", map[string]any{"offsets": previous})
	c.Must(http.StatusNoContent, http.MethodDelete, "/connectors/"+name, nil)
	want := sluicetest.CanonOffsets(t, previous)
	if got := nameOffsets(c, name, config); got != want {
		t.Fatalf("seeded offsets %s, want %s", got, want)
	}

	// agent-0 sorts first, so the coordinator sends it the create's
	// offsets requests: it fences (a fence passes the hold) and is then
	// held inside the write.
	marker := filepath.Join(t.TempDir(), "held")
	args := c.Agents[0].Args()
	for i := range args {
		if args[i] == "--id" {
			args[i+1] = "agent-0"
		}
	}
	mark := c.Coordinator.Mark()
	held := procs.NewProc(t, "agent-0", args...)
	held.Env = []string{holdOffsetsEnv + "=" + marker}
	held.Start()
	c.Agents = append(c.Agents, held)
	c.WaitRegistered(mark, "agent-0")
	sluicetest.Eventually(t, 5*time.Second, func() (bool, string) {
		return held.CountLog("test seam active", holdOffsetsEnv) > 0,
			fmt.Sprintf("agent-0 runs with %s but did not warn that a test seam is active", holdOffsetsEnv)
	})

	answer := make(chan sluicetest.Response, 1)
	began := time.Now()
	go func() {
		answer <- sluicetest.Do(bgT{t}, c.URL, http.MethodPost, "/connectors", map[string]any{"name": name, "config": config, "initial_offsets": initial})
	}()
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		_, err := os.Stat(marker)
		return err == nil, fmt.Sprintf("agent-0 is not holding an offsets write yet (%v)", err)
	})
	if data, _ := os.ReadFile(marker); strings.TrimSpace(string(data)) != name {
		t.Fatalf("agent-0 holds a write for %q, want %q", data, name)
	}
	held.Kill()

	var r sluicetest.Response
	select {
	case r = <-answer:
	case <-time.After(3 * time.Minute):
		t.Fatal("the create did not answer within 3 minutes of the agent's death")
	}
	if t.Failed() {
		t.FailNow()
	}
	took := time.Since(began)
	t.Logf("the create answered %v after it was sent", took.Round(100*time.Millisecond))
	// The coordinator stops waiting once the dead agent's lease expires and
	// carries out the operation on the survivor: fencing first, so the dead
	// agent's open transaction is aborted, then one transaction. The create
	// succeeds, with exactly the initial offsets.
	if r.Status != http.StatusCreated {
		t.Fatalf("got %s, want 201 through the surviving agent", r)
	}
	if took > 20*time.Second {
		t.Fatalf("the create took %v: it waited on the dead agent instead of its lease", took)
	}
	if got := c.Do(http.MethodGet, "/connectors/"+name, nil); got.Status != http.StatusOK {
		t.Fatalf("the connector does not exist after the create: %s", got)
	}
	if got, want := offsetsOf(c, name), sluicetest.CanonOffsets(t, initial); got != want {
		t.Fatalf("offsets under %s after the create: %s, want exactly the initial %s", name, got, want)
	}
}

// sluiceCLI runs the built sluice binary with args and returns its stdout,
// stderr and exit code.
func sluiceCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(procs.Binary(), args...)
	cmd.Env = procs.ChildEnv()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run sluice %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// TestCreateOffsetsCLI: `sluice connectors create -f connector.json`
// sends initial_state and initial_offsets: the connector is created
// STOPPED at the given position, and after `sluice connectors resume` its
// task reads from there. A bad initial_state is the server's 400, printed
// as the CLI's error.
func TestCreateOffsetsCLI(t *testing.T) {
	t.Parallel()
	c := procs.Start(t, procs.Options{Agents: 1})
	name, topic := c.Name("cli"), c.Name("cli")
	if err := os.WriteFile(filepath.Join(c.WorkDir, "cli.txt"), []byte("skip-1\nskip-2\nread-1\nread-2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := map[string]any{
		"name":            name,
		"config":          map[string]string{"connector.class": "FileStreamSource", "file": "cli.txt", "topic": topic},
		"initial_state":   "STOPPED",
		"initial_offsets": []map[string]any{fileSrc("cli.txt", 14)},
	}
	file := filepath.Join(t.TempDir(), "connector.json")
	data, _ := json.Marshal(spec)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := sluiceCLI(t, "connectors", "--url", c.URL, "create", "-f", file)
	if code != 0 {
		t.Fatalf("sluice connectors create: exit %d\n%s%s", code, stdout, stderr)
	}
	var created struct {
		Name          string `json:"name"`
		OffsetsStatus struct {
			Message string `json:"message"`
		} `json:"offsets_status"`
	}
	if err := json.Unmarshal([]byte(stdout), &created); err != nil || created.Name != name ||
		created.OffsetsStatus.Message != "The offsets for this connector have been altered successfully" {
		t.Fatalf("sluice connectors create printed %q (%v)", stdout, err)
	}
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		s, ok := c.Status(name)
		return ok && s.Connector.State == "STOPPED" && len(s.Tasks) == 0, fmt.Sprintf("status %+v", s)
	})
	if got, want := offsetsOf(c, name), sluicetest.CanonOffsets(t, []map[string]any{fileSrc("cli.txt", 14)}); got != want {
		t.Fatalf("offsets %s, want %s", got, want)
	}

	if _, stderr, code := sluiceCLI(t, "connectors", "--url", c.URL, "resume", name); code != 0 {
		t.Fatalf("sluice connectors resume: exit %d: %s", code, stderr)
	}
	c.WaitRunning(name, 1)
	end := sluicetest.CanonOffsets(t, []map[string]any{fileSrc("cli.txt", 28)})
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		var got []string
		for _, r := range c.ReadTopic(topic) {
			got = append(got, string(r.Value))
		}
		off := offsetsOf(c, name)
		return off == end && strings.Join(got, ",") == "read-1,read-2", fmt.Sprintf("topic holds %q, offsets %s", got, off)
	})

	// initial_state is checked by the server; the CLI prints its 400.
	spec["name"], spec["initial_state"] = c.Name("cli-bad"), "later"
	data, _ = json.Marshal(spec)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = sluiceCLI(t, "connectors", "--url", c.URL, "create", "-f", file)
	if wantErr := "sluice: 400: Invalid initial_state 'later': must be one of RUNNING, PAUSED, STOPPED\n"; code != 1 || stderr != wantErr {
		t.Fatalf("bad initial_state: exit %d, stderr %q, want 1 and %q", code, stderr, wantErr)
	}
	if got := c.Do(http.MethodGet, "/connectors/"+c.Name("cli-bad"), nil); got.Status != http.StatusNotFound {
		t.Fatalf("the refused connector exists: %s", got)
	}
}
