package e2e

import (
	"debug/buildinfo"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
)

// readyRE is the one line `sluice dev` prints when it is ready.
var readyRE = regexp.MustCompile(`^sluice dev ready rest=http://127\.0\.0\.1:(\d+) nats=nats://127\.0\.0\.1:(\d+) kafka=(127\.0\.0\.1:\d+) agents=2 console=http://127\.0\.0\.1:\d+/ui/$`)

// TestDevReadyLineHealthAndRestartKeepsConnectors starts `sluice dev` on a
// fresh data dir and checks its ready line, GET /health and a clean exit on
// SIGINT; then starts it again on the same data dir and checks that the
// connectors created in the first run — one running, one created STOPPED —
// came back with their configs and states, and that the running file source
// did not send its lines a second time.
func TestDevReadyLineHealthAndRestartKeepsConnectors(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	dataDir := t.TempDir()
	listen := sluicetest.FreeAddr(t)
	dev := procs.StartProc(t, "dev", "dev", "--data-dir", dataDir, "--listen", listen, "--log-level", "info")
	brokers := waitReady(t, dev, listen, 1)
	t.Logf("ready in %v", time.Since(begin).Round(time.Millisecond))
	c := &procs.Cluster{T: t, URL: "http://" + listen, Brokers: brokers}
	if r := c.Do(http.MethodGet, "/health", nil); r.Status != http.StatusOK {
		t.Fatalf("GET /health right after the ready line: %s, want 200", r)
	}

	in := filepath.Join(t.TempDir(), "in.txt")
	lines := []string{"one", "two", "three"}
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	topic := procs.UniquePrefix(t) + "-lines"
	running := map[string]string{
		"connector.class": "FileStreamSource",
		"file":            in,
		"topic":           topic,
	}
	stopped := map[string]string{
		"connector.class": "GeneratorSource",
		"topic":           topic + "-gen",
	}
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": "file-src", "config": running})
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": "gen-stopped", "config": stopped, "initial_state": "STOPPED"})
	c.WaitRunning("file-src", 1)
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		n := len(c.ReadTopic(topic))
		return n == len(lines), fmt.Sprintf("%d of %d lines in %s", n, len(lines), topic)
	})

	took := dev.Terminate(syscall.SIGINT, 10*time.Second)
	t.Logf("first run exited 0 %v after SIGINT", took.Round(time.Millisecond))

	// Same flags, same data dir: the embedded NATS and Kafka come back on new
	// free ports, with their data.
	dev.Restart()
	c.Brokers = waitReady(t, dev, listen, 2)
	if got, want := c.ConnectorNames(), []string{"file-src", "gen-stopped"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("GET /connectors after the restart: %v, want %v", got, want)
	}
	for name, cfg := range map[string]map[string]string{"file-src": running, "gen-stopped": stopped} {
		var got map[string]string
		c.Must(http.StatusOK, http.MethodGet, "/connectors/"+name+"/config", nil).JSON(t, &got)
		for k, v := range cfg {
			if got[k] != v {
				t.Errorf("config of %s after the restart: %s=%q, want %q (all: %v)", name, k, got[k], v, got)
			}
		}
	}
	c.WaitRunning("file-src", 1)
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		s, ok := c.Status("gen-stopped")
		return ok && s.Connector.State == "STOPPED" && len(s.Tasks) == 0, fmt.Sprintf("gen-stopped: %+v", s)
	})
	// The source resumed from its committed offset: nothing is sent twice.
	// Append a line and wait for it, so the task had its chance to resend.
	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("four\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := []string{"one", "two", "three", "four"}
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		var got []string
		for _, r := range c.ReadTopic(topic) {
			got = append(got, string(r.Value))
		}
		if len(got) > len(want) {
			return true, "" // checked below
		}
		return reflect.DeepEqual(got, want), fmt.Sprintf("topic holds %q, want %q", got, want)
	})
	var got []string
	for _, r := range c.ReadTopic(topic) {
		got = append(got, string(r.Value))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after the restart the topic holds %q, want %q (no line sent twice)", got, want)
	}

	took = dev.Terminate(syscall.SIGINT, 10*time.Second)
	t.Logf("second run exited 0 %v after SIGINT; total %v", took.Round(time.Millisecond), time.Since(begin).Round(time.Millisecond))
	if out := dev.StdoutLines(); len(out) != 2 {
		t.Errorf("stdout over two runs: %q, want exactly one ready line per run", out)
	}
}

// waitReady waits for the ready line of the n-th run of dev and checks that
// it is the only line that run printed and that it names the REST address
// given with --listen. It returns the embedded Kafka address.
func waitReady(t testing.TB, dev *procs.Proc, listen string, n int) string {
	t.Helper()
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		if !dev.Running() {
			t.Fatalf("sluice dev exited before it was ready")
		}
		got := len(dev.StdoutLines())
		return got >= n, fmt.Sprintf("%d stdout lines, want %d", got, n)
	})
	out := dev.StdoutLines()
	if len(out) != n {
		t.Fatalf("stdout: %q, want exactly one line per run (%d)", out, n)
	}
	line := out[n-1]
	m := readyRE.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("ready line %q does not match %s", line, readyRE)
	}
	if want := listen[strings.LastIndexByte(listen, ':')+1:]; m[1] != want {
		t.Fatalf("ready line %q names REST port %s, want %s (--listen %s)", line, m[1], want, listen)
	}
	// agents=2 is true when the line is out: both agents are registered
	// with the leader, so a request right after it finds them.
	r := sluicetest.Do(t, "http://"+listen, http.MethodGet, "/sluice/agents", nil)
	var list struct {
		Agents []struct {
			ID         string `json:"id"`
			Registered bool   `json:"registered"`
		} `json:"agents"`
	}
	r.JSON(t, &list)
	var registered []string
	for _, a := range list.Agents {
		if a.Registered {
			registered = append(registered, a.ID)
		}
	}
	if r.Status != http.StatusOK || len(registered) != 2 {
		t.Fatalf("right after the ready line GET /sluice/agents = %d %s: registered %q, want both agents", r.Status, r.Body, registered)
	}
	return m[3]
}

// TestDevSigintStopsEveryTaskOnceWithoutErrors runs `sluice dev` with a few
// dozen connectors spread over its two agents and stops it with SIGINT. A
// clean shutdown stops every task once, where it runs: no agent takes over
// the tasks of an agent that left before it, and nothing is logged at ERROR
// (a task handed to an agent that is closing its clients fails).
func TestDevSigintStopsEveryTaskOnceWithoutErrors(t *testing.T) {
	t.Parallel()
	listen := sluicetest.FreeAddr(t)
	dev := procs.StartProc(t, "dev", "dev", "--data-dir", t.TempDir(), "--listen", listen, "--log-level", "info")
	c := &procs.Cluster{T: t, URL: "http://" + listen, Brokers: waitReady(t, dev, listen, 1)}
	prefix := procs.UniquePrefix(t)
	out := t.TempDir()
	const sources, sinks = 24, 12
	var names []string
	for i := range sources {
		name := fmt.Sprintf("gen-%d", i)
		c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": name, "config": map[string]string{
			"connector.class": "GeneratorSource", "topic": fmt.Sprintf("%s-%d", prefix, i), "rate": "20"}})
		names = append(names, name)
	}
	for i := range sinks {
		name := fmt.Sprintf("sink-%d", i)
		c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": name, "config": map[string]string{
			"connector.class": "FileStreamSink", "topics": fmt.Sprintf("%s-%d", prefix, i),
			"file": filepath.Join(out, name+".txt")}})
		names = append(names, name)
	}
	ranOn := map[string]string{} // task id → agent
	perAgent := map[string]int{}
	for _, name := range names {
		s := c.WaitRunning(name, 1)
		ranOn[name+"-0"] = s.Tasks[0].WorkerID
		perAgent[s.Tasks[0].WorkerID]++
	}
	if len(perAgent) != 2 {
		t.Fatalf("tasks run on %v, want both agents", perAgent)
	}

	mark := dev.Mark()
	took := dev.Terminate(syscall.SIGINT, 30*time.Second)
	t.Logf("exited 0 %v after SIGINT (tasks per agent: %v)", took.Round(time.Millisecond), perAgent)
	if started := dev.TaskStarts(mark); len(started) > 0 {
		t.Errorf("tasks started during the shutdown (handed over from an agent that left): %v", started)
	}
	// Every task ends once, where it ran: a handed-over task also ends on
	// the agent it was handed to (stopped, or failed as that agent closes).
	ended := map[string][]string{}
	for _, line := range dev.LogLinesSince(mark, `msg="task `) {
		if m := taskEndRE.FindStringSubmatch(line); m != nil {
			ended[m[3]] = append(ended[m[3]], m[2]+" ("+m[1]+")")
		}
	}
	for id, agent := range ranOn {
		if got := ended[id]; len(got) != 1 || got[0] != agent+" (stopped)" {
			t.Errorf("task %s ran on %s; during the shutdown it ended as %v, want once, stopped on %s", id, agent, got, agent)
		}
	}
	if errs := dev.LogLines("level=ERROR"); len(errs) > 0 {
		t.Errorf("%d ERROR lines, want none; the first: %s", len(errs), errs[0])
	}
}

// taskEndRE picks how a task ended, the agent and the task id out of an
// agent's "task stopped" or "task failed" line.
var taskEndRE = regexp.MustCompile(`msg="task (stopped|failed)" agent=(\S+) task=(\S+)`)

// TestDevVersionShowsBuildCommit checks that `sluice --version` and GET /
// show the commit stamped into the binary (vcs.revision, "-dirty" for a
// changed checkout), or "unknown" for a binary built without one.
func TestDevVersionShowsBuildCommit(t *testing.T) {
	t.Parallel()
	info, err := buildinfo.ReadFile(procs.Binary())
	if err != nil {
		t.Fatal(err)
	}
	want := "unknown"
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		want = rev
		if settings["vcs.modified"] == "true" {
			want += "-dirty"
		}
	}
	t.Logf("the binary's commit: %s", want)
	out, err := exec.Command(procs.Binary(), "--version").Output()
	if err != nil {
		t.Fatalf("sluice --version: %v", err)
	}
	if !strings.Contains(string(out), "("+want+")") {
		t.Errorf("sluice --version printed %q, want the commit (%s)", out, want)
	}

	listen := sluicetest.FreeAddr(t)
	dev := procs.StartProc(t, "dev", "dev", "--data-dir", t.TempDir(), "--listen", listen, "--log-level", "warn")
	c := &procs.Cluster{T: t, URL: "http://" + listen, Brokers: waitReady(t, dev, listen, 1)}
	var root api.ServerInfo
	c.Must(http.StatusOK, http.MethodGet, "/", nil).JSON(t, &root)
	if root.Commit != want {
		t.Errorf("GET / says commit %q, want %q", root.Commit, want)
	}
}
