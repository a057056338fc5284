package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/connectors"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/offsets"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/transfer"
)

// offsetsOf is a connector's offsets as `sluice offsets get` prints them,
// each entry compact JSON, sorted, so that two reads compare as sets.
func offsetsOf(t *testing.T, url, name string) []string {
	t.Helper()
	var o struct {
		Offsets []json.RawMessage `json:"offsets"`
	}
	if err := json.Unmarshal([]byte(mustCLI(t, "offsets", "get", name, "--url", url)), &o); err != nil {
		t.Fatalf("offsets of %s: %v", name, err)
	}
	return canonical(t, o.Offsets)
}

// canonical is offsets entries as sorted compact JSON.
func canonical[E any](t *testing.T, entries []E) []string {
	t.Helper()
	out := []string{}
	for _, e := range entries {
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, output.Compact(v))
	}
	slices.Sort(out)
	return out
}

// stateOf is the connector's state in its status, or "" with no status;
// flags are more flags of the CLI (credentials).
func stateOf(t *testing.T, url, name string, flags ...string) string {
	t.Helper()
	out, _, code := runCLI(t, append([]string{"connectors", "status", name, "--url", url}, flags...)...)
	if code != 0 {
		return ""
	}
	var st struct {
		Connector struct {
			State string `json:"state"`
		} `json:"connector"`
		Tasks []json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status of %s: %v\n%s", name, err, out)
	}
	if st.Connector.State == "STOPPED" && len(st.Tasks) > 0 {
		return "STOPPING"
	}
	return st.Connector.State
}

// names is GET /connectors, sorted.
func names(t *testing.T, url string) []string {
	t.Helper()
	var ns []string
	out := mustCLI(t, "get", "connectors", "-o", "json", "--url", url)
	var rows []connectors.ConnectorRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("get connectors: %v\n%s", err, out)
	}
	for _, r := range rows {
		ns = append(ns, r.Name)
	}
	return ns
}

// create creates a connector through the CLI from its JSON.
func create(t *testing.T, url, dir, body string) {
	t.Helper()
	mustCLI(t, "connectors", "create", "-f", writeFile(t, dir, "create.json", body), "--url", url)
}

// TestOffsetsExportImport exports a running file source and a paused file
// sink, imports them under new names into the same cluster, and checks
// that the copies have exactly the exported positions and states; a dry
// run writes nothing, and a connector that fails does not stop the others.
func TestOffsetsExportImport(t *testing.T) {
	cl := startCluster(t)
	dir := t.TempDir()
	writeFile(t, cl.WorkDir, "in.txt", "a\nb\nc\n")
	create(t, cl.URL, dir, `{"name":"orders-src","config":{"connector.class":"FileStreamSource","file":"in.txt","topic":"orders"}}`)
	create(t, cl.URL, dir, `{"name":"orders-sink","config":{"connector.class":"FileStreamSink","file":"out.txt","topics":"orders"}}`)
	eventually(t, 60*time.Second, func() (bool, string) {
		src, sink := offsetsOf(t, cl.URL, "orders-src"), offsetsOf(t, cl.URL, "orders-sink")
		return slices.Equal(src, []string{`{"offset":{"position":6},"partition":{"filename":"in.txt"}}`}) &&
			slices.Equal(sink, []string{`{"offset":{"kafka_offset":3},"partition":{"kafka_partition":0,"kafka_topic":"orders"}}`}), strings.Join(append(src, sink...), " ")
	})
	mustCLI(t, "pause", "orders-sink", "--url", cl.URL)
	eventually(t, 30*time.Second, func() (bool, string) {
		st := stateOf(t, cl.URL, "orders-sink")
		return st == "PAUSED", st
	})

	exported := filepath.Join(dir, "export.json")
	_, errOut, code := runCLI(t, "offsets", "export", "orders-*", "-f", exported, "--url", cl.URL)
	if code != 0 || !strings.Contains(errOut, "exported orders-sink (PAUSED, 1 partition)") || !strings.Contains(errOut, "exported orders-src (RUNNING, 1 partition)") {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	if fi, err := os.Stat(exported); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the export file: %v, %v", fi, err)
	}
	var doc offsets.ExportDoc
	data, _ := os.ReadFile(exported)
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the export: %v\n%s", err, data)
	}
	if doc.Format != "sluice.offsets-export/v1" || doc.From != cl.URL || time.Since(doc.ExportedAt) > time.Minute || len(doc.Connectors) != 2 ||
		doc.Connectors[0].Name != "orders-sink" || doc.Connectors[0].State != "PAUSED" || doc.Connectors[0].Config["topics"] != "orders" ||
		doc.Connectors[1].Name != "orders-src" || doc.Connectors[1].State != "RUNNING" {
		t.Fatalf("the export:\n%s", data)
	}
	wantSink, wantSrc := canonical(t, doc.Connectors[0].Offsets), canonical(t, doc.Connectors[1].Offsets)
	if !slices.Equal(wantSrc, offsetsOf(t, cl.URL, "orders-src")) || !slices.Equal(wantSink, offsetsOf(t, cl.URL, "orders-sink")) {
		t.Fatalf("exported offsets %v %v differ from the connectors'", wantSrc, wantSink)
	}

	// A dry run: the names are taken without --rename, free with it;
	// nothing is written either way.
	out, errOut, code := runCLI(t, "offsets", "import", "-f", exported, "--dry-run", "--url", cl.URL, "-o", "table")
	if code != exitRefused || !strings.Contains(out, "orders-sink  sink    FileStreamSink    1           PAUSED   failed: a connector named orders-sink already exists") ||
		!strings.Contains(errOut, "2 of 2 connectors failed") {
		t.Fatalf("dry run onto taken names: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "offsets", "import", "-f", exported, "--dry-run", "--rename", "orders-src=copy-src", "--rename", "orders-sink=copy-sink", "--url", cl.URL, "-o", "json")
	var plan []transfer.Result
	if err := json.Unmarshal([]byte(out), &plan); code != 0 || err != nil || len(plan) != 2 ||
		plan[0] != (transfer.Result{Name: "copy-sink", Type: "sink", Class: "FileStreamSink", Partitions: 1, State: "PAUSED", Result: "would create"}) ||
		plan[1] != (transfer.Result{Name: "copy-src", Type: "source", Class: "FileStreamSource", Partitions: 1, State: "RUNNING", Result: "would create"}) ||
		!strings.Contains(errOut, "checking copy-src (source, 1 partition)… would create RUNNING") {
		t.Fatalf("dry run: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if got := names(t, cl.URL); !slices.Equal(got, []string{"orders-sink", "orders-src"}) {
		t.Fatalf("the dry run created connectors: %v", got)
	}

	// orders-sink fails (its name is taken); copy-src is created anyway.
	_, errOut, code = runCLI(t, "offsets", "import", "-f", exported, "--rename", "orders-src=copy-src", "--url", cl.URL)
	if code != exitRefused || !strings.Contains(errOut, "importing orders-sink (sink, 1 partition)… FAILED: create orders-sink: 409") ||
		!strings.Contains(errOut, "importing copy-src (source, 1 partition)… created RUNNING") || !strings.Contains(errOut, "1 of 2 connectors failed") {
		t.Fatalf("import with a taken name: exit %d\n%s", code, errOut)
	}
	_, errOut, code = runCLI(t, "offsets", "import", "-f", exported, "--rename", "orders-sink=copy-sink", "--url", cl.URL)
	if code != exitRefused || !strings.Contains(errOut, "importing copy-sink (sink, 1 partition)… created PAUSED") {
		t.Fatalf("second import: exit %d\n%s", code, errOut)
	}
	if got := offsetsOf(t, cl.URL, "copy-src"); !slices.Equal(got, wantSrc) {
		t.Fatalf("copy-src's offsets: %v, want %v", got, wantSrc)
	}
	if got := offsetsOf(t, cl.URL, "copy-sink"); !slices.Equal(got, wantSink) {
		t.Fatalf("copy-sink's offsets: %v, want %v", got, wantSink)
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		src, sink := stateOf(t, cl.URL, "copy-src"), stateOf(t, cl.URL, "copy-sink")
		return src == "RUNNING" && sink == "PAUSED", src + " " + sink
	})
	// copy-src runs from line 4 on: the sink's file keeps its three lines.
	mustCLI(t, "resume", "orders-sink", "--url", cl.URL)
	time.Sleep(2 * time.Second)
	if got, _ := os.ReadFile(filepath.Join(cl.WorkDir, "out.txt")); string(got) != "a\nb\nc\n" {
		t.Fatalf("the sink's file: %q: the copy read its file again", got)
	}
}

// TestOffsetsImportRefusesBadDocuments checks the document and the
// flags before anything is asked of a server.
func TestOffsetsImportRefusesBadDocuments(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ doc, want string }{
		{`{"format":"other/v1","connectors":[]}`, `format "other/v1": want "sluice.offsets-export/v1"`},
		{`{"format":"sluice.offsets-export/v1","connectors":[{"name":"a","config":{"connector.class":"X"},"state":"FAILED"}]}`, `connector a: state "FAILED"`},
		{`{"format":"sluice.offsets-export/v1","connectors":[{"name":"a","config":{},"state":"RUNNING"}]}`, `connector a has no connector.class`},
	} {
		f := writeFile(t, dir, "doc.json", tc.doc)
		_, errOut, code := runCLI(t, "offsets", "import", "-f", f, "--url", "127.0.0.1:1")
		if code != exitRefused || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d\n%s", tc.doc, code, errOut)
		}
	}
	f := writeFile(t, dir, "doc.json", `{"format":"sluice.offsets-export/v1","connectors":[]}`)
	if _, errOut, code := runCLI(t, "offsets", "import", "-f", f, "--rename", "a=b", "--url", "127.0.0.1:1"); code != exitUsage || !strings.Contains(errOut, "the document has no connector a") {
		t.Errorf("--rename of a missing connector: exit %d\n%s", code, errOut)
	}
}
