package integration

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestOffsetsSourceGetInEveryState: GET …/offsets answers in RUNNING, PAUSED
// and STOPPED (spec §5.1), {"offsets":[]} for a connector that never
// committed, and 404 once the connector is deleted although its offsets are
// still stored.
func TestOffsetsSourceGetInEveryState(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("get")
	in := lines(1, 20)
	writeLines(t, workPath(c, "get.txt"), in)
	want := []offset{filePos("get.txt", bytesOf(in))}

	fileSource(c, "src", "get.txt", topic, "")
	c.WaitState("src", "RUNNING", 1, "RUNNING")
	waitOffsets(c, "src", want)

	c.Must(http.StatusAccepted, "PUT", "/connectors/src/pause", nil)
	c.WaitState("src", "PAUSED", 1, "PAUSED")
	wantOffsets(c, "src", want)

	c.Must(http.StatusNoContent, "PUT", "/connectors/src/stop", nil)
	c.WaitState("src", "STOPPED", 0, "")
	wantOffsets(c, "src", want)

	fileSource(c, "fresh", "other.txt", topic, "STOPPED")
	if r := c.Must(http.StatusOK, "GET", "/connectors/fresh/offsets", nil); strings.TrimSpace(string(r.Body)) != `{"offsets":[]}` {
		t.Fatalf("GET offsets of a connector that never committed: %s, want {\"offsets\":[]}", r.Body)
	}

	c.Must(http.StatusNoContent, "DELETE", "/connectors/src", nil)
	expect(t, c, "GET", "/connectors/src/offsets", nil, http.StatusNotFound, msgNotFound("src"))
	patch(t, c, "src", body(filePos("get.txt", 0)), http.StatusNotFound, msgNotFound("src"))
	expect(t, c, "DELETE", "/connectors/src/offsets", nil, http.StatusNotFound, msgNotFound("src"))
}

// TestOffsetsSourceAlterAndReset: partial alters augment, a null offset
// removes its partition (a tombstone in the offsets topic), the last of
// duplicate partitions wins, every change is visible to the next GET, and a
// reset removes everything and can be repeated. The file source has the
// offset hook (definite messages), the generator has not (framework-managed
// messages).
func TestOffsetsSourceAlterAndReset(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	n := func(v int) json.Number { return json.Number(strconv.Itoa(v)) }
	tests := []struct {
		name, short, class string
		config             map[string]string
		part               func(i int) map[string]any
		off                func(v int) map[string]any
		alterMsg, resMsg   string
	}{
		{"file source", "file", fileSourceClass, map[string]string{"file": "a.txt", "topic": c.Name("file")},
			func(i int) map[string]any { return map[string]any{"filename": "f" + strconv.Itoa(i) + ".txt"} },
			func(v int) map[string]any { return map[string]any{"position": n(v)} },
			msgAlterDefinite, msgResetDefinite},
		{"generator", "gen", generatorClass, map[string]string{"topic": c.Name("gen"), "streams": "3"},
			func(i int) map[string]any { return map[string]any{"stream": n(i)} },
			func(v int) map[string]any { return map[string]any{"seq": n(v), "note": "kept as given", "ok": true} },
			msgAlterFramework, msgResetFramework},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := on(c, t)
			name := "alter-" + tt.short
			cfg := map[string]string{"connector.class": tt.class}
			for k, v := range tt.config {
				cfg[k] = v
			}
			c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": name, "config": cfg, "initial_state": "STOPPED"})
			p, o := tt.part, tt.off

			patch(t, c, name, body(offs(p(0), o(10), p(1), o(20))...), http.StatusOK, tt.alterMsg)
			wantOffsets(c, name, offs(p(0), o(10), p(1), o(20)))

			// Partial alter: p(1) untouched.
			patch(t, c, name, body(offs(p(0), o(11), p(2), o(30))...), http.StatusOK, tt.alterMsg)
			wantOffsets(c, name, offs(p(0), o(11), p(1), o(20), p(2), o(30)))

			// A null offset removes the partition, with a tombstone.
			patch(t, c, name, body(offset{Partition: p(1)}), http.StatusOK, tt.alterMsg)
			wantOffsets(c, name, offs(p(0), o(11), p(2), o(30)))
			if v, ok := lastOffsetRecord(c, name, p(1)); !ok || v != nil {
				t.Fatalf("offsets topic: last record of %v is %q (found %v), want a tombstone", p(1), v, ok)
			}

			// Duplicates: the last entry for a partition wins.
			patch(t, c, name, body(offs(p(2), o(31), p(0), o(12), p(2), o(32))...), http.StatusOK, tt.alterMsg)
			wantOffsets(c, name, offs(p(0), o(12), p(2), o(32)))

			expect(t, c, "DELETE", "/connectors/"+name+"/offsets", nil, http.StatusOK, tt.resMsg)
			wantOffsets(c, name, nil)
			expect(t, c, "DELETE", "/connectors/"+name+"/offsets", nil, http.StatusOK, tt.resMsg)
			wantOffsets(c, name, nil)
			for _, i := range []int{0, 2} {
				if v, ok := lastOffsetRecord(c, name, p(i)); !ok || v != nil {
					t.Fatalf("offsets topic after reset: last record of %v is %q (found %v), want a tombstone", p(i), v, ok)
				}
			}
		})
	}

	// Spec §5.3: without a hook, any free-form maps pass, even empty ones.
	t.Run("generator accepts empty maps", func(t *testing.T) {
		c := on(c, t)
		c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "gen-empty", "initial_state": "STOPPED",
			"config": map[string]string{"connector.class": generatorClass, "topic": c.Name("gen2")}})
		patch(t, c, "gen-empty", body(offset{Partition: map[string]any{}, Offset: map[string]any{}}), http.StatusOK, msgAlterFramework)
		wantOffsets(c, "gen-empty", []offset{{Partition: map[string]any{}, Offset: map[string]any{}}})
	})
}

// lastOffsetRecord finds the last committed record of connector's partition
// in the offsets topic: its value (nil for a tombstone) and whether any was
// found. Keys are compared decoded, as the spec identifies partitions.
func lastOffsetRecord(c *sluicetest.Cluster, connector string, partition map[string]any) ([]byte, bool) {
	c.T.Helper()
	return lastOffsetRecordIn(c, c.Prefix+"-offsets", connector, partition)
}

// lastOffsetRecordIn is lastOffsetRecord in another offsets topic.
func lastOffsetRecordIn(c *sluicetest.Cluster, topic, connector string, partition map[string]any) ([]byte, bool) {
	c.T.Helper()
	var val []byte
	found := false
	for _, r := range c.ReadTopic(topic) {
		var key []any
		dec := json.NewDecoder(bytes.NewReader(r.Key))
		dec.UseNumber()
		if dec.Decode(&key) != nil || len(key) != 2 || key[0] != connector {
			continue
		}
		if reflect.DeepEqual(key[1], partition) {
			val, found = r.Value, true
		}
	}
	return val, found
}

// TestOffsetsDeleteConnector: offsets outlive a deleted connector (a new one
// of the same name resumes: no line is read twice), unless it is deleted with
// ?reset_offsets=true (a new one starts from the beginning), which a RUNNING
// connector refuses without deleting anything.
func TestOffsetsDeleteConnector(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("del")
	first, more := lines(1, 10), lines(11, 5)
	writeLines(t, workPath(c, "del.txt"), first)
	fileSource(c, "src", "del.txt", topic, "")
	waitOffsets(c, "src", []offset{filePos("del.txt", bytesOf(first))})
	waitTopic(c, topic, first)

	expect(t, c, "DELETE", "/connectors/src?reset_offsets=true", nil, http.StatusBadRequest, msgNotStopped("src"))
	c.Must(http.StatusOK, "GET", "/connectors/src", nil)
	wantOffsets(c, "src", []offset{filePos("del.txt", bytesOf(first))})

	c.Must(http.StatusNoContent, "PUT", "/connectors/src/stop", nil)
	c.Must(http.StatusNoContent, "DELETE", "/connectors/src", nil)
	expect(t, c, "GET", "/connectors/src/offsets", nil, http.StatusNotFound, msgNotFound("src"))

	// Re-created under the same name: the stored position is its own.
	fileSource(c, "src", "del.txt", topic, "STOPPED")
	wantOffsets(c, "src", []offset{filePos("del.txt", bytesOf(first))})
	appendLines(t, workPath(c, "del.txt"), more)
	c.Must(http.StatusAccepted, "PUT", "/connectors/src/resume", nil)
	all := concat(first, more)
	waitOffsets(c, "src", []offset{filePos("del.txt", bytesOf(all))})
	waitTopic(c, topic, all)

	// Deleted with its offsets: a new one reads the file from the start.
	c.Must(http.StatusNoContent, "PUT", "/connectors/src/stop", nil)
	c.Must(http.StatusNoContent, "DELETE", "/connectors/src?reset_offsets=true", nil)
	expect(t, c, "GET", "/connectors/src", nil, http.StatusNotFound, msgNotFound("src"))
	fileSource(c, "src", "del.txt", topic, "STOPPED")
	wantOffsets(c, "src", nil)
	c.Must(http.StatusAccepted, "PUT", "/connectors/src/resume", nil)
	waitTopic(c, topic, concat(all, all))
	waitOffsets(c, "src", []offset{filePos("del.txt", bytesOf(all))})
}

// TestOffsetsMoveConnector is issue 4's workflow: stop → GET offsets →
// delete → create another name STOPPED → PATCH those offsets → resume. The
// new connector continues at exactly that position: the sink's file holds
// every line once, in order.
func TestOffsetsMoveConnector(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	topic := c.Name("move")
	first, more := lines(1, 50), lines(51, 30)
	writeLines(t, workPath(c, "move.txt"), first)
	fileSink(c, "out", topic, "move-out.txt", "")
	fileSource(c, "mv-a", "move.txt", topic, "")
	waitOffsets(c, "mv-a", []offset{filePos("move.txt", bytesOf(first))})
	waitFile(t, workPath(c, "move-out.txt"), first)

	c.Must(http.StatusNoContent, "PUT", "/connectors/mv-a/stop", nil)
	c.WaitState("mv-a", "STOPPED", 0, "")
	var read struct {
		Offsets json.RawMessage `json:"offsets"`
	}
	c.Must(http.StatusOK, "GET", "/connectors/mv-a/offsets", nil).JSON(t, &read)
	c.Must(http.StatusNoContent, "DELETE", "/connectors/mv-a", nil)
	appendLines(t, workPath(c, "move.txt"), more)

	fileSource(c, "mv-b", "move.txt", topic, "STOPPED")
	wantOffsets(c, "mv-b", nil)
	patch(t, c, "mv-b", `{"offsets":`+string(read.Offsets)+`}`, http.StatusOK, msgAlterDefinite)
	wantOffsets(c, "mv-b", []offset{filePos("move.txt", bytesOf(first))})
	c.Must(http.StatusAccepted, "PUT", "/connectors/mv-b/resume", nil)

	all := concat(first, more)
	waitFile(t, workPath(c, "move-out.txt"), all)
	waitTopic(c, topic, all)
	waitOffsets(c, "mv-b", []offset{filePos("move.txt", bytesOf(all))})
}
