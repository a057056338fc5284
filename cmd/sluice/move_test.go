package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/faults"
)

// TestMoveCLI renames a running file source with `sluice move`: a dry run
// changes nothing; a move failing at its delete step prints the server's
// message naming the step and leaves the old connector running; the move
// itself prints its steps and positions, and the new connector goes on at
// the next line; a sink moves with its group position; `sluice copy` keeps
// the old one; a taken name is refused.
func TestMoveCLI(t *testing.T) {
	var failAt atomic.Value // the fault point of the move step that fails, or ""
	failAt.Store(faults.Point(""))
	cl := startClusterWith(t, faults.Func(func(_ context.Context, at faults.Point, _ any) error {
		if at == failAt.Load().(faults.Point) {
			return errors.New("injected failure")
		}
		return nil
	}))
	u := cl.URL
	dir := t.TempDir()
	in, out := filepath.Join(cl.WorkDir, "in.txt"), filepath.Join(cl.WorkDir, "out.txt")
	writeFile(t, cl.WorkDir, "in.txt", "a\nb\nc\n")
	writeFile(t, dir, "src.yaml", "name: mv-src\nconnector.class: FileStreamSource\nfile: in.txt\ntopic: mv\n")
	writeFile(t, dir, "snk.yaml", "name: mv-snk\nconnector.class: FileStreamSink\nfile: out.txt\ntopics: mv\n")
	mustCLI(t, "apply", "-f", dir, "--wait", "--url", u)
	waitFile(t, out, "a\nb\nc\n")

	stdout, errOut, code := runCLI(t, "move", "mv-src", "mv-dst", "--dry-run", "--url", u)
	if code != 0 || !strings.Contains(stdout, "deleting the old connector                         planned") || errOut != "dry run: nothing was changed\n" {
		t.Fatalf("move --dry-run: exit %d\n%s%s", code, stdout, errOut)
	}
	if _, _, code := runCLI(t, "connectors", "get", "mv-dst", "--url", u); code != exitRefused {
		t.Fatalf("the dry run created mv-dst")
	}

	failAt.Store(faults.MoveDelete) // "deleting the old connector"
	_, errOut, code = runCLI(t, "move", "mv-src", "mv-dst", "--url", u)
	if code != exitRefused || !strings.Contains(errOut, "sluice: 500: Moving connector mv-src to mv-dst failed at step 'deleting the old connector'") ||
		!strings.Contains(errOut, "mv-src is as it was and mv-dst does not exist") {
		t.Fatalf("a failed move: exit %d, %s", code, errOut)
	}
	failAt.Store(faults.Point(""))
	eventually(t, 30*time.Second, func() (bool, string) {
		out := mustCLI(t, "get", "connectors", "mv-src", "--url", u)
		return strings.Contains(out, "RUNNING  1/1"), out
	})
	if _, _, code := runCLI(t, "connectors", "get", "mv-dst", "--url", u); code != exitRefused {
		t.Fatalf("the failed move left mv-dst")
	}

	stdout, errOut, code = runCLI(t, "move", "mv-src", "mv-dst", "--reason", "new naming scheme", "--url", u)
	if code != 0 || !regexp.MustCompile(`^mv-dst is RUNNING at 1 partition; offsets history entry \d{13}-[0-9a-f]{16}\n$`).MatchString(errOut) {
		t.Fatalf("move: exit %d\n%s%s", code, stdout, errOut)
	}
	golden(t, "move", stdout)
	if _, errOut, code := runCLI(t, "connectors", "get", "mv-src", "--url", u); code != exitRefused || !strings.Contains(errOut, "404") {
		t.Fatalf("mv-src after the move: exit %d, %s", code, errOut)
	}
	appendLine(t, in, "d\n")
	waitFile(t, out, "a\nb\nc\nd\n")
	// A sink moves with its group's position: the new one writes only
	// what comes after.
	mustCLI(t, "move", "mv-snk", "mv-snk2", "--url", u)
	if p := positions(t, u, "mv-snk2"); p != `{"kafka_partition":0,"kafka_topic":"mv"}={"kafka_offset":4}` {
		t.Fatalf("the moved sink's positions: %s", p)
	}
	appendLine(t, in, "e\n")
	waitFile(t, out, "a\nb\nc\nd\ne\n")
	if h := mustCLI(t, "offsets", "history", "mv-dst", "--url", u); !regexp.MustCompile(`move +anonymous +1 +moved from mv-src +new naming scheme\n`).MatchString(h) {
		t.Fatalf("the new connector's history:\n%s", h)
	}

	stdout = mustCLI(t, "copy", "mv-dst", "mv-cp", "--set", "topic=mv2", "-o", "json", "--url", u)
	var res api.MoveResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || !res.Copy || res.Config["topic"] != "mv2" ||
		len(res.Steps) != 6 || res.Steps[4] != (api.MoveStep{Step: "deleting the old connector", State: "skipped"}) {
		t.Fatalf("copy -o json: %s (%v)", stdout, err)
	}
	waitStopped(t, u, "mv-dst")
	if p := positions(t, u, "mv-cp"); p != `{"filename":"in.txt"}={"position":10}` {
		t.Fatalf("the copy's positions: %s", p)
	}
	if _, errOut, code := runCLI(t, "move", "mv-dst", "mv-cp", "--url", u); code != exitRefused || errOut != "sluice: 409: Connector mv-cp already exists\n" {
		t.Fatalf("a move to a taken name: exit %d, %s", code, errOut)
	}
}

// appendLine appends a line to a file the file source reads.
func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(line)
	if err = errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
}
