package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/sluicetest"
)

// resetBase is the time of the first record the reset tests produce; the
// records of a partition follow one second apart.
var resetBase = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// produceTimed writes values to one partition of topic, the i-th with the
// timestamp resetBase + i seconds.
func produceTimed(c *sluicetest.Cluster, topic string, partition int32, values []string) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(append(sluicetest.ClientOpts(c.Brokers, "test-timed-producer"), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		c.T.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Value: []byte(v), Timestamp: resetBase.Add(time.Duration(i) * time.Second)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		c.T.Fatalf("produce to %s-%d: %v", topic, partition, err)
	}
}

// groupOffsets reads a group's committed offsets straight from the broker,
// as "topic-partition=offset" sorted: what a dry run must leave alone.
func groupOffsets(c *sluicetest.Cluster, group string) string {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.Admin().FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return ""
	}
	if err != nil {
		c.T.Fatalf("fetch offsets of %s: %v", group, err)
	}
	var out []string
	for _, o := range resp.Sorted() {
		if o.At >= 0 {
			out = append(out, fmt.Sprintf("%s-%d=%d", o.Topic, o.Partition, o.At))
		}
	}
	return strings.Join(out, ",")
}

// TestOffsetsResetToRules applies every reset rule to a stopped file sink
// over a two-partition topic whose records have known timestamps, then
// resumes it and checks exactly which records it writes. Each rule's dry
// run first answers the same changes and leaves the group as it was.
func TestOffsetsResetToRules(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("timed")
	createTopic(c, topic, 2)
	p0, p1 := values("a", 10), values("b", 5)
	produceTimed(c, topic, 0, p0)
	produceTimed(c, topic, 1, p1)

	cases := []struct {
		name    string
		before  []offset // PATCHed first
		rule    map[string]any
		want    []string // what the sink writes, in any order
		tailEnd bool     // the rule leaves it at the end: one more record is produced, and only it is written
	}{
		{name: "earliest", rule: map[string]any{"to": "earliest"}, want: concat(p0, p1)},
		{name: "latest", rule: map[string]any{"to": "latest"}, tailEnd: true},
		{name: "timestamp between records", rule: map[string]any{"to": "timestamp", "timestamp": "2026-11-30T10:00:03.500Z"},
			want: concat(p0[4:], p1[4:])},
		{name: "timestamp as epoch milliseconds", rule: map[string]any{"to": "timestamp", "timestamp": resetBase.Add(2 * time.Second).UnixMilli()},
			want: concat(p0[2:], p1[2:])},
		{name: "timestamp after the end", rule: map[string]any{"to": "timestamp", "timestamp": "2027-01-01T00:00:00Z"}, tailEnd: true},
		{name: "shift beyond the start", before: []offset{sinkPos(topic, 0, 5), sinkPos(topic, 1, 2)},
			rule: map[string]any{"shift_by": -1000}, want: concat(p0, p1)},
		{name: "shift within", before: []offset{sinkPos(topic, 0, 5), sinkPos(topic, 1, 2)},
			rule: map[string]any{"shift_by": 2}, want: concat(p0[7:], p1[4:])},
		{name: "shift beyond the end", before: []offset{sinkPos(topic, 0, 5), sinkPos(topic, 1, 2)},
			rule: map[string]any{"shift_by": 1000}, tailEnd: true},
		{name: "one partition to an offset", before: []offset{sinkPos(topic, 0, 8), sinkPos(topic, 1, 4)},
			rule: map[string]any{"to": "offset", "offset": 3, "topics": []string{topic}, "partitions": []int{1}},
			want: concat(p0[8:], p1[3:])},
	}
	// The records a tail case produced: every later case's sink reads them
	// too, as they follow the timed ones in the topic.
	var tails []string
	for i, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			c := on(c, t)
			snk := c.Name(fmt.Sprintf("rt%d", i))
			out := fmt.Sprintf("rt%d.txt", i)
			fileSink(c, snk, topic, out, "STOPPED")
			if tt.before != nil {
				patch(t, c, snk, body(tt.before...), http.StatusOK, msgAlterDefinite)
			}
			group := "connect-" + snk
			was := groupOffsets(c, group)
			dry := map[string]any{"dry_run": true}
			for k, v := range tt.rule {
				dry[k] = v
			}
			planned := c.Must(http.StatusOK, "POST", "/sluice/connectors/"+snk+"/offsets/reset", dry)
			if !strings.Contains(string(planned.Body), `"dry_run":true`) {
				t.Fatalf("dry run answered %s", planned.Body)
			}
			if now := groupOffsets(c, group); now != was {
				t.Fatalf("a dry run changed the group: %s, was %s", now, was)
			}
			done := c.Must(http.StatusOK, "POST", "/sluice/connectors/"+snk+"/offsets/reset", tt.rule)
			if strings.Replace(string(planned.Body), `"dry_run":true`, `"dry_run":false`, 1) != historyless(string(done.Body)) {
				t.Fatalf("the change differs from its dry run:\n dry  %s\n done %s", planned.Body, done.Body)
			}
			want := concat(tt.want, tails)
			c.Must(http.StatusAccepted, "PUT", "/connectors/"+snk+"/resume", nil)
			c.WaitState(snk, "RUNNING", 1, "RUNNING")
			if tt.tailEnd {
				// Nothing is written until a new record comes; then only it.
				tail := fmt.Sprintf("tail-%d", i)
				c.Produce(topic, tail)
				want, tails = []string{tail}, append(tails, tail)
			}
			sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
				got := slices.Sorted(slices.Values(fileLines(t, workPath(c, out))))
				w := slices.Sorted(slices.Values(want))
				return slices.Equal(got, w), fmt.Sprintf("sink wrote %v, want %v", got, w)
			})
			c.Must(http.StatusNoContent, "PUT", "/connectors/"+snk+"/stop", nil)
		})
	}
}

// historyless is a change's answer without its history id, to compare with
// its dry run.
func historyless(s string) string {
	i := strings.Index(s, `,"history_id"`)
	if i < 0 {
		return s
	}
	return s[:i] + "}\n"
}

// TestOffsetsResetToRefusals: the checks of a reset by rule, and that a
// source takes only earliest.
func TestOffsetsResetToRefusals(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("rr")
	createTopic(c, topic, 1)
	snk, src := c.Name("rrsnk"), c.Name("rrsrc")
	fileSink(c, snk, topic, "rr.txt", "")
	fileSource(c, src, "rr-in.txt", topic, "STOPPED")

	expect(t, c, "POST", "/sluice/connectors/"+snk+"/offsets/reset", map[string]any{"to": "earliest"}, http.StatusBadRequest, msgNotStopped(snk))
	expect(t, c, "POST", "/sluice/connectors/nope/offsets/reset", map[string]any{"to": "earliest"}, http.StatusNotFound, msgNotFound("nope"))
	c.Must(http.StatusNoContent, "PUT", "/connectors/"+snk+"/stop", nil)
	r := c.Do("POST", "/sluice/connectors/"+snk+"/offsets/reset", map[string]any{"to": "offset", "offset": 1, "topics": []string{"other"}})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Message(), "'other'") {
		t.Fatalf("a topic the sink does not consume: %s", r)
	}
	r = c.Do("POST", "/sluice/connectors/"+snk+"/offsets/reset", map[string]any{"shift_by": -1})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Message(), "no current committed offset") {
		t.Fatalf("a shift without committed offsets: %s", r)
	}
	r = c.Do("POST", "/sluice/connectors/"+src+"/offsets/reset", map[string]any{"to": "latest"})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Message(), "source connector") {
		t.Fatalf("latest on a source: %s", r)
	}
	patch(t, c, src, body(filePos("rr-in.txt", 3)), http.StatusOK, msgAlterDefinite)
	c.Must(http.StatusOK, "POST", "/sluice/connectors/"+src+"/offsets/reset", map[string]any{"to": "earliest"})
	wantOffsets(c, src, nil)
}

// TestOffsetsPreview: a preview answers what PATCH or DELETE would change,
// with their checks, and writes nothing.
func TestOffsetsPreview(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	src := c.Name("pv")
	fileSource(c, src, "pv.txt", c.Name("pv"), "STOPPED")
	patch(t, c, src, body(filePos("pv.txt", 4)), http.StatusOK, msgAlterDefinite)
	offsetsTopic := c.Prefix + "-offsets"
	records := len(c.ReadTopic(offsetsTopic))

	r := c.Must(http.StatusOK, "POST", "/sluice/connectors/"+src+"/offsets/preview", body(filePos("pv.txt", 9), filePos("new.txt", 1)))
	want := `{"dry_run":true,"changes":[{"partition":{"filename":"pv.txt"},"from":{"position":4},"to":{"position":9}},{"partition":{"filename":"new.txt"},"from":null,"to":{"position":1}}]}`
	if !sameJSON(r.Body, want) {
		t.Fatalf("preview of a PATCH: %s\nwant %s", r.Body, want)
	}
	r = c.Must(http.StatusOK, "POST", "/sluice/connectors/"+src+"/offsets/preview", map[string]any{"reset": true})
	if want := `{"dry_run":true,"changes":[{"partition":{"filename":"pv.txt"},"from":{"position":4},"to":null}]}`; !sameJSON(r.Body, want) {
		t.Fatalf("preview of a DELETE: %s\nwant %s", r.Body, want)
	}
	wantOffsets(c, src, []offset{filePos("pv.txt", 4)})
	if n := len(c.ReadTopic(offsetsTopic)); n != records {
		t.Fatalf("a preview wrote to the offsets topic: %d records, were %d", n, records)
	}
	if got := operations(history(c, src)); got != "alter" {
		t.Fatalf("a preview is in the history: %s", got)
	}
	// Kafka Connect's endpoints take no dry run: a script that sends one to
	// a real Kafka Connect gets a real change, and so it does here.
	expect(t, c, "PATCH", "/connectors/"+src+"/offsets?dry_run=true", body(filePos("pv.txt", 6)), http.StatusOK, msgAlterDefinite)
	wantOffsets(c, src, []offset{filePos("pv.txt", 6)})
	expect(t, c, "DELETE", "/connectors/"+src+"/offsets?dry_run=true&reset=false", nil, http.StatusOK, msgResetDefinite)
	wantOffsets(c, src, nil)
	c.Must(http.StatusAccepted, "PUT", "/connectors/"+src+"/resume", nil)
	expect(t, c, "POST", "/sluice/connectors/"+src+"/offsets/preview", map[string]any{"reset": true}, http.StatusBadRequest, msgNotStopped(src))
	expect(t, c, "POST", "/sluice/connectors/"+src+"/offsets/preview", map[string]any{"offsets": []any{}}, http.StatusBadRequest, msgOffsetsMissing)
}
