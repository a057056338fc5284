package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files with what the commands print")

// golden compares got with testdata/<name>.golden, or writes it there
// under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to write it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got\n%s--- want\n%s", path, got, want)
	}
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

// TestDescribeSinkGolden: how describe shows a failed sink with its lag
// per partition, from the shape GET /sluice/connectors/{name}/lag answers
// with; and "lag: unavailable" when a coordinator does not serve it.
func TestDescribeSinkGolden(t *testing.T) {
	var lag lagInfo
	if err := json.Unmarshal([]byte(`{"connector":"s","total_lag":7,"partitions":[`+
		`{"topic":"t","partition":0,"end_offset":10,"committed_offset":5,"lag":5},`+
		`{"topic":"t","partition":1,"end_offset":2,"committed_offset":-1,"lag":2}]}`), &lag); err != nil {
		t.Fatal(err)
	}
	d := description{Name: "s", Type: "sink", Config: map[string]string{"connector.class": "FileStreamSink", "topics": "t"},
		Topics: []string{"t"}, Lag: &lag}
	d.State.State, d.State.WorkerID = "RUNNING", "10.0.0.1:8083"
	d.Tasks = []api.TaskState{{ID: 0, State: "FAILED", WorkerID: "agent-2", Trace: "org.apache.kafka.connect.errors.ConnectException: disk full\n\tat x.y(z)"}}
	var out strings.Builder
	if err := d.write(&out); err != nil {
		t.Fatal(err)
	}
	golden(t, "describe-sink", out.String())
	d.Lag = nil
	out.Reset()
	if err := d.write(&out); err != nil || !strings.HasSuffix(out.String(), "\nlag: unavailable\n") {
		t.Fatalf("without lag: %v\n%s", err, out.String())
	}
}
