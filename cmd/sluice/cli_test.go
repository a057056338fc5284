package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/connectors"
)

// writeFile writes a test file and returns its path.
func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCLIAgainstCluster drives a real cluster through the CLI: apply
// creates then updates (and --dry-run changes nothing), patch, get,
// describe, selection by glob and regex with a 404 among them, and the
// exit codes.
func TestCLIAgainstCluster(t *testing.T) {
	cl := startCluster(t)
	dir := t.TempDir()
	writeFile(t, cl.WorkDir, "in.txt", "a\nb\n")
	src := writeFile(t, dir, "src.yaml", "name: orders-src\nconfig:\n  connector.class: FileStreamSource\n  file: in.txt\n  topic: orders\n")
	writeFile(t, dir, "sink.json", `{"name":"orders-sink","config":{"connector.class":"FileStreamSink","file":"out.txt","topics":"orders"}}`)
	writeFile(t, dir, "users.properties.yaml", "name: users-src\nconnector.class: FileStreamSource\nfile: in.txt\ntopic: users\n")

	// The URL without a scheme, flags after the arguments.
	url := strings.TrimPrefix(cl.URL, "http://")
	out := mustCLI(t, "apply", "-f", dir, "--url", url, "--wait", "--timeout", "60s")
	for _, want := range []string{"orders-sink  created", "orders-src   created", "users-src    created"} {
		if !strings.Contains(out, want) {
			t.Fatalf("apply printed:\n%s\nwant a line %q", out, want)
		}
	}
	// Applied again: unchanged.
	if out := mustCLI(t, "apply", "--url", url, "-f", src); !strings.Contains(out, "orders-src  unchanged") {
		t.Fatalf("second apply:\n%s", out)
	}
	// A dry run of a change shows the diff and changes nothing.
	writeFile(t, dir, "src.yaml", "name: orders-src\nconfig:\n  connector.class: FileStreamSource\n  file: in.txt\n  topic: orders-2\n")
	out = mustCLI(t, "apply", "-f", src, "--dry-run", "--url", url)
	if !strings.Contains(out, "would configure  ~topic: orders -> orders-2") {
		t.Fatalf("dry run:\n%s", out)
	}
	got := mustCLI(t, "connectors", "--url", url, "get", "orders-src")
	if !strings.Contains(got, `"topic": "orders"`) {
		t.Fatalf("the dry run changed the config:\n%s", got)
	}
	if out := mustCLI(t, "apply", "-f", src, "--url", url); !strings.Contains(out, "configured  ~topic: orders -> orders-2") {
		t.Fatalf("update:\n%s", out)
	}
	// patch: set and unset.
	out = mustCLI(t, "patch", "connector", "orders-src", "--set", "batch.size=10", "--url", url, "--set", "topic=orders")
	if !strings.Contains(out, "+batch.size=10") || !strings.Contains(out, "~topic: orders-2 -> orders") {
		t.Fatalf("patch:\n%s", out)
	}
	if out := mustCLI(t, "patch", "connector", "orders-src", "--unset", "batch.size", "--url", url); !strings.Contains(out, "-batch.size=10") {
		t.Fatalf("patch --unset:\n%s", out)
	}

	// get connectors, in each format.
	eventually(t, 30*time.Second, func() (bool, string) {
		out := mustCLI(t, "get", "connectors", "--url", url)
		return strings.Count(out, "RUNNING  1/1") == 3, out
	})
	var rows []connectors.ConnectorRow
	if err := json.Unmarshal([]byte(mustCLI(t, "get", "connectors", "orders-sink", "-o", "json", "--url", url)), &rows); err != nil ||
		len(rows) != 1 || rows[0].Type != "sink" || rows[0].Class != "FileStreamSink" {
		t.Fatalf("get connectors -o json: %+v, %v", rows, err)
	}
	if out := mustCLI(t, "get", "tasks", "orders-src", "-o", "yaml", "--url", url); !strings.Contains(out, "worker_id: agent-1") {
		t.Fatalf("get tasks -o yaml:\n%s", out)
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		out := mustCLI(t, "get", "offsets", "orders-src", "--url", url)
		return strings.Contains(out, `{"position":4}`), out
	})
	if out := mustCLI(t, "get", "plugins", "FileStreamSource", "--url", url); !strings.Contains(out, "org.apache.kafka.connect.file.FileStreamSourceConnector") {
		t.Fatalf("get plugins:\n%s", out)
	}
	// describe: a sink shows its topics and offsets, and its lag or that
	// the lag is unavailable.
	eventually(t, 30*time.Second, func() (bool, string) {
		out := mustCLI(t, "describe", "connector", "orders-sink", "--url", url)
		ok := strings.Contains(out, "state:  RUNNING") && strings.Contains(out, "agent-1") &&
			strings.Contains(out, "topics: orders") && strings.Contains(out, `"kafka_topic":"orders"`) &&
			(strings.Contains(out, "lag: unavailable") || strings.Contains(out, "lag: 0"))
		return ok, out
	})

	// Selection: a glob, then a regex; a missing name fails alone.
	out = mustCLI(t, "pause", "--match", "orders-*", "--url", url)
	if strings.TrimSpace(out) != "CONNECTOR    RESULT\norders-sink  paused\norders-src   paused" {
		t.Fatalf("pause --match:\n%s", out)
	}
	out, errOut, code := runCLI(t, "resume", "orders-src", "nope", "orders-sink", "--url", url)
	if code != exitRefused || !strings.Contains(out, "orders-src   resumed") || !strings.Contains(out, "nope         FAILED 404: Connector nope not found") ||
		!strings.Contains(out, "orders-sink  resumed") || !strings.Contains(errOut, "1 of 3 connectors failed") {
		t.Fatalf("resume with a missing name: exit %d\n%s%s", code, out, errOut)
	}
	out = mustCLI(t, "stop", "-e", "^users|sink$", "--url", url, "-o", "json")
	var results []connectors.ActionResult
	if err := json.Unmarshal([]byte(out), &results); err != nil || len(results) != 2 ||
		results[0].Connector != "orders-sink" || results[1].Connector != "users-src" || results[1].Result != "stopped" {
		t.Fatalf("stop -e: %s (%v)", out, err)
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		out := mustCLI(t, "get", "connectors", "--url", url)
		return strings.Count(out, "STOPPED") == 2, out
	})
	if out := mustCLI(t, "delete", "users-src", "orders-sink", "--url", url); !strings.Contains(out, "users-src    deleted") {
		t.Fatalf("delete:\n%s", out)
	}

	// Exit codes: refused (1), usage (2), no server (3).
	if _, errOut, code := runCLI(t, "describe", "connector", "gone", "--url", url); code != exitRefused ||
		errOut != "sluice: 404: Connector gone not found\n" {
		t.Fatalf("describe a missing connector: exit %d, %q", code, errOut)
	}
	if _, _, code := runCLI(t, "pause", "--url", url); code != exitUsage {
		t.Fatalf("pause without names: exit %d", code)
	}
	if _, _, code := runCLI(t, "get", "connectors", "--nope", "--url", url); code != exitUsage {
		t.Fatalf("an undefined flag: exit %d", code)
	}
	if _, _, code := runCLI(t, "get", "connectors", "-o", "xml", "--url", url); code != exitUsage {
		t.Fatalf("-o xml: exit %d", code)
	}
}

// TestUnreachableURL: nothing listens there — exit code 3 and a message
// that says so and what to run.
func TestUnreachableURL(t *testing.T) {
	t.Setenv("SLUICE_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	_, errOut, code := runCLI(t, "get", "connectors", "--url", "127.0.0.1:1")
	want := "sluice: cannot reach Sluice at http://127.0.0.1:1: connection refused — is it running? (sluice dev / make run)\n"
	if code != exitNoServer || errOut != want {
		t.Fatalf("exit %d, %q; want %d, %q", code, errOut, exitNoServer, want)
	}
	if _, errOut, code := runCLI(t, "connectors", "list", "--url", "http://"); code != exitUsage || !strings.Contains(errOut, "has no host") {
		t.Fatalf("a URL without host: exit %d, %q", code, errOut)
	}
}

// TestUsageExitCodes: a wrong command line is exit code 2, whatever part
// of it is wrong.
func TestUsageExitCodes(t *testing.T) {
	t.Setenv("SLUICE_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	for _, args := range [][]string{
		{"offsets", "alter", "x"},                 // a required flag missing
		{"get", "nothing"},                        // an unknown subcommand
		{"get", "connectors", "--nope"},           // an unknown flag
		{"pause"},                                 // no connector selected
		{"pause", "a", "--match", "*"},            // two selections
		{"stop", "-e", "("},                       // a bad regex
		{"get", "connectors", "-o", "xml"},        // a bad format
		{"get", "connectors", "--url", "ftp://h"}, // a bad URL
		{"patch", "connector", "x", "--set", "novalue"},
		{"completion", "tcsh"},
		{"snapshot", "x"},                                       // no --tables
		{"snapshot", "x", "--tables", "a.b", "--filter", "a.b"}, // a filter without a condition
		{"snapshot-stop"},                                       // no connector
	} {
		if _, errOut, code := runCLI(t, args...); code != exitUsage {
			t.Errorf("sluice %q: exit %d, want %d (%s)", args, code, exitUsage, errOut)
		}
	}
}

// TestCompletion: the scripts name the binary's completion flag, which
// lists the subcommands.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh"} {
		if out := mustCLI(t, "completion", shell); !strings.Contains(out, "--generate-bash-completion") {
			t.Errorf("completion %s:\n%s", shell, out)
		}
	}
	// urfave/cli reads the word before the completion flag from os.Args.
	args := []string{"get", "--generate-bash-completion"}
	saved := os.Args
	os.Args = append([]string{"sluice"}, args...)
	t.Cleanup(func() { os.Args = saved })
	out := mustCLI(t, args...)
	for _, want := range []string{"connectors", "plugins", "offsets", "tasks"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("get's completions %q lack %s", out, want)
		}
	}
}

// TestLogsAndCreateWait: logs get and set through /admin/loggers, and the
// REST-mirroring create with --wait, then offsets reset, against a real
// cluster.
func TestLogsAndCreateWait(t *testing.T) {
	cl := startCluster(t)
	out := mustCLI(t, "logs", "set", "org.apache.kafka.connect", "debug", "--url", cl.URL)
	if !strings.Contains(out, "org.apache.kafka.connect  DEBUG  worker") {
		t.Fatalf("logs set:\n%s", out)
	}
	if out := mustCLI(t, "logs", "get", "org.apache.kafka.connect", "--url", cl.URL, "-o", "json"); !strings.Contains(out, `"level": "DEBUG"`) {
		t.Fatalf("logs get one:\n%s", out)
	}
	if out := mustCLI(t, "logs", "get", "--url", cl.URL); !strings.HasPrefix(out, "LOGGER") || !strings.Contains(out, "org.apache.kafka.connect") {
		t.Fatalf("logs get:\n%s", out)
	}
	if _, errOut, code := runCLI(t, "logs", "set", "x", "LOUD", "--url", cl.URL); code != exitRefused || !strings.Contains(errOut, "invalid log level 'LOUD'") {
		t.Fatalf("logs set LOUD: exit %d, %s", code, errOut)
	}

	writeFile(t, cl.WorkDir, "in.txt", "x\n")
	spec := writeFile(t, t.TempDir(), "c.json", `{"name":"w","config":{"connector.class":"FileStreamSource","file":"in.txt","topic":"w"}}`)
	_, errOut, code := runCLI(t, "connectors", "create", "-f", spec, "--wait", "--url", cl.URL)
	if code != 0 || !strings.Contains(errOut, "w: RUNNING") {
		t.Fatalf("create --wait: exit %d, %s", code, errOut)
	}
	// The REST-mirroring commands print the server's JSON, or -o table a
	// key/value table of it.
	if out := mustCLI(t, "connectors", "status", "w", "--url", cl.URL); !strings.Contains(out, `"name": "w"`) {
		t.Fatalf("connectors status:\n%s", out)
	}
	if out := mustCLI(t, "connectors", "status", "w", "-o", "table", "--url", cl.URL); !strings.HasPrefix(out, "KEY") ||
		!strings.Contains(out, "name       w\n") || !strings.Contains(out, "type       source\n") {
		t.Fatalf("connectors status -o table:\n%s", out)
	}
	if _, errOut, code := runCLI(t, "offsets", "reset", "w", "--url", cl.URL); code != exitRefused || !strings.Contains(errOut, "400") {
		t.Fatalf("offsets reset of a running connector: exit %d, %s", code, errOut)
	}
	mustCLI(t, "stop", "w", "--url", cl.URL)
	if out := mustCLI(t, "offsets", "reset", "w", "--url", cl.URL, "-o", "yaml"); !strings.Contains(out, "message:") {
		t.Fatalf("offsets reset -o yaml:\n%s", out)
	}
}

// TestWaitFailed: --wait stops at a FAILED task, says why, and exits 1;
// after a restart of the task, only once it failed again.
func TestWaitFailed(t *testing.T) {
	cl := startCluster(t)
	if err := os.Mkdir(filepath.Join(cl.WorkDir, "a-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := writeFile(t, t.TempDir(), "bad.yaml", "name: bad\nconnector.class: FileStreamSource\nfile: a-dir\ntopic: bad\n")
	start := time.Now()
	_, errOut, code := runCLI(t, "apply", "-f", spec, "--wait", "--timeout", "60s", "--url", cl.URL)
	if code != exitRefused || !strings.Contains(errOut, "bad: task 0 FAILED") || time.Since(start) > 50*time.Second {
		t.Fatalf("apply --wait of a failing connector: exit %d after %s\n%s", code, time.Since(start), errOut)
	}
	// Restarted as it is, the task fails again: restart --wait says so.
	if _, errOut, code := runCLI(t, "restart", "bad", "--task", "0", "--wait", "--timeout", "60s", "--url", cl.URL); code != exitRefused ||
		!strings.Contains(errOut, "sluice: bad: task 0 FAILED") {
		t.Fatalf("restart --wait of a task that fails again: exit %d\n%s", code, errOut)
	}
	// Its file fixed, the restarted task runs: the FAILED the status
	// shows until the agent reports it again does not end the wait.
	if err := os.Remove(filepath.Join(cl.WorkDir, "a-dir")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, cl.WorkDir, "a-dir", "now a file\n")
	if _, errOut, code := runCLI(t, "restart", "bad", "--task", "0", "--wait", "--timeout", "60s", "--url", cl.URL); code != 0 ||
		!strings.Contains(errOut, "bad: RUNNING (1 task)") {
		t.Fatalf("restart --wait of a task that now runs: exit %d\n%s", code, errOut)
	}
}
