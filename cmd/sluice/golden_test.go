package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goldenfile "github.com/sluice-io/sluice/cmd/sluice/internal/golden"
)

// golden compares got with testdata/<name>.golden, or writes it there
// under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, name, got)
}

// TestGoldenTables: the table output of the read commands, against a real
// cluster once its connectors settled, is the one in testdata.
func TestGoldenTables(t *testing.T) {
	cl := startCluster(t)
	dir := t.TempDir()
	writeFile(t, cl.WorkDir, "in.txt", "one\ntwo\nthree\n")
	writeFile(t, dir, "src.json", `{"name":"lines-src","config":{"connector.class":"FileStreamSource","file":"in.txt","topic":"lines"}}`)
	writeFile(t, dir, "sink.yaml", "name: lines-sink\nconfig:\n  connector.class: FileStreamSink\n  file: out.txt\n  topics: lines\n")
	mustCLI(t, "apply", "-f", dir, "--wait", "--url", cl.URL)
	eventually(t, 30*time.Second, func() (bool, string) {
		out, err := os.ReadFile(filepath.Join(cl.WorkDir, "out.txt"))
		return err == nil && string(out) == "one\ntwo\nthree\n", string(out)
	})
	eventually(t, 30*time.Second, func() (bool, string) {
		src := mustCLI(t, "get", "offsets", "lines-src", "--url", cl.URL)
		sink := mustCLI(t, "get", "offsets", "lines-sink", "--url", cl.URL)
		return strings.Contains(src, `{"position":14}`) && strings.Contains(sink, `{"kafka_offset":3}`), src + sink
	})
	// In order: pause comes last, as it changes what the others show.
	for _, g := range []struct {
		name string
		args []string
	}{
		{"get-connectors", []string{"get", "connectors"}},
		{"get-tasks", []string{"get", "tasks", "lines-src", "lines-sink"}},
		{"get-offsets", []string{"get", "offsets", "lines-src", "lines-sink"}},
		{"describe-source", []string{"describe", "connector", "lines-src"}},
		{"pause", []string{"pause", "-e", "^lines-"}},
	} {
		out := mustCLI(t, append(g.args, "--url", cl.URL)...)
		// The coordinator's worker id is its address, a free port.
		golden(t, g.name, strings.ReplaceAll(out, strings.TrimPrefix(cl.URL, "http://"), "<coordinator>"))
	}
}
