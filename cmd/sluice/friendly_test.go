package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// completions are what the CLI prints for a shell's completion of args
// (urfave/cli reads the words from os.Args).
func completions(t *testing.T, args ...string) string {
	t.Helper()
	args = append(args, "--generate-bash-completion")
	saved := os.Args
	os.Args = append([]string{"sluice"}, args...)
	defer func() { os.Args = saved }()
	return mustCLI(t, args...)
}

// hasRow reports whether a table has a row whose first cells are cells.
func hasRow(table string, cells ...string) bool {
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) >= len(cells) && slices.Equal(f[:len(cells)], cells) {
			return true
		}
	}
	return false
}

// TestWaitSaysWhy: --wait prints each connector's state at once and as it
// changes, with the server's reason for a task no agent can run, and when
// --timeout runs out it names the connector and that reason (exit 1).
// apply --wait waits for an unchanged connector too, and says that a
// paused one is not waited for.
func TestWaitSaysWhy(t *testing.T) {
	cl := startCluster(t)
	dir := t.TempDir()
	writeFile(t, cl.WorkDir, "in.txt", "a\n")
	nowhere := writeFile(t, dir, "nowhere.yaml", "name: nowhere\nconnector.class: FileStreamSource\nfile: in.txt\ntopic: n\nsluice.agent.selector: zone=mars\n")
	reason := "task 0 UNASSIGNED: No live agent matches sluice.agent.selector zone=mars"

	out, errOut, code := runCLI(t, "apply", "-f", nowhere, "--wait", "--timeout", "3s", "--url", cl.URL)
	if code != exitRefused || !hasRow(out, "nowhere", "created") ||
		!strings.Contains(errOut, "waiting for nowhere to run") ||
		!strings.Contains(errOut, "nowhere: RUNNING, 0/1 tasks running; "+reason+"\n") ||
		!strings.Contains(errOut, "sluice: not RUNNING after ") || !strings.Contains(errOut, "(--timeout): nowhere (RUNNING, 0/1 tasks running; "+reason+")\n") {
		t.Fatalf("apply --wait of a connector no agent can run: exit %d\n%s%s", code, out, errOut)
	}
	// Applied again, unchanged: still waited for, and still said why.
	out, errOut, code = runCLI(t, "apply", "-f", nowhere, "--wait", "--timeout", "2s", "--url", cl.URL)
	if code != exitRefused || !hasRow(out, "nowhere", "unchanged") || !strings.Contains(errOut, reason) {
		t.Fatalf("apply --wait of an unchanged connector that does not run: exit %d\n%s%s", code, out, errOut)
	}
	// An unchanged connector that runs: waited for, and said.
	src := writeFile(t, dir, "src.yaml", "name: src\nconnector.class: FileStreamSource\nfile: in.txt\ntopic: s\n")
	mustCLI(t, "apply", "-f", src, "--wait", "--url", cl.URL)
	out, errOut, code = runCLI(t, "apply", "-f", src, "--wait", "--url", cl.URL)
	if code != 0 || !hasRow(out, "src", "unchanged") || !strings.Contains(errOut, "src: RUNNING (1 task)\n") {
		t.Fatalf("apply --wait of an unchanged running connector: exit %d\n%s%s", code, out, errOut)
	}
	// A paused one is not waited for.
	mustCLI(t, "pause", "src", "--url", cl.URL)
	eventually(t, 30*time.Second, func() (bool, string) {
		out := mustCLI(t, "get", "connectors", "src", "--url", cl.URL)
		return strings.Contains(out, "PAUSED"), out
	})
	out, errOut, code = runCLI(t, "apply", "-f", src, "--wait", "--url", cl.URL)
	if code != 0 || !strings.Contains(errOut, "src: unchanged and PAUSED: not waited for (sluice resume src runs it)\n") || strings.Contains(errOut, "waiting for") {
		t.Fatalf("apply --wait of a paused connector: exit %d\n%s%s", code, out, errOut)
	}
	// patch --wait of a paused connector: not waited for either.
	if _, errOut, code := runCLI(t, "patch", "connector", "src", "--set", "batch.size=5", "--wait", "--url", cl.URL); code != 0 ||
		!strings.Contains(errOut, "src: configured and PAUSED: not waited for (sluice resume src runs it)\n") {
		t.Fatalf("patch --wait of a paused connector: exit %d\n%s", code, errOut)
	}
	// create --wait of one created paused: not waited for.
	held := writeFile(t, dir, "held.json", `{"name":"held","config":{"connector.class":"FileStreamSource","file":"in.txt","topic":"h"},"initial_state":"paused"}`)
	if _, errOut, code := runCLI(t, "create", "-f", held, "--wait", "--url", cl.URL); code != 0 ||
		!strings.Contains(errOut, "held: created PAUSED: not waited for (sluice resume held runs it)\n") {
		t.Fatalf("create --wait of a connector created paused: exit %d\n%s", code, errOut)
	}
	// resume --wait, patch --wait and restart --wait follow it until it runs.
	if _, errOut, code := runCLI(t, "resume", "src", "--wait", "--url", cl.URL); code != 0 || !strings.Contains(errOut, "src: RUNNING (1 task)\n") {
		t.Fatalf("resume --wait: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "patch", "connector", "src", "--set", "batch.size=6", "--wait", "--url", cl.URL); code != 0 || !strings.Contains(errOut, "src: RUNNING (1 task)\n") {
		t.Fatalf("patch --wait: exit %d\n%s", code, errOut)
	}
	if out, errOut, code := runCLI(t, "restart", "src", "--wait", "--url", cl.URL); code != 0 || !hasRow(out, "src", "restarted") || !strings.Contains(errOut, "src: RUNNING (1 task)\n") {
		t.Fatalf("restart --wait: exit %d\n%s%s", code, out, errOut)
	}
}

// TestRestartDescribePluginInfo: restart's options and one task, describe
// plugin, info, a pasted URL, "did you mean" for connectors and plugins,
// one wording for what is missing, and completion of names, against a
// real cluster.
func TestRestartDescribePluginInfo(t *testing.T) {
	cl := startCluster(t)
	writeFile(t, cl.WorkDir, "in.txt", "a\n")
	spec := writeFile(t, t.TempDir(), "src.yaml", "name: orders-src\nconnector.class: FileStreamSource\nfile: in.txt\ntopic: orders\n")
	mustCLI(t, "apply", "-f", spec, "--wait", "--url", cl.URL)

	// restart: the options, one task, and what does not go together.
	for _, args := range [][]string{
		{"restart", "orders-src", "--only-failed"},
		{"restart", "orders-src", "--include-tasks=false"},
		{"restart", "orders-src", "--only-failed", "--server"},
	} {
		if out := mustCLI(t, append(args, "--url", cl.URL)...); !strings.Contains(out, "orders-src") {
			t.Errorf("sluice %q:\n%s", args, out)
		}
	}
	if out := mustCLI(t, "restart", "orders-src", "--task", "0", "--wait", "--url", cl.URL); !hasRow(out, "orders-src", "task", "0", "restarted") {
		t.Errorf("restart --task 0:\n%s", out)
	}
	if _, errOut, code := runCLI(t, "restart", "orders-src", "--task", "5", "--url", cl.URL); code != exitRefused || errOut != "sluice: 404: Task 5 of connector orders-src not found\n" {
		t.Errorf("restart --task 5: exit %d, %q", code, errOut)
	}
	for _, args := range [][]string{
		{"restart", "orders-src", "other", "--task", "0"},
		{"restart", "orders-src", "--task", "0", "--only-failed"},
		{"restart", "--match", "*", "--task", "0"},
	} {
		if _, _, code := runCLI(t, append(args, "--url", cl.URL)...); code != exitUsage {
			t.Errorf("sluice %q: exit %d, want %d", args, code, exitUsage)
		}
	}

	// One wording for a missing connector, with the close names.
	for _, args := range [][]string{
		{"describe", "connector", "orders-sr"},
		{"pause", "orders-sr"},
		{"get", "tasks", "orders-sr"},
		{"get", "connectors", "orders-sr"},
		{"restart", "orders-sr", "--task", "0"},
	} {
		if _, errOut, code := runCLI(t, append(args, "--url", cl.URL)...); code != exitRefused ||
			errOut != "sluice: 404: Connector orders-sr not found; did you mean orders-src?\n" {
			t.Errorf("sluice %q: exit %d, %q", args, code, errOut)
		}
	}

	// describe plugin: its config keys; a name not quite right.
	out := mustCLI(t, "describe", "plugin", "FileStreamSource", "--url", cl.URL)
	if !strings.HasPrefix(out, "NAME") || !strings.Contains(out, "\nfile ") || !strings.Contains(out, "\ntopic ") {
		t.Errorf("describe plugin:\n%s", out)
	}
	var keys []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(mustCLI(t, "describe", "plugin", "org.apache.kafka.connect.file.FileStreamSourceConnector", "-o", "json", "--url", cl.URL)), &keys); err != nil || len(keys) == 0 {
		t.Errorf("describe plugin -o json: %v, %v", keys, err)
	}
	if _, errOut, code := runCLI(t, "describe", "plugin", "FileStreamSorce", "--url", cl.URL); code != exitRefused ||
		errOut != "sluice: 404: Plugin FileStreamSorce not found; did you mean FileStreamSource?\n" {
		t.Errorf("describe plugin with a typo: exit %d, %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, "get", "plugins", "FileStreamSorce", "--url", cl.URL); code != exitRefused ||
		!strings.HasSuffix(errOut, "sluice: 404: Plugin FileStreamSorce not found; did you mean FileStreamSource?\n") {
		t.Errorf("get plugins with a typo: exit %d, %q", code, errOut)
	}

	// info: GET /, and this CLI's version.
	out = mustCLI(t, "info", "--url", cl.URL)
	if !strings.Contains(out, "url:") || !strings.Contains(out, "version:") || !strings.Contains(out, "kafka cluster id:") || !strings.Contains(out, "health:            healthy (leader)") ||
		!strings.Contains(out, "cli version:") {
		t.Errorf("info:\n%s", out)
	}
	var info struct {
		Server map[string]any `json:"server"`
	}
	if err := json.Unmarshal([]byte(mustCLI(t, "info", "-o", "json", "--url", cl.URL)), &info); err != nil || info.Server["version"] == nil {
		t.Errorf("info -o json: %+v, %v", info, err)
	}

	// A URL pasted with a path of the API: its base, and a note.
	out, errOut, code := runCLI(t, "get", "connectors", "--url", cl.URL+"/connectors/orders-src/status")
	if code != 0 || !strings.Contains(out, "orders-src") || !strings.Contains(errOut, "note: --url "+cl.URL+"/connectors/orders-src/status: using "+cl.URL+" ") {
		t.Errorf("a URL with a path: exit %d\n%s%s", code, out, errOut)
	}

	// Completion: connector names and plugin classes, from the server
	// the words typed so far name, or SLUICE_URL's.
	if out := completions(t, "describe", "connector", "--url", cl.URL); out != "orders-src\n" {
		t.Errorf("describe connector --url completions: %q", out)
	}
	t.Setenv("SLUICE_URL", cl.URL)
	if out := completions(t, "describe", "connector"); out != "orders-src\n" {
		t.Errorf("describe connector completions: %q", out)
	}
	if out := completions(t, "pause", "--ma"); !strings.Contains(out, "--match\n") || strings.Contains(out, "orders-src") {
		t.Errorf("pause --ma completions: %q", out)
	}
	if out := completions(t, "pause"); out != "orders-src\n" {
		t.Errorf("pause completions: %q", out)
	}
	if out := completions(t, "offsets", "history"); out != "orders-src\n" {
		t.Errorf("offsets history completions: %q", out)
	}
	if out := completions(t, "describe", "plugin"); !strings.Contains(out, "org.apache.kafka.connect.file.FileStreamSourceConnector\n") || !strings.Contains(out, "\nFileStreamSourceConnector\n") {
		t.Errorf("describe plugin completions: %q", out)
	}
}
