package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// historyEntry is one entry of GET …/offsets/history, as a client reads it.
type historyEntry struct {
	ID        string `json:"id"`
	Connector string `json:"connector"`
	Type      string `json:"type"`
	Operation string `json:"operation"`
	Detail    string `json:"detail"`
	Principal string `json:"principal"`
	Reason    string `json:"reason"`
	Undoes    string `json:"undoes"`
	State     string `json:"state"`
	Changes   []struct {
		Partition map[string]any `json:"partition"`
		From      map[string]any `json:"from"`
		To        map[string]any `json:"to"`
	} `json:"changes"`
}

// changesText renders an entry's changes canonically: partition from → to,
// sorted, so a test can state them in one line.
func (e historyEntry) changesText(t testing.TB) string {
	var out []string
	for _, ch := range e.Changes {
		p, _ := json.Marshal(ch.Partition)
		f, _ := json.Marshal(ch.From)
		to, _ := json.Marshal(ch.To)
		out = append(out, fmt.Sprintf("%s %s→%s", p, f, to))
	}
	return strings.Join(out, "; ")
}

// history reads a connector's whole history, newest first.
func history(c *sluicetest.Cluster, name string) []historyEntry {
	c.T.Helper()
	var body struct {
		Entries []historyEntry `json:"entries"`
		More    bool           `json:"more"`
	}
	c.Must(http.StatusOK, "GET", "/sluice/connectors/"+name+"/offsets/history?limit=1000", nil).JSON(c.T, &body)
	return body.Entries
}

// operations are the entries' operations, newest first.
func operations(es []historyEntry) string {
	var ops []string
	for _, e := range es {
		ops = append(ops, e.Operation)
	}
	return strings.Join(ops, ",")
}

// withReason is c sending X-Sluice-Reason with every request.
func withReason(c *sluicetest.Cluster, reason string) *sluicetest.Cluster {
	sc := *c
	sc.Headers = append(append([]string{}, c.Headers...), "X-Sluice-Reason", reason)
	return &sc
}

// undo posts an undo of entry id and checks the status.
func undo(c *sluicetest.Cluster, name, id, query string, status int) sluicetest.Response {
	c.T.Helper()
	return c.Must(status, "POST", "/sluice/connectors/"+name+"/offsets/history/"+id+"/undo"+query, nil)
}

// TestOffsetsHistorySourceUndo runs PATCH, a reset by rule, PATCH, DELETE,
// an undo and an undo of the undo on a stopped file source, and checks the
// exact positions after each step and the history they leave: newest first,
// with principal, reason and every partition's before and after; a stale
// undo is a 409 naming the partitions, unless forced; a dry run of an undo
// changes nothing.
func TestOffsetsHistorySourceUndo(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	src := c.Name("hsrc")
	fileSource(c, src, "h.txt", c.Name("h"), "STOPPED")

	withReason(c, "start at 10").Must(http.StatusOK, "PATCH", "/connectors/"+src+"/offsets", body(filePos("h.txt", 10)))
	wantOffsets(c, src, []offset{filePos("h.txt", 10)})
	r := c.Must(http.StatusOK, "POST", "/sluice/connectors/"+src+"/offsets/reset", map[string]any{"to": "earliest"})
	if !strings.Contains(string(r.Body), `"dry_run":false`) || !strings.Contains(string(r.Body), `"history_id"`) {
		t.Fatalf("reset to earliest answered %s", r.Body)
	}
	wantOffsets(c, src, nil)
	patch(t, c, src, body(filePos("h.txt", 20), filePos("o.txt", 5)), http.StatusOK, msgAlterDefinite)
	c.Must(http.StatusOK, "DELETE", "/connectors/"+src+"/offsets", nil)
	wantOffsets(c, src, nil)

	es := history(c, src)
	if got := operations(es); got != "reset,alter,reset-to,alter" {
		t.Fatalf("history operations %s, want reset,alter,reset-to,alter", got)
	}
	first := es[3]
	if first.Principal != "anonymous" || first.Reason != "start at 10" || first.State != "applied" || first.Type != "source" ||
		first.changesText(t) != `{"filename":"h.txt"} null→{"position":10}` {
		t.Fatalf("first entry %+v (%s)", first, first.changesText(t))
	}
	if got := es[0].changesText(t); got != `{"filename":"h.txt"} {"position":20}→null; {"filename":"o.txt"} {"position":5}→null` {
		t.Fatalf("the DELETE's entry changes %s", got)
	}

	// A dry run of the undo of the DELETE changes nothing.
	dry := undo(c, src, es[0].ID, "?dry_run=true", http.StatusOK)
	if !strings.Contains(string(dry.Body), `"dry_run":true`) || strings.Contains(string(dry.Body), "history_id") {
		t.Fatalf("dry run answered %s", dry.Body)
	}
	wantOffsets(c, src, nil)
	if n := len(history(c, src)); n != 4 {
		t.Fatalf("a dry run added history entries: %d, want 4", n)
	}

	undo(c, src, es[0].ID, "", http.StatusOK)
	wantOffsets(c, src, []offset{filePos("h.txt", 20), filePos("o.txt", 5)})
	es = history(c, src)
	if es[0].Operation != "undo" || es[0].Undoes != es[1].ID {
		t.Fatalf("undo entry %+v", es[0])
	}
	undo(c, src, es[0].ID, "", http.StatusOK) // the undo of the undo
	wantOffsets(c, src, nil)

	// The first PATCH's partition changed after it: a 409 naming it, then
	// forced.
	stale := c.Do("POST", "/sluice/connectors/"+src+"/offsets/history/"+first.ID+"/undo", nil)
	if stale.Status != http.StatusConflict || !strings.Contains(stale.Message(), `{"filename":"h.txt"}`) ||
		strings.Contains(stale.Message(), "o.txt") || !strings.Contains(stale.Message(), "force=true") {
		t.Fatalf("stale undo: %s", stale)
	}
	undo(c, src, first.ID, "?force=true", http.StatusOK)
	wantOffsets(c, src, nil) // before the first PATCH there was none

	if got := operations(history(c, src)); got != "undo,undo,undo,reset,alter,reset-to,alter" {
		t.Fatalf("history operations %s", got)
	}
	// Paging: two at a time, newest first.
	var page struct {
		Entries []historyEntry `json:"entries"`
		More    bool           `json:"more"`
	}
	c.Must(http.StatusOK, "GET", "/sluice/connectors/"+src+"/offsets/history?limit=2", nil).JSON(t, &page)
	all := history(c, src)
	if len(page.Entries) != 2 || !page.More || page.Entries[1].ID != all[1].ID {
		t.Fatalf("first page %+v", page)
	}
	c.Must(http.StatusOK, "GET", "/sluice/connectors/"+src+"/offsets/history?limit=2&before="+page.Entries[1].ID, nil).JSON(t, &page)
	if len(page.Entries) != 2 || page.Entries[0].ID != all[2].ID {
		t.Fatalf("second page %+v", page)
	}

	// Undo needs STOPPED, as PATCH does.
	c.Must(http.StatusAccepted, "PUT", "/connectors/"+src+"/pause", nil)
	expect(t, c, "POST", "/sluice/connectors/"+src+"/offsets/history/"+first.ID+"/undo", nil, http.StatusBadRequest, msgNotStopped(src))
	const absent = "1700000000000-0000000000000000"
	expect(t, c, "POST", "/sluice/connectors/"+src+"/offsets/history/"+absent+"/undo", nil, http.StatusNotFound, "No offsets history entry "+absent+" for connector "+src)
	expect(t, c, "POST", "/sluice/connectors/"+src+"/offsets/history/nope/undo", nil, http.StatusBadRequest, "Invalid offsets history entry id 'nope': ids look like 1796119200123-c98a176d316d2399")
}

// TestOffsetsHistorySinkUndo does the same on a sink: PATCH, reset to
// latest, undo, DELETE, undo; then the sink resumes from exactly the
// restored position.
func TestOffsetsHistorySinkUndo(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	snk, topic := c.Name("hsnk"), c.Name("hsnk-in")
	createTopic(c, topic, 1)
	vals := values("v", 10)
	c.Produce(topic, vals...)
	fileSink(c, snk, topic, "hsnk.txt", "STOPPED")

	patch(t, c, snk, body(sinkPos(topic, 0, 4)), http.StatusOK, msgAlterDefinite)
	c.Must(http.StatusOK, "POST", "/sluice/connectors/"+snk+"/offsets/reset", map[string]any{"to": "latest"})
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 10)})
	es := history(c, snk)
	if es[0].Operation != "reset-to" || es[0].Detail != "to=latest" ||
		es[0].changesText(t) != fmt.Sprintf(`{"kafka_partition":0,"kafka_topic":%q} {"kafka_offset":4}→{"kafka_offset":10}`, topic) {
		t.Fatalf("reset-to entry %+v (%s)", es[0], es[0].changesText(t))
	}
	undo(c, snk, es[0].ID, "", http.StatusOK)
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 4)})
	c.Must(http.StatusOK, "DELETE", "/connectors/"+snk+"/offsets", nil)
	wantOffsets(c, snk, nil)
	undo(c, snk, history(c, snk)[0].ID, "", http.StatusOK)
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 4)})
	if got := operations(history(c, snk)); got != "undo,reset,undo,reset-to,alter" {
		t.Fatalf("history operations %s", got)
	}

	c.Must(http.StatusAccepted, "PUT", "/connectors/"+snk+"/resume", nil)
	waitFile(t, workPath(c, "hsnk.txt"), vals[4:])
}

// TestOffsetsHistoryOfDeletedConnector: a connector deleted with its
// offsets keeps its history, and its last positions are restored into a
// new connector from it.
func TestOffsetsHistoryOfDeletedConnector(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	old, replacement := c.Name("gone"), c.Name("heir")
	fileSource(c, old, "d.txt", c.Name("d"), "STOPPED")
	patch(t, c, old, body(filePos("d.txt", 33)), http.StatusOK, msgAlterDefinite)
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+old+"?reset_offsets=true", nil)
	c.Must(http.StatusNotFound, "GET", "/connectors/"+old, nil)

	es := history(c, old)
	if got := operations(es); got != "reset,alter" {
		t.Fatalf("history of the deleted connector: %s", got)
	}
	fileSource(c, replacement, "d.txt", c.Name("d"), "STOPPED")
	r := c.Must(http.StatusOK, "POST", "/sluice/connectors/"+replacement+"/offsets/restore", map[string]any{"from": old, "entry": es[0].ID})
	if !strings.Contains(string(r.Body), `"to":{"position":33}`) {
		t.Fatalf("restore answered %s", r.Body)
	}
	wantOffsets(c, replacement, []offset{filePos("d.txt", 33)})
	h := history(c, replacement)
	if len(h) != 1 || h[0].Operation != "restore" || !strings.Contains(h[0].Detail, old) {
		t.Fatalf("the new connector's history %+v", h)
	}
	// A sink cannot take a source's positions.
	snk := c.Name("sinkheir")
	createTopic(c, c.Name("si"), 1)
	fileSink(c, snk, c.Name("si"), "si.txt", "STOPPED")
	bad := c.Do("POST", "/sluice/connectors/"+snk+"/offsets/restore", map[string]any{"from": old})
	if bad.Status != http.StatusBadRequest || !strings.Contains(bad.Message(), "source connector") {
		t.Fatalf("restoring a source's positions into a sink: %s", bad)
	}
}

// TestOffsetsHistoryFailures: a change that fails at the agent leaves a
// failed entry, never an applied one; a leader that stops between the
// change and its marker leaves the entry pending, and the next leader
// marks it applied, as the positions show the change was made.
func TestOffsetsHistoryFailures(t *testing.T) {
	t.Parallel()
	faults := &coFaults{}
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, Faults: faults})
	src := c.Name("fsrc")
	fileSource(c, src, "f.txt", c.Name("f"), "STOPPED")
	patch(t, c, src, body(filePos("f.txt", 7)), http.StatusOK, msgAlterDefinite)

	faults.Fail("changing the offsets")
	r := c.Do("PATCH", "/connectors/"+src+"/offsets", body(filePos("f.txt", 99)))
	if r.Status != http.StatusInternalServerError {
		t.Fatalf("PATCH with a failing agent step: %s", r)
	}
	wantOffsets(c, src, []offset{filePos("f.txt", 7)})
	if got := operations(history(c, src)); got != "alter" {
		t.Fatalf("a failed change shows in the history: %s", got)
	}

	faults.Fail("recording the offsets change")
	r = c.Do("PATCH", "/connectors/"+src+"/offsets", body(filePos("f.txt", 99)))
	if r.Status != http.StatusInternalServerError || !strings.Contains(r.Message(), "nothing was changed") {
		t.Fatalf("PATCH whose history entry cannot be written: %s", r)
	}
	wantOffsets(c, src, []offset{filePos("f.txt", 7)})

	// The marker is never written: as if the leader died right after the
	// change.
	faults.Fail("marking the offsets change in the history")
	patch(t, c, src, body(filePos("f.txt", 42)), http.StatusOK, msgAlterDefinite)
	if got := operations(history(c, src)); got != "alter" {
		t.Fatalf("a pending entry shows in the history: %s", got)
	}
	faults.Fail()
	c.StopCoordinator()
	c.StartCoordinator()
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		es := history(c, src)
		return operations(es) == "alter,alter" && strings.Contains(es[0].changesText(t), `{"position":7}→{"position":42}`),
			fmt.Sprintf("history after the next leader started: %s", operations(es))
	})
}

// TestOffsetsHistoryExactNumbers: positions read back from the history are
// the ones written — a sink offset past a million, a source offset past
// 2^53 — so an undo puts them back exactly, and the stale check compares
// them right.
func TestOffsetsHistoryExactNumbers(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	snk, topic := c.Name("big"), c.Name("big-in")
	createTopic(c, topic, 1)
	c.Produce(topic, values("v", 3)...)
	fileSink(c, snk, topic, "big.txt", "STOPPED")
	patch(t, c, snk, body(sinkPos(topic, 0, 1_234_567)), http.StatusOK, msgAlterDefinite)
	c.Must(http.StatusOK, "POST", "/sluice/connectors/"+snk+"/offsets/reset", map[string]any{"to": "earliest"})
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 0)})
	undo(c, snk, history(c, snk)[0].ID, "", http.StatusOK)
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 1_234_567)})

	src := c.Name("bigsrc")
	fileSource(c, src, "b.txt", c.Name("b"), "STOPPED")
	huge := offset{Partition: map[string]any{"filename": "b.txt"}, Offset: map[string]any{"position": json.Number("9007199254740993")}}
	patch(t, c, src, body(huge), http.StatusOK, msgAlterDefinite)
	c.Must(http.StatusOK, "DELETE", "/connectors/"+src+"/offsets", nil)
	undo(c, src, history(c, src)[0].ID, "", http.StatusOK) // no 409: the stale check compares exact numbers
	wantOffsets(c, src, []offset{huge})
}
