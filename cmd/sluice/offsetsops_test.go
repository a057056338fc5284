package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/connectors"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
)

// historyIDs and localTimes are what differs between runs in the history
// tables; golden files hold placeholders of the same width.
var (
	historyIDs = regexp.MustCompile(`\d{13}-[0-9a-f]{16}`)
	localTimes = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`)
)

// masked is a history table with its ids and times replaced.
func masked(s string) string {
	s = historyIDs.ReplaceAllString(s, "<id-------------------------->")
	return localTimes.ReplaceAllString(s, "<time------------->")
}

// positions is what `get offsets NAME` shows: each partition and offset as
// compact JSON, "partition=offset", one per line.
func positions(t *testing.T, url, name string) string {
	t.Helper()
	var rows []connectors.OffsetRow
	if err := json.Unmarshal([]byte(mustCLI(t, "get", "offsets", name, "-o", "json", "--url", url)), &rows); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, output.Compact(r.Partition)+"="+output.Compact(r.Offset))
	}
	return strings.Join(out, "\n")
}

// sinkAt is the one partition of topic ev at offset n, as positions shows it.
func sinkAt(n string) string {
	return `{"kafka_partition":0,"kafka_topic":"ev"}={"kafka_offset":` + n + `}`
}

// waitFile waits until the agent's file holds exactly want.
func waitFile(t *testing.T, path, want string) {
	t.Helper()
	eventually(t, 30*time.Second, func() (bool, string) {
		got, _ := os.ReadFile(path)
		return string(got) == want, string(got)
	})
}

// waitStopped waits until every named connector is STOPPED.
func waitStopped(t *testing.T, url string, names ...string) {
	t.Helper()
	eventually(t, 30*time.Second, func() (bool, string) {
		out := mustCLI(t, append([]string{"get", "connectors", "--url", url}, names...)...)
		return strings.Count(out, "STOPPED") == len(names), out
	})
}

// lastID is the history entry id the stderr of a change names.
func lastID(t *testing.T, stderr string) string {
	t.Helper()
	id := historyIDs.FindString(stderr)
	if id == "" {
		t.Fatalf("no history entry id in %q", stderr)
	}
	return id
}

// mustChange runs an offsets change that must succeed and returns its
// stdout and the history id on its stderr.
func mustChange(t *testing.T, args ...string) (string, string) {
	t.Helper()
	out, errOut, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("sluice %q: exit %d\n%s%s", args, code, out, errOut)
	}
	return out, lastID(t, errOut)
}

// TestOffsetsOpsSink drives every Sluice offsets command on a file sink
// that consumed five records: dry runs that write nothing, resets by each
// rule, --reason in the history, the history as a table, one entry and
// JSON, undo (refused when stale, then forced), a restore into a new sink
// that then writes exactly the records after the restored position, and
// the server's 400s passed through.
func TestOffsetsOpsSink(t *testing.T) {
	cl := startCluster(t)
	u := cl.URL
	dir := t.TempDir()
	writeFile(t, cl.WorkDir, "in.txt", "l1\nl2\nl3\nl4\nl5\n")
	writeFile(t, dir, "src.yaml", "name: ev-src\nconnector.class: FileStreamSource\nfile: in.txt\ntopic: ev\n")
	writeFile(t, dir, "snk.yaml", "name: ev-snk\nconnector.class: FileStreamSink\nfile: out.txt\ntopics: ev\n")
	mustCLI(t, "apply", "-f", dir, "--wait", "--url", u)
	waitFile(t, filepath.Join(cl.WorkDir, "out.txt"), "l1\nl2\nl3\nl4\nl5\n")
	eventually(t, 30*time.Second, func() (bool, string) {
		p := positions(t, u, "ev-snk")
		return p == sinkAt("5"), p
	})
	mustCLI(t, "stop", "ev-snk", "ev-src", "--url", u)
	waitStopped(t, u, "ev-snk", "ev-src")

	// A dry run of a rule: the table of changes, nothing written.
	out, errOut, code := runCLI(t, "offsets", "reset", "ev-snk", "--to", "earliest", "--dry-run", "--url", u)
	if code != 0 || errOut != "dry run: 1 partition would change, nothing was written\n" {
		t.Fatalf("reset --to earliest --dry-run: exit %d, %s", code, errOut)
	}
	golden(t, "offsets-reset-dry-run", out)
	if p := positions(t, u, "ev-snk"); p != sinkAt("5") {
		t.Fatalf("the dry run moved the sink: %s", p)
	}

	// Each rule, with the positions read back.
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"--shift-by", "-2", "--reason", "replay the last two"}, "3"},
		{[]string{"--to", "offset", "--offset", "1"}, "1"},
		{[]string{"--to", "timestamp", "--timestamp", "2000-01-01T00:00:00Z"}, "0"},
		{[]string{"--to", "timestamp", "--timestamp", "4102444800000"}, "5"}, // 2100: after every record
		{[]string{"--to", "earliest", "--topics", "ev", "--partitions", "0"}, "0"},
		{[]string{"--to", "latest"}, "5"},
	}
	var ids []string
	for _, st := range steps {
		_, id := mustChange(t, append([]string{"offsets", "reset", "ev-snk", "--url", u}, st.args...)...)
		ids = append(ids, id)
		if p := positions(t, u, "ev-snk"); p != sinkAt(st.want) {
			t.Fatalf("reset %q: positions %s, want offset %s", st.args, p, st.want)
		}
	}
	// A rule that moves nothing says so, rather than counting the
	// partition it writes with the position it has.
	if _, errOut, code := runCLI(t, "offsets", "reset", "ev-snk", "--to", "latest", "--dry-run", "--url", u); code != 0 ||
		errOut != "dry run: nothing would change (1 partition already there), nothing was written\n" {
		t.Fatalf("a reset to where it is: exit %d, %q", code, errOut)
	}
	// -o json is the server's answer.
	out = mustCLI(t, "offsets", "reset", "ev-snk", "--shift-by", "-1", "-o", "json", "--url", u)
	var ch api.OffsetsChanges
	if err := json.Unmarshal([]byte(out), &ch); err != nil || ch.DryRun || len(ch.Changes) != 1 || ch.HistoryID == "" ||
		output.Compact(ch.Changes[0].From) != `{"kafka_offset":5}` || output.Compact(ch.Changes[0].To) != `{"kafka_offset":4}` {
		t.Fatalf("reset -o json: %s (%v)", out, err)
	}
	ids = append(ids, ch.HistoryID)

	// The history: newest first, the reason where one was given.
	golden(t, "offsets-history", masked(mustCLI(t, "offsets", "history", "ev-snk", "--url", u)))
	out = mustCLI(t, "offsets", "history", "ev-snk", "--limit", "2", "--url", u)
	if !strings.HasSuffix(out, "(older entries exist: --before "+ids[len(ids)-2]+")\n") || strings.Count(out, "\n") != 4 {
		t.Fatalf("history --limit 2:\n%s", out)
	}
	var page api.OffsetsHistory
	out = mustCLI(t, "offsets", "history", "ev-snk", "--before", ids[1], "-o", "json", "--url", u)
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Entries) != 1 || page.Entries[0].ID != ids[0] ||
		page.Entries[0].Reason != "replay the last two" || page.More {
		t.Fatalf("history --before -o json: %s (%v)", out, err)
	}
	golden(t, "offsets-history-entry", masked(mustCLI(t, "offsets", "history", "ev-snk", ids[0], "--url", u)))

	// Undo: a dry run, the newest entry, then a stale one (409) and forced.
	last := ids[len(ids)-1]
	if out, errOut, code := runCLI(t, "offsets", "undo", "ev-snk", last, "--dry-run", "--url", u); code != 0 ||
		!strings.Contains(out, `{"kafka_offset":4}  {"kafka_offset":5}`) || !strings.HasPrefix(errOut, "dry run:") {
		t.Fatalf("undo --dry-run: exit %d\n%s%s", code, out, errOut)
	}
	if p := positions(t, u, "ev-snk"); p != sinkAt("4") {
		t.Fatalf("the undo's dry run moved the sink: %s", p)
	}
	mustChange(t, "offsets", "undo", "ev-snk", last, "--reason", "one too many", "--url", u)
	if p := positions(t, u, "ev-snk"); p != sinkAt("5") {
		t.Fatalf("after the undo: %s", p)
	}
	_, errOut, code = runCLI(t, "offsets", "undo", "ev-snk", ids[0], "--url", u)
	if code != exitRefused || !strings.Contains(errOut, "sluice: 409: The positions of connector ev-snk changed after entry "+ids[0]) {
		t.Fatalf("a stale undo: exit %d, %s", code, errOut)
	}
	mustChange(t, "offsets", "undo", "ev-snk", ids[0], "--force", "--url", u)
	if p := positions(t, u, "ev-snk"); p != sinkAt("5") {
		t.Fatalf("after the forced undo of the shift from 5: %s", p)
	}
	if out := mustCLI(t, "offsets", "history", "ev-snk", "--limit", "2", "--url", u); !strings.Contains(out, "undo of reset-to "+last) ||
		!strings.Contains(out, "one too many") || !strings.Contains(out, "undo of reset-to "+ids[0]) {
		t.Fatalf("the undos in the history:\n%s", out)
	}

	// alter and reset: --dry-run is the preview; without, Kafka Connect's
	// PATCH and DELETE, with --reason kept.
	offs := writeFile(t, dir, "offs.json", `{"offsets":[{"partition":{"kafka_topic":"ev","kafka_partition":0},"offset":{"kafka_offset":2}}]}`)
	if out := mustCLI(t, "offsets", "alter", "ev-snk", "-f", offs, "--dry-run", "--url", u); !strings.Contains(out, `{"kafka_offset":5}  {"kafka_offset":2}`) {
		t.Fatalf("alter --dry-run:\n%s", out)
	}
	if p := positions(t, u, "ev-snk"); p != sinkAt("5") {
		t.Fatalf("the alter's dry run moved the sink: %s", p)
	}
	if out := mustCLI(t, "offsets", "alter", "ev-snk", "-f", offs, "--reason", "by hand", "--url", u); !strings.Contains(out, `"message"`) {
		t.Fatalf("alter prints the server's JSON:\n%s", out)
	}
	if out := mustCLI(t, "offsets", "reset", "ev-snk", "--dry-run", "--url", u); !strings.Contains(out, `{"kafka_offset":2}  -`) {
		t.Fatalf("reset --dry-run:\n%s", out)
	}
	if p := positions(t, u, "ev-snk"); p != sinkAt("2") {
		t.Fatalf("the reset's dry run moved the sink: %s", p)
	}
	mustCLI(t, "offsets", "reset", "ev-snk", "--reason", "start over", "--url", u)
	if p := positions(t, u, "ev-snk"); p != "" {
		t.Fatalf("after reset: %s", p)
	}
	out = mustCLI(t, "offsets", "history", "ev-snk", "--limit", "2", "--url", u)
	if !regexp.MustCompile(`reset +anonymous +1 +.*start over\n`).MatchString(out) || !regexp.MustCompile(`alter +anonymous +1 +.*by hand\n`).MatchString(out) {
		t.Fatalf("the reasons of PATCH and DELETE in the history:\n%s", out)
	}

	// Restore: the position before the DELETE, into a new sink (of
	// another file), which then writes the records after it.
	mustCLI(t, "delete", "ev-snk", "--url", u)
	if out := mustCLI(t, "offsets", "history", "ev-snk", "--limit", "1", "--url", u); !strings.Contains(out, "start over") {
		t.Fatalf("the history of the deleted connector:\n%s", out)
	}
	spec := writeFile(t, dir, "snk2.json", `{"name":"ev-snk2","config":{"connector.class":"FileStreamSink","file":"out2.txt","topics":"ev"},"initial_state":"STOPPED"}`)
	mustCLI(t, "connectors", "create", "-f", spec, "--url", u)
	if out := mustCLI(t, "offsets", "restore", "ev-snk2", "--from", "ev-snk", "--dry-run", "--url", u); !strings.Contains(out, `-     {"kafka_offset":2}`) {
		t.Fatalf("restore --dry-run:\n%s", out)
	}
	if p := positions(t, u, "ev-snk2"); p != "" {
		t.Fatalf("the restore's dry run wrote: %s", p)
	}
	mustChange(t, "offsets", "restore", "ev-snk2", "--from", "ev-snk", "--reason", "new file", "--url", u)
	mustCLI(t, "resume", "ev-snk2", "--url", u)
	waitFile(t, filepath.Join(cl.WorkDir, "out2.txt"), "l3\nl4\nl5\n")

	mustCLI(t, "stop", "ev-snk2", "--url", u)
	waitStopped(t, u, "ev-snk2")
	// The server's checks, passed through with its message (exit 1): a
	// value it refuses, and a rule a source cannot take.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ev-snk2", "--to", "timestamp", "--timestamp", "yesterday"}, `Invalid "timestamp" "yesterday"`},
		{[]string{"ev-snk2", "--shift-by", "0"}, `Invalid "shift_by" 0`},
		{[]string{"ev-src", "--to", "latest"}, "Connector ev-src is a source connector"},
	} {
		if _, errOut, code := runCLI(t, append([]string{"offsets", "reset", "--url", u}, tc.args...)...); code != exitRefused || !strings.Contains(errOut, "sluice: 400: "+tc.want) {
			t.Errorf("reset %q: exit %d, %s", tc.args, code, errOut)
		}
	}
}

// TestOffsetsOpsSource: a source's reset --to earliest is its DELETE,
// recorded with the rule; undo puts the position back, and the history
// shows it; -o yaml works on the changes.
func TestOffsetsOpsSource(t *testing.T) {
	cl := startCluster(t)
	u := cl.URL
	writeFile(t, cl.WorkDir, "in.txt", "one\ntwo\n")
	spec := writeFile(t, t.TempDir(), "src.json", `{"name":"s","config":{"connector.class":"FileStreamSource","file":"in.txt","topic":"s"}}`)
	mustCLI(t, "apply", "-f", spec, "--wait", "--url", u)
	want := `{"filename":"in.txt"}={"position":8}`
	eventually(t, 30*time.Second, func() (bool, string) {
		p := positions(t, u, "s")
		return p == want, p
	})
	mustCLI(t, "stop", "s", "--url", u)
	waitStopped(t, u, "s")
	out, errOut, code := runCLI(t, "offsets", "reset", "s", "--to", "earliest", "-o", "yaml", "--url", u)
	if code != 0 || !strings.Contains(out, "dry_run: false\n") || !strings.Contains(out, "position: 8\n") || !strings.Contains(out, "to: null\n") {
		t.Fatalf("reset --to earliest -o yaml: exit %d\n%s%s", code, out, errOut)
	}
	id := lastID(t, errOut)
	if p := positions(t, u, "s"); p != "" {
		t.Fatalf("after the reset: %s", p)
	}
	mustChange(t, "offsets", "undo", "s", id, "--url", u)
	if p := positions(t, u, "s"); p != want {
		t.Fatalf("after the undo: %s", p)
	}
	out = mustCLI(t, "offsets", "history", "s", "--url", u)
	if !regexp.MustCompile(`undo +anonymous +1 +undo of reset-to `+id).MatchString(out) ||
		!regexp.MustCompile(`reset-to +anonymous +1 +to=earliest`).MatchString(out) {
		t.Fatalf("history:\n%s", out)
	}
	// SLUICE_OUTPUT chooses the format as -o does.
	t.Setenv("SLUICE_OUTPUT", "json")
	var h api.OffsetsHistory
	if out := mustCLI(t, "offsets", "history", "s", "--url", u); json.Unmarshal([]byte(out), &h) != nil || len(h.Entries) != 2 {
		t.Fatalf("history with SLUICE_OUTPUT=json:\n%s", out)
	}
}

// TestOffsetsOpsUsage: flag combinations that cannot mean anything are
// usage errors (exit 2) before any request is sent.
func TestOffsetsOpsUsage(t *testing.T) {
	t.Setenv("SLUICE_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	// Nothing listens there: a request sent would be exit 3.
	for _, args := range [][]string{
		{"offsets", "reset", "x", "--to", "earliest", "--shift-by", "-1"},
		{"offsets", "reset", "x", "--timestamp", "2026-11-30T10:00:00Z"},
		{"offsets", "reset", "x", "--to", "earliest", "--timestamp", "1"},
		{"offsets", "reset", "x", "--to", "timestamp"},
		{"offsets", "reset", "x", "--to", "offset"},
		{"offsets", "reset", "x", "--shift-by", "1", "--offset", "3"},
		{"offsets", "reset", "x", "--to", "beginning"},
		{"offsets", "reset", "x", "--topics", "t"},
		{"offsets", "reset", "x", "--to", "latest", "--partitions", "a"},
		{"offsets", "reset", "x", "--to", "latest", "--partitions", "4294967296"},
		{"offsets", "history"},
		{"offsets", "history", "x", "1796119200123-c98a176d316d2399", "--limit", "3"},
		{"offsets", "undo", "x"},
		{"offsets", "restore", "x"},
		{"offsets", "restore", "x", "--from", "y", "--positions", "middle"},
		{"move", "a"},
		{"move", "a", "b", "--set", "novalue"},
		{"copy", "a", "b", "c"},
		{"offsets", "reset", "x", "--reason", "two\nlines"},
	} {
		if _, errOut, code := runCLI(t, append(args, "--url", "127.0.0.1:1")...); code != exitUsage {
			t.Errorf("sluice %q: exit %d, want %d (%s)", args, code, exitUsage, errOut)
		}
	}
}
