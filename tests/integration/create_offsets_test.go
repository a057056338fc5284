package integration

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestCreateWithOffsetsKIPExample is KIP-995's example verbatim (spec
// §0.1): a file source created with initial_offsets at byte 30 answers 201
// with offsets_status, starts reading at byte 30, and the topic then holds
// exactly the lines after it. Only the topic name is made unique, so runs
// can share a real broker.
func TestCreateWithOffsetsKIPExample(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	topic := c.Name("test-topic")
	// Three 10-byte lines: byte 30 is where the fourth line starts.
	before := []string{"before-01", "before-02", "before-03"}
	after := []string{"after-30-1", "after-30-2"}
	writeLines(t, filepath.Join(c.WorkDir, "test.txt"), append(append([]string{}, before...), after...))
	if coBytes(before) != 30 {
		t.Fatalf("test bug: the lines before the position take %d bytes", coBytes(before))
	}
	body := `{"name":"file-src-1","config":{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","file":"test.txt","topic":"` + topic + `","tasks.max":"1"},"initial_offsets":[{"partition":{"filename":"test.txt"},"offset":{"position":30}}]}`
	r := c.Do("POST", "/connectors", body)
	wantJSON(t, r, http.StatusCreated, `{"name":"file-src-1","config":{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","file":"test.txt","topic":"`+topic+`","tasks.max":"1","name":"file-src-1"},"tasks":[],"type":"source","offsets_status":{"message":"The offsets for this connector have been altered successfully"}}`)
	if loc := r.Header.Get("Location"); loc != c.URL+"/connectors/file-src-1" {
		t.Fatalf("Location %q", loc)
	}
	c.WaitState("file-src-1", "RUNNING", 1, "RUNNING")
	coWaitTopic(c, "file-src-1", topic, after, coSrc("test.txt", 30+coBytes(after)))
}

// TestCreateWithOffsetsInitialState combines initial_offsets with
// initial_state (KIP-980): a connector created STOPPED or PAUSED has no
// tasks, GET …/offsets shows the initial offsets at once, and on resume its
// task reads from there.
func TestCreateWithOffsetsInitialState(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	for _, state := range []string{"STOPPED", "PAUSED", "stopped"} {
		t.Run(state, func(t *testing.T) {
			c := coOn(c, t)
			name, topic, file := c.Name("at-"+state), c.Name("at-"+state), state+".txt"
			lines := coLines(state, 6) // "STOPPED-00": 11 bytes a line
			writeLines(t, filepath.Join(c.WorkDir, file), lines)
			start := coBytes(lines[:2])
			cfg := fileSourceCfg(file, topic)
			r := c.Do("POST", "/connectors", coBody(name, cfg, state, coList(coSrc(file, start))))
			coCreated(t, r, name, cfg, "source")

			want := map[string]string{"stopped": "STOPPED"}[state]
			if want == "" {
				want = state
			}
			c.WaitState(name, want, 0, "")
			wantJSON(t, c.Must(http.StatusOK, "GET", "/connectors/"+name+"/tasks", nil), http.StatusOK, `[]`)
			coWantOffsets(c, name, coSrc(file, start))
			if got := c.ReadTopic(topic); len(got) != 0 {
				t.Fatalf("a %s connector produced %d records", want, len(got))
			}

			wantNoBody(t, c.Do("PUT", "/connectors/"+name+"/resume", nil), http.StatusAccepted)
			c.WaitState(name, "RUNNING", 1, "RUNNING")
			coWaitTopic(c, name, topic, lines[2:], coSrc(file, coBytes(lines)))
		})
	}
}

// TestCreateWithOffsetsSink: a sink's initial_offsets (kafka_topic,
// kafka_partition, kafka_offset) become its group's committed offsets, so
// the sink starts there: created RUNNING it writes exactly the records from
// that offset on; created STOPPED, GET shows the offsets and resume starts
// there.
func TestCreateWithOffsetsSink(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	topic := c.Name("records")
	coTopic(c, topic, 1)
	vals := coLines("rec", 10)
	c.Produce(topic, vals...)

	running := c.Name("sink-run")
	cfg := fileSinkCfg("run.txt", topic)
	coCreated(t, c.Do("POST", "/connectors", coBody(running, cfg, "", coList(coSink(topic, 0, 4)))), running, cfg, "sink")
	c.WaitState(running, "RUNNING", 1, "RUNNING")
	coWaitSinkFile(c, running, topic, 10, filepath.Join(c.WorkDir, "run.txt"), vals[4:])

	stopped := c.Name("sink-stopped")
	cfg = fileSinkCfg("stopped.txt", topic)
	coCreated(t, c.Do("POST", "/connectors", coBody(stopped, cfg, "STOPPED", coList(coSink(topic, 0, 7)))), stopped, cfg, "sink")
	c.WaitState(stopped, "STOPPED", 0, "")
	coWantOffsets(c, stopped, coSink(topic, 0, 7))
	wantNoBody(t, c.Do("PUT", "/connectors/"+stopped+"/resume", nil), http.StatusAccepted)
	c.WaitState(stopped, "RUNNING", 1, "RUNNING")
	coWaitSinkFile(c, stopped, topic, 10, filepath.Join(c.WorkDir, "stopped.txt"), vals[7:])
}

// coWantPlainCreate checks the 201 of a create without initial_offsets (or
// with null): ConnectorInfo only, no offsets_status field.
func coWantPlainCreate(t testing.TB, r sluicetest.Response, name string, config map[string]string, kind string) {
	t.Helper()
	cfg := map[string]string{"name": name}
	for k, v := range config {
		cfg[k] = v
	}
	want, _ := json.Marshal(map[string]any{"name": name, "config": cfg, "tasks": []any{}, "type": kind})
	wantJSON(t, r, http.StatusCreated, string(want))
}

// TestCreateWithOffsetsRecreateSource: a name keeps the offsets of a
// deleted file source. Re-created with initial_offsets, they replace the
// stale ones (a stale partition not listed is gone); without the field, or
// with null, the stale ones are kept as upstream keeps them; with [] they
// are wiped and the source starts from the beginning.
func TestCreateWithOffsetsRecreateSource(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	name, file := c.Name("re-src"), "re.txt"
	lines := coLines("re", 8) // 6 bytes a line
	writeLines(t, filepath.Join(c.WorkDir, file), lines)
	end := coBytes(lines)
	cfg := func(topic string) map[string]string { return fileSourceCfg(file, c.Name(topic)) }
	coSeed(c, name, cfg("seed"), coSrc(file, 12), coSrc("old-a.txt", 5), coSrc("old-b.txt", 7))

	// initial_offsets replaces: old-b.txt is not listed, so it is gone.
	r := c.Do("POST", "/connectors", coBody(name, cfg("replaced"), "STOPPED", coList(coSrc(file, 24), coSrc("old-a.txt", 9))))
	coCreated(t, r, name, cfg("replaced"), "source")
	coWantOffsets(c, name, coSrc(file, 24), coSrc("old-a.txt", 9))
	wantNoBody(t, c.Do("PUT", "/connectors/"+name+"/resume", nil), http.StatusAccepted)
	coWaitTopic(c, name, c.Name("replaced"), lines[4:], coSrc(file, end), coSrc("old-a.txt", 9))
	wantNoBody(t, c.Do("PUT", "/connectors/"+name+"/stop", nil), http.StatusNoContent)
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+name, nil)

	// Absent: the stale offsets are kept, and the answer has no
	// offsets_status.
	coWantPlainCreate(t, c.Do("POST", "/connectors", coBody(name, cfg("kept"), "STOPPED", nil)), name, cfg("kept"), "source")
	coWantOffsets(c, name, coSrc(file, end), coSrc("old-a.txt", 9))
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+name, nil)

	// null is the same as absent.
	body := map[string]any{"name": name, "config": cfg("kept"), "initial_state": "STOPPED", "initial_offsets": nil}
	coWantPlainCreate(t, c.Do("POST", "/connectors", body), name, cfg("kept"), "source")
	coWantOffsets(c, name, coSrc(file, end), coSrc("old-a.txt", 9))
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+name, nil)

	// []: wiped; the source starts fresh and reads the whole file, and
	// only its own partition is left.
	coCreated(t, c.Do("POST", "/connectors", coBody(name, cfg("fresh"), "STOPPED", coList())), name, cfg("fresh"), "source")
	coWantOffsets(c, name)
	wantNoBody(t, c.Do("PUT", "/connectors/"+name+"/resume", nil), http.StatusAccepted)
	coWaitTopic(c, name, c.Name("fresh"), lines, coSrc(file, end))
}

// TestCreateWithOffsetsRecreateSink is TestCreateWithOffsetsRecreateSource
// for a file sink, whose offsets are its group's committed offsets.
func TestCreateWithOffsetsRecreateSink(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	topic, other := c.Name("re-in"), c.Name("re-other")
	coTopic(c, topic, 1)
	coTopic(c, other, 1)
	vals := coLines("val", 10)
	c.Produce(topic, vals...)
	name := c.Name("re-snk")
	cfg := func(file string) map[string]string { return fileSinkCfg(file, topic) }
	coSeed(c, name, cfg("seed.txt"), coSink(topic, 0, 2), coSink(other, 0, 0))

	// initial_offsets replaces: the other topic's partition is gone.
	r := c.Do("POST", "/connectors", coBody(name, cfg("replaced.txt"), "STOPPED", coList(coSink(topic, 0, 6))))
	coCreated(t, r, name, cfg("replaced.txt"), "sink")
	coWantOffsets(c, name, coSink(topic, 0, 6))
	wantNoBody(t, c.Do("PUT", "/connectors/"+name+"/resume", nil), http.StatusAccepted)
	coWaitSinkFile(c, name, topic, 10, filepath.Join(c.WorkDir, "replaced.txt"), vals[6:])
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+name, nil)
	coWaitGroupGone(c, "connect-"+name)

	// Absent or null: kept.
	coWantPlainCreate(t, c.Do("POST", "/connectors", coBody(name, cfg("kept.txt"), "STOPPED", nil)), name, cfg("kept.txt"), "sink")
	coWantOffsets(c, name, coSink(topic, 0, 10))
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+name, nil)
	body := map[string]any{"name": name, "config": cfg("kept.txt"), "initial_state": "STOPPED", "initial_offsets": nil}
	coWantPlainCreate(t, c.Do("POST", "/connectors", body), name, cfg("kept.txt"), "sink")
	coWantOffsets(c, name, coSink(topic, 0, 10))
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+name, nil)

	// []: wiped; the sink starts from the beginning.
	coCreated(t, c.Do("POST", "/connectors", coBody(name, cfg("fresh.txt"), "", coList())), name, cfg("fresh.txt"), "sink")
	coWaitSinkFile(c, name, topic, 10, filepath.Join(c.WorkDir, "fresh.txt"), vals)
}
