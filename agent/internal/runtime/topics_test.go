package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
	"github.com/sluice-io/sluice/sluicetest/wait"
)

// reserved is what a leader sends with an assignment in these tests.
var reserved = map[string]string{"cfgs": "Sluice's config topic"}

// TestSourceRecordForAReservedTopicFailsTheTask: a record a task (or its
// transformations) routes to a reserved topic fails the task under
// errors.tolerance=none, with a trace naming the topic — whether the
// leader listed it or it is the worker's own offsets topic — and nothing
// reaches the topic.
func TestSourceRecordForAReservedTopicFailsTheTask(t *testing.T) {
	for topic, what := range map[string]string{"cfgs": "Sluice's config topic", "offsets": "Sluice's offsets topic", "__consumer_offsets": "Kafka's consumer offsets topic"} {
		t.Run(topic, func(t *testing.T) {
			h := hostTasks{source: &hostSource{topic: topic}, failed: make(chan string, 1)}
			w, cl := newHostWorker(t, h, "cfgs")
			id := api.TaskID{Connector: "forger"}
			conn := map[string]string{"connector.class": "io.example.JavaSource", "kind": "source"}
			w.Assign(context.Background(), 1, []wire.TaskAssignment{{ID: id, Generation: 1, ConnectorConfig: conn, TaskConfig: map[string]string{}, ReservedTopics: reserved}})
			select {
			case trace := <-h.failed:
				want := fmt.Sprintf("topic '%s' is reserved (%s): no connector may produce to it or consume from it", topic, what)
				if !strings.Contains(trace, want) || !strings.Contains(trace, "Tolerance exceeded in error handler") {
					t.Errorf("trace %q, want it to say %q", trace, want)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("the task did not fail")
			}
			if topic != "__consumer_offsets" {
				if n := countRecords(t, cl, topic); n != 0 {
					t.Errorf("%d record(s) reached %s", n, topic)
				}
			}
		})
	}
}

// TestSourceRecordForAReservedTopicSkippedUnderToleranceAll: with
// errors.tolerance=all the record is skipped, the task keeps running and
// its position moves past the record, as for any failed record.
func TestSourceRecordForAReservedTopicSkippedUnderToleranceAll(t *testing.T) {
	src := &hostSource{topic: "cfgs"}
	w, cl := newHostWorker(t, hostTasks{source: src}, "cfgs")
	id := api.TaskID{Connector: "forger"}
	conn := map[string]string{"connector.class": "io.example.JavaSource", "kind": "source", "errors.tolerance": "all"}
	w.Assign(context.Background(), 1, []wire.TaskAssignment{{ID: id, Generation: 1, ConnectorConfig: conn, TaskConfig: map[string]string{}, ReservedTopics: reserved}})
	eventually(t, "offsets committed", func() (bool, string) {
		_, commits, _ := src.state()
		return commits > 0, fmt.Sprintf("commits %d", commits)
	})
	w.Revoke(context.Background(), 1, 1, []api.TaskID{id})
	again := &hostSource{polled: true}
	w.cfg.Host = hostTasks{source: again}
	w.Assign(context.Background(), 1, []wire.TaskAssignment{{ID: id, Generation: 2, ConnectorConfig: conn, TaskConfig: map[string]string{}, ReservedTopics: reserved}})
	eventually(t, "the restarted task read the position past the skipped records", func() (bool, string) {
		_, _, o := again.state()
		return o != nil && fmt.Sprint(o["pos"]) == "1", fmt.Sprint(o)
	})
	if acked, _, _ := src.state(); len(acked) != 0 {
		t.Errorf("records acknowledged as written: %v", acked)
	}
	if n := countRecords(t, cl, "cfgs"); n != 0 {
		t.Errorf("%d record(s) reached the reserved topic", n)
	}
}

// TestSinkPatternNeverSubscribesAReservedTopic: a sink's topics.regex that
// matches reserved topics (".*") gets the other topics' records only.
func TestSinkPatternNeverSubscribesAReservedTopic(t *testing.T) {
	sink := &hostSink{}
	w, cl := newHostWorker(t, hostTasks{sink: sink}, "cfgs", "data")
	ctx := context.Background()
	for topic, v := range map[string]string{"cfgs": "secret", "data": "ok", "offsets": "position"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	id := api.TaskID{Connector: "copier"}
	conn := map[string]string{"connector.class": "io.example.JavaSink", "kind": "sink", "topics.regex": ".*"}
	w.Assign(ctx, 1, []wire.TaskAssignment{{ID: id, Generation: 1, ConnectorConfig: conn, TaskConfig: map[string]string{}, ReservedTopics: reserved}})
	eventually(t, "data consumed", func() (bool, string) {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return len(sink.put) > 0, fmt.Sprint(sink.put)
	})
	// A reserved topic would be delivered within this window too.
	wait.Consistently(t, 300*time.Millisecond, func() (bool, string) {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		got := strings.Join(sink.put, ",")
		return got == "0:ok:1", "delivered " + got + ", want 0:ok:1 alone"
	})
	w.Revoke(ctx, 1, 1, []api.TaskID{id})
	sink.mu.Lock()
	got := strings.Join(sink.put, ",")
	sink.mu.Unlock()
	if got != "0:ok:1" {
		t.Errorf("the sink got %s, want only the data topic's record", got)
	}
}

// TestSinkListingAReservedTopicFails: a sink whose topics name a reserved
// topic fails at start with a trace naming it, and consumes nothing.
func TestSinkListingAReservedTopicFails(t *testing.T) {
	h := hostTasks{sink: &hostSink{}, failed: make(chan string, 1)}
	w, _ := newHostWorker(t, h, "cfgs", "data")
	ctx := context.Background()
	conn := map[string]string{"connector.class": "io.example.JavaSink", "kind": "sink", "topics": "data,cfgs"}
	w.Assign(ctx, 1, []wire.TaskAssignment{{ID: api.TaskID{Connector: "lister"}, Generation: 3, ConnectorConfig: conn, TaskConfig: map[string]string{}, ReservedTopics: reserved}})
	select {
	case trace := <-h.failed:
		if want := "topics: topic 'cfgs' is reserved (Sluice's config topic)"; !strings.Contains(trace, want) {
			t.Errorf("trace %q, want it to say %q", trace, want)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("a sink listing a reserved topic did not fail")
	}
}

// countRecords counts what topic holds, read from its start.
func countRecords(t *testing.T, cl *kgo.Client, topic string) int64 {
	t.Helper()
	offs, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	offs.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}
