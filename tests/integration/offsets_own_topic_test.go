package integration

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// Per-connector offsets topics (KIP-618's offsets.storage.topic), as Kafka
// Connect 4.4 uses them: tasks read the connector's topic alone and commit
// to both; GET lists the partitions of both, with the connector topic's
// offset (null where only the worker's topic has one); PATCH and DELETE
// write both; the topic is created, compacted, when the connector starts.

// ownSource creates a file source whose offsets topic is its own.
func ownSource(c *sluicetest.Cluster, name, file, topic, offsetsTopic, initialState string) {
	c.T.Helper()
	req := map[string]any{"name": name, "config": map[string]string{
		"connector.class": fileSourceClass, "file": file, "topic": topic, "offsets.storage.topic": offsetsTopic,
	}}
	if initialState != "" {
		req["initial_state"] = initialState
	}
	c.Must(http.StatusCreated, "POST", "/connectors", req)
}

// rawPosition is a file source's offsets record of file at pos, as raw
// records.
func rawPosition(connector, file string, pos int) sluicetest.Record {
	return sluicetest.Record{Key: []byte(`["` + connector + `",{"filename":"` + file + `"}]`),
		Value: []byte(`{"position":` + strconv.Itoa(pos) + `}`)}
}

// wantRecord fails unless the last record of connector's file partition in
// topic is want (a JSON value; "" for a tombstone).
func wantRecord(t testing.TB, c *sluicetest.Cluster, topic, connector, file, want string) {
	t.Helper()
	v, ok := lastOffsetRecordIn(c, topic, connector, map[string]any{"filename": file})
	switch {
	case !ok:
		t.Fatalf("offsets topic %s: no record of %s's %s, want %q", topic, connector, file, want)
	case want == "" && v != nil:
		t.Fatalf("offsets topic %s: last record of %s's %s is %s, want a tombstone", topic, connector, file, v)
	case want != "" && !sameJSON(v, want):
		t.Fatalf("offsets topic %s: last record of %s's %s is %q, want %s", topic, connector, file, v, want)
	}
}

// TestOffsetsOwnTopicTask: a file source with its own offsets topic commits
// its position to both topics (with exactly-once on, in the transaction of
// its records); stopped and resumed, it reads on exactly where it was, from
// its own topic: a stale position in the worker's topic alone does not
// move it.
func TestOffsetsOwnTopicTask(t *testing.T) {
	t.Parallel()
	for _, eos := range []bool{false, true} {
		name := "at_least_once"
		if eos {
			name = "exactly_once"
		}
		t.Run(name, func(t *testing.T) {
			c := sluicetest.Start(t, sluicetest.Options{Agents: 1, ExactlyOnce: eos})
			own, topic, worker := c.Name("own-offsets"), c.Name("data"), c.Prefix+"-offsets"
			first, more := lines(1, 20), lines(21, 10)
			writeLines(t, workPath(c, "a.txt"), first)
			ownSource(c, "src", "a.txt", topic, own, "")
			waitOffsets(c, "src", []offset{filePos("a.txt", bytesOf(first))})
			waitTopic(c, topic, first)
			at := `{"position":` + strconv.Itoa(int(bytesOf(first))) + `}`
			wantRecord(t, c, own, "src", "a.txt", at)
			wantRecord(t, c, worker, "src", "a.txt", at)

			c.Must(http.StatusNoContent, "PUT", "/connectors/src/stop", nil)
			c.WaitState("src", "STOPPED", 0, "")
			c.ProduceRecords(worker, rawPosition("src", "a.txt", 0))
			appendLines(t, workPath(c, "a.txt"), more)
			c.Must(http.StatusAccepted, "PUT", "/connectors/src/resume", nil)
			c.WaitState("src", "RUNNING", 1, "RUNNING")
			all := concat(first, more)
			waitTopic(c, topic, all)
			waitOffsets(c, "src", []offset{filePos("a.txt", bytesOf(all))})
			// No line twice: the position came from the connector's topic.
			sluicetest.Consistently(t, 500*time.Millisecond, func() (bool, string) {
				got := topicValues(c, topic)
				return len(got) == len(all), fmt.Sprintf("%d records in %s, want %d (each line once)", len(got), topic, len(all))
			})
			if got := topicValues(c, topic); len(got) != len(all) {
				t.Fatalf("%d records in %s, want %d (each line once)", len(got), topic, len(all))
			}
		})
	}
}

// TestOffsetsOwnTopicGet: GET …/offsets lists the partitions of both
// topics; the connector topic's offset wins, and a partition only the
// worker's topic holds shows a null offset, as Kafka Connect shows it.
func TestOffsetsOwnTopicGet(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	own, worker := c.Name("own"), c.Prefix+"-offsets"
	ownSource(c, "src", "a.txt", c.Name("data"), own, "STOPPED")
	wantOffsets(c, "src", nil) // creates the topic if the start has not yet
	c.ProduceRecords(worker, rawPosition("src", "w.txt", 5), rawPosition("src", "both.txt", 7))
	c.ProduceRecords(own, rawPosition("src", "both.txt", 9), rawPosition("src", "own.txt", 11))
	wantOffsets(c, "src", []offset{{Partition: map[string]any{"filename": "w.txt"}}, filePos("both.txt", 9), filePos("own.txt", 11)})

	// Another connector without a topic of its own sees the worker's.
	fileSource(c, "plain", "a.txt", c.Name("data"), "STOPPED")
	c.ProduceRecords(worker, rawPosition("plain", "w.txt", 3))
	wantOffsets(c, "plain", []offset{filePos("w.txt", 3)})
}

// TestOffsetsOwnTopicAlterReset: PATCH writes both topics; a null offset
// tombstones both; DELETE tombstones every partition of either topic in
// both (the worker-only one too), so GET is empty after it; an undo of the
// reset writes the positions back to both.
func TestOffsetsOwnTopicAlterReset(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	own, worker := c.Name("own"), c.Prefix+"-offsets"
	ownSource(c, "src", "a.txt", c.Name("data"), own, "STOPPED")
	wantOffsets(c, "src", nil)
	c.ProduceRecords(worker, rawPosition("src", "w.txt", 5))

	patch(t, c, "src", body(filePos("a.txt", 10), filePos("b.txt", 20)), http.StatusOK, msgAlterDefinite)
	wantOffsets(c, "src", []offset{{Partition: map[string]any{"filename": "w.txt"}}, filePos("a.txt", 10), filePos("b.txt", 20)})
	for _, tp := range []string{own, worker} {
		wantRecord(t, c, tp, "src", "a.txt", `{"position":10}`)
		wantRecord(t, c, tp, "src", "b.txt", `{"position":20}`)
	}
	patch(t, c, "src", body(offset{Partition: map[string]any{"filename": "b.txt"}}), http.StatusOK, msgAlterDefinite)
	for _, tp := range []string{own, worker} {
		wantRecord(t, c, tp, "src", "b.txt", "")
	}
	wantOffsets(c, "src", []offset{{Partition: map[string]any{"filename": "w.txt"}}, filePos("a.txt", 10)})

	expect(t, c, "DELETE", "/connectors/src/offsets", nil, http.StatusOK, msgResetDefinite)
	wantOffsets(c, "src", nil)
	for _, tp := range []string{own, worker} {
		wantRecord(t, c, tp, "src", "a.txt", "")
		wantRecord(t, c, tp, "src", "w.txt", "")
	}

	es := history(c, "src")
	if len(es) != 3 || es[0].Operation != "reset" {
		t.Fatalf("history %s, want reset,alter,alter", operations(es))
	}
	undo(c, "src", es[0].ID, "", http.StatusOK)
	wantOffsets(c, "src", []offset{filePos("a.txt", 10)})
	for _, tp := range []string{own, worker} {
		wantRecord(t, c, tp, "src", "a.txt", `{"position":10}`)
	}
}

// TestOffsetsOwnTopicChanged: changing offsets.storage.topic copies
// nothing, as in Kafka Connect: the new topic has no offsets, so GET shows
// the worker topic's partitions with null offsets; without the setting
// the worker topic's offsets are the connector's again.
func TestOffsetsOwnTopicChanged(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	cfg := map[string]string{"connector.class": fileSourceClass, "file": "a.txt", "topic": c.Name("data"), "offsets.storage.topic": c.Name("one")}
	mustCreate(c, "src", cfg, "STOPPED")
	patch(t, c, "src", body(filePos("a.txt", 10)), http.StatusOK, msgAlterDefinite)

	cfg["offsets.storage.topic"] = c.Name("two")
	c.Must(http.StatusOK, "PUT", "/connectors/src/config", cfg)
	wantOffsets(c, "src", []offset{{Partition: map[string]any{"filename": "a.txt"}}})

	delete(cfg, "offsets.storage.topic")
	c.Must(http.StatusOK, "PUT", "/connectors/src/config", cfg)
	wantOffsets(c, "src", []offset{filePos("a.txt", 10)})
}

// TestOffsetsOwnTopicCreatedAtStart: the connector's topic is created when
// the connector starts, even stopped: compacted, with the worker offsets
// topic's partitions. A topic Kafka refuses fails the connector with Kafka
// Connect's "Unable to create topic(s)" trace, and GET …/offsets answers
// 500 with it.
func TestOffsetsOwnTopicCreatedAtStart(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	own := c.Name("own")
	ownSource(c, "src", "a.txt", c.Name("data"), own, "STOPPED")
	adm := c.Admin()
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		td, err := adm.ListTopics(context.Background(), own)
		return err == nil && len(td[own].Partitions) > 0, "topic " + own + " not created"
	})
	td, _ := adm.ListTopics(context.Background(), own)
	if n := len(td[own].Partitions); n != 5 {
		t.Errorf("%s has %d partitions, want the worker offsets topic's 5", own, n)
	}
	rc, err := adm.DescribeTopicConfigs(context.Background(), own)
	if err != nil {
		t.Fatal(err)
	}
	policy := ""
	if r, err := rc.On(own, nil); err == nil {
		for _, cfg := range r.Configs {
			if cfg.Key == "cleanup.policy" && cfg.Value != nil {
				policy = *cfg.Value
			}
		}
	}
	if policy != "compact" {
		t.Errorf("%s cleanup.policy %q, want compact", own, policy)
	}

	// Kafka refuses a name that collides with another but for . and _.
	c.Produce(c.Name("x.y"), "v")
	ownSource(c, "bad", "a.txt", c.Name("data"), c.Name("x_y"), "")
	want := "Unable to create topic(s) '" + c.Name("x_y") + "'"
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		st, _ := c.Status("bad")
		return st.Connector.State == "FAILED" && strings.HasPrefix(st.Connector.Trace, want),
			"connector " + st.Connector.State + ": " + st.Connector.Trace
	})
	r := c.Do("GET", "/connectors/bad/offsets", nil)
	if r.Status != http.StatusInternalServerError || !strings.HasPrefix(r.Message(), want) {
		t.Fatalf("GET offsets of bad: %s, want 500 %q…", r, want)
	}
}

// TestOffsetsOwnTopicCreateRollback: a create with initial_offsets and a
// topic of its own that fails at its config write puts each topic back as
// it was: the worker topic's positions of a deleted connector of that name
// and the connector topic's own, each with its value.
func TestOffsetsOwnTopicCreateRollback(t *testing.T) {
	t.Parallel()
	faults := &coFaults{}
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, Faults: faults})
	own, worker := c.Name("own"), c.Prefix+"-offsets"
	// A connector of that name, deleted, left positions in both topics.
	ownSource(c, "src", "a.txt", c.Name("data"), own, "STOPPED")
	wantOffsets(c, "src", nil)
	c.ProduceRecords(worker, rawPosition("src", "a.txt", 5), rawPosition("src", "w.txt", 6))
	c.ProduceRecords(own, rawPosition("src", "a.txt", 7))
	c.Must(http.StatusNoContent, "DELETE", "/connectors/src", nil)

	faults.Fail(coStepWriteConfig)
	cfg := map[string]string{"connector.class": fileSourceClass, "file": "a.txt", "topic": c.Name("data"), "offsets.storage.topic": own}
	r := c.Do("POST", "/connectors", map[string]any{"name": "src", "config": cfg, "initial_state": "STOPPED",
		"initial_offsets": []offset{filePos("a.txt", 50), filePos("n.txt", 1)}})
	if r.Status != http.StatusInternalServerError || r.Message() != coRestored("src", coStepWriteConfig) {
		t.Fatalf("create: %s, want 500 %q", r, coRestored("src", coStepWriteConfig))
	}
	faults.Fail()
	wantRecord(t, c, worker, "src", "a.txt", `{"position":5}`)
	wantRecord(t, c, worker, "src", "w.txt", `{"position":6}`)
	wantRecord(t, c, own, "src", "a.txt", `{"position":7}`)
	for _, tp := range []string{own, worker} {
		wantRecord(t, c, tp, "src", "n.txt", "")
	}
}
