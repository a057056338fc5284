package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/sluicetest"
)

const smt = "org.apache.kafka.connect.transforms."

// waitLog waits until topic holds n data records (read_committed) and
// returns them, headers included.
func waitLog(c *sluicetest.Cluster, topic string, n int) []*kgo.Record {
	c.T.Helper()
	var out []*kgo.Record
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		out = out[:0]
		for _, r := range sluicetest.ReadLog(c.T, c.Brokers, "smt-reader", topic, true) {
			if !r.Attrs.IsControl() {
				out = append(out, r)
			}
		}
		return len(out) >= n, fmt.Sprintf("%d of %d records in %s", len(out), n, topic)
	})
	return out
}

// TestSourceTransformChain runs a file source's lines through a chain of
// Kafka's transformations, in Go: the lines become {"line": …, "origin":
// "file"} (HoistField, InsertField), go to a renamed topic (RegexRouter)
// with a header (InsertHeader); a Filter whose predicate never holds drops
// nothing. A Filter whose predicate matches the topic drops every line,
// and the position still moves past them.
func TestSourceTransformChain(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	in := workPath(c, "smt-in.txt")
	writeLines(t, in, []string{"alpha", "# comment", "beta"})
	topic := c.Name("smt-raw")
	routed := c.Name("smt-out")
	name := c.Name("smt-src")
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": name, "config": map[string]string{
		"connector.class": fileSourceClass, "file": "smt-in.txt", "topic": topic,
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
		"transforms":                     "hoist,insert,route,hdr,skip",
		"transforms.hoist.type":          smt + "HoistField$Value",
		"transforms.hoist.field":         "line",
		"transforms.insert.type":         smt + "InsertField$Value",
		"transforms.insert.static.field": "origin", "transforms.insert.static.value": "file",
		"transforms.route.type":  smt + "RegexRouter",
		"transforms.route.regex": "(.*)-smt-raw", "transforms.route.replacement": "$1-smt-out",
		"transforms.hdr.type":   smt + "InsertHeader",
		"transforms.hdr.header": "via", "transforms.hdr.value.literal": "sluice",
		"transforms.skip.type":      smt + "Filter",
		"transforms.skip.predicate": "comment",
		"predicates":                "comment",
		"predicates.comment.type":   smt + "predicates.HasHeaderKey",
		"predicates.comment.name":   "never-there",
	}})
	recs := waitLog(c, routed, 3)
	var got []string
	for _, r := range recs {
		if len(r.Headers) != 1 || r.Headers[0].Key != "via" || string(r.Headers[0].Value) != "sluice" {
			t.Errorf("headers of %s: %+v", r.Value, r.Headers)
		}
		got = append(got, string(r.Value))
	}
	want := []string{`{"line":"alpha","origin":"file"}`, `{"line":"# comment","origin":"file"}`, `{"line":"beta","origin":"file"}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(c.ReadTopic(topic)); n != 0 {
		t.Errorf("%d records in the topic the router renamed away from", n)
	}

	dropName := c.Name("smt-drop")
	dropTopic := c.Name("smt-drop")
	writeLines(t, workPath(c, "smt-drop.txt"), []string{"one", "two", "three"})
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": dropName, "config": map[string]string{
		"connector.class": fileSourceClass, "file": "smt-drop.txt", "topic": dropTopic,
		"transforms": "drop", "transforms.drop.type": smt + "Filter", "transforms.drop.predicate": "mine",
		"predicates": "mine", "predicates.mine.type": smt + "predicates.TopicNameMatches", "predicates.mine.pattern": ".*-smt-drop",
	}})
	waitOffsets(c, dropName, []offset{filePos("smt-drop.txt", bytesOf([]string{"one", "two", "three"}))})
	if n := len(c.ReadTopic(dropTopic)); n != 0 {
		t.Errorf("the filter let %d records through", n)
	}

	// The headers transformations make are written by the connector's
	// header converter: JsonConverter here, with the type Kafka's
	// Values.parseString infers for the literal 42 (int8).
	hdrName, hdrTopic := c.Name("smt-hdr"), c.Name("smt-hdr")
	writeLines(t, workPath(c, "smt-hdr.txt"), []string{"x"})
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": hdrName, "config": map[string]string{
		"connector.class": fileSourceClass, "file": "smt-hdr.txt", "topic": hdrTopic,
		"header.converter": "org.apache.kafka.connect.json.JsonConverter",
		"transforms":       "h", "transforms.h.type": smt + "InsertHeader", "transforms.h.header": "n", "transforms.h.value.literal": "42",
	}})
	hr := waitLog(c, hdrTopic, 1)
	var env map[string]any
	if len(hr[0].Headers) != 1 || json.Unmarshal(hr[0].Headers[0].Value, &env) != nil ||
		fmt.Sprint(env) != "map[payload:42 schema:map[optional:false type:int8]]" {
		t.Errorf("header written by JsonConverter: %+v (%v)", hr[0].Headers, env)
	}
}

// TestSinkToleranceAndDeadLetters: a sink with errors.tolerance=all and a
// dead letter queue skips records its JsonConverter cannot read, writes
// them to the queue with Kafka Connect's context headers, and puts the good
// ones, transformed (ExtractField), into its file.
func TestSinkToleranceAndDeadLetters(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic, dlq := c.Name("tol-in"), c.Name("tol-dlq")
	createTopic(c, topic, 1)
	c.Produce(topic, `{"line":"first"}`, `not json`, `{"line":"second"}`)
	name := c.Name("tol-sink")
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": name, "config": map[string]string{
		"connector.class": fileSinkClass, "file": "tol-out.txt", "topics": topic,
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
		"transforms": "pick", "transforms.pick.type": smt + "ExtractField$Value", "transforms.pick.field": "line",
		"errors.tolerance": "all", "errors.log.enable": "true",
		"errors.deadletterqueue.topic.name": dlq, "errors.deadletterqueue.topic.replication.factor": "1",
		"errors.deadletterqueue.context.headers.enable": "true",
	}})
	waitFile(t, workPath(c, "tol-out.txt"), []string{"first", "second"})
	dead := waitLog(c, dlq, 1)
	if len(dead) != 1 || string(dead[0].Value) != "not json" {
		t.Fatalf("dead letters: %d, first %q", len(dead), dead[0].Value)
	}
	hs := map[string]string{}
	for _, h := range dead[0].Headers {
		hs[h.Key] = string(h.Value)
	}
	for k, want := range map[string]string{
		"__connect.errors.topic": topic, "__connect.errors.partition": "0", "__connect.errors.offset": "1",
		"__connect.errors.connector.name": name, "__connect.errors.task.id": "0", "__connect.errors.stage": "VALUE_CONVERTER",
		"__connect.errors.class.name": "org.apache.kafka.connect.json.JsonConverter",
	} {
		if hs[k] != want {
			t.Errorf("header %s = %q, want %q (all: %v)", k, hs[k], want, hs)
		}
	}
	c.WaitState(name, "RUNNING", 1, "RUNNING")

	// Without tolerance the same record fails the task, naming the stage.
	strict := c.Name("tol-strict")
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": strict, "config": map[string]string{
		"connector.class": fileSinkClass, "file": "tol-strict.txt", "topics": topic,
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
	}})
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		var st struct {
			Tasks []struct {
				State string `json:"state"`
				Trace string `json:"trace"`
			} `json:"tasks"`
		}
		r := c.Do("GET", "/connectors/"+strict+"/status", nil)
		_ = json.Unmarshal(r.Body, &st)
		return len(st.Tasks) == 1 && st.Tasks[0].State == "FAILED" &&
			strings.Contains(st.Tasks[0].Trace, "Tolerance exceeded in error handler") &&
			strings.Contains(st.Tasks[0].Trace, "VALUE_CONVERTER"), string(r.Body)
	})
}
