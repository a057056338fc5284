package dlq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/dlq"
)

func cluster(t *testing.T) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// consume reads n records of topic from its start.
func consume(t *testing.T, seeds []string, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []*kgo.Record
	c := ctx(t)
	for len(got) < n {
		fs := cl.PollFetches(c)
		if err := c.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(got), n, err)
		}
		got = append(got, fs.Records()...)
	}
	return got
}

func admin(t *testing.T, seeds []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func headers(r *kgo.Record) map[string][]byte {
	m := map[string][]byte{}
	for _, h := range r.Headers {
		m[h.Key] = h.Value
	}
	return m
}

func TestFromConnectorConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]string
		ok    bool
		want  dlq.Config
		err   bool
	}{
		{name: "no topic", props: map[string]string{dlq.TopicConfig: "  "}},
		{name: "defaults", props: map[string]string{dlq.TopicConfig: " dead "}, ok: true,
			want: dlq.Config{Topic: "dead", ReplicationFactor: 3, Connector: "c", Task: 2}},
		{name: "set", props: map[string]string{dlq.TopicConfig: "dead", dlq.ReplicationFactorConfig: "1",
			dlq.ContextHeadersConfig: "TRUE"}, ok: true,
			want: dlq.Config{Topic: "dead", ReplicationFactor: 1, ContextHeaders: true, Connector: "c", Task: 2}},
		{name: "bad factor", props: map[string]string{dlq.TopicConfig: "dead", dlq.ReplicationFactorConfig: "x"}, err: true},
		{name: "bad boolean", props: map[string]string{dlq.TopicConfig: "dead", dlq.ContextHeadersConfig: "yes"}, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := dlq.FromConnectorConfig(tc.props, "c", 2)
			if (err != nil) != tc.err || ok != tc.ok || got != tc.want {
				t.Fatalf("got %+v, %v, %v; want %+v, %v, error %v", got, ok, err, tc.want, tc.ok, tc.err)
			}
		})
	}
}

// The letters land in a topic the writer created with one partition, as
// consumed (key, value, headers, timestamp), followed by Kafka Connect's
// context headers.
func TestWriteCreatesTheTopicAndKeepsTheRecord(t *testing.T) {
	seeds := cluster(t)
	cfg := dlq.Config{Topic: "dead", ReplicationFactor: 1, ContextHeaders: true, Connector: "files", Task: 3}
	w, err := dlq.Open(ctx(t), cfg, kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	ts := time.UnixMilli(1_700_000_000_123)
	msg := "Converting byte[] to Kafka Connect data failed due to serialization error: "
	letters := []connect.DeadLetter{
		{Record: connect.RawSinkRecord{Topic: "in", Partition: 4, Offset: 17, Timestamp: ts, TimestampType: 1,
			Key: []byte("k"), Value: []byte("{not json"), Headers: []connect.Header{{Key: "h", Value: []byte("v")}, {Key: "nil"}}},
			Stage: "VALUE_CONVERTER", Class: "org.apache.kafka.connect.json.JsonConverter",
			Exception: "org.apache.kafka.connect.errors.DataException", Message: &msg, Trace: "DataException\n\tat here"},
		{Record: connect.RawSinkRecord{Topic: "in", Partition: 0, Offset: 1, Value: []byte("v2")},
			Stage: "TRANSFORMATION", Class: "T", Exception: "java.lang.NullPointerException"},
	}
	if err := w.Write(ctx(t), letters); err != nil {
		t.Fatal(err)
	}

	adm := admin(t, seeds)
	topics, err := adm.ListTopics(ctx(t), "dead")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(topics["dead"].Partitions); got != 1 {
		t.Fatalf("the DLQ topic has %d partitions, want 1", got)
	}

	got := consume(t, seeds, "dead", 2)
	first := got[0]
	if string(first.Key) != "k" || string(first.Value) != "{not json" || !first.Timestamp.Equal(ts) {
		t.Fatalf("first letter %q=%q at %v, want the consumed record", first.Key, first.Value, first.Timestamp)
	}
	// The record's own headers first, unchanged, a null one included.
	if first.Headers[0].Key != "h" || string(first.Headers[0].Value) != "v" || first.Headers[1].Key != "nil" || first.Headers[1].Value != nil {
		t.Fatalf("the record's headers changed: %+v", first.Headers[:2])
	}
	h := headers(first)
	for key, want := range map[string]string{
		dlq.HeaderTopic: "in", dlq.HeaderPartition: "4", dlq.HeaderOffset: "17",
		dlq.HeaderConnectorName: "files", dlq.HeaderTaskID: "3", dlq.HeaderStage: "VALUE_CONVERTER",
		dlq.HeaderClassName:      "org.apache.kafka.connect.json.JsonConverter",
		dlq.HeaderExceptionClass: "org.apache.kafka.connect.errors.DataException",
		dlq.HeaderExceptionMsg:   msg, dlq.HeaderStackTrace: "DataException\n\tat here",
	} {
		if string(h[key]) != want {
			t.Errorf("header %s = %q, want %q", key, h[key], want)
		}
	}
	second := headers(got[1])
	if v, ok := second[dlq.HeaderExceptionMsg]; !ok || v != nil {
		t.Errorf("an error with no message: header %q present %v, want a null value", v, ok)
	}
	if _, ok := second[dlq.HeaderStackTrace]; ok {
		t.Errorf("no trace, yet a stack trace header")
	}
	if got[1].Timestamp.IsZero() {
		t.Errorf("a record with no timestamp gets the producer's time")
	}
}

// Without context headers a letter is the consumed record and nothing else.
func TestWriteWithoutContextHeaders(t *testing.T) {
	seeds := cluster(t)
	w, err := dlq.Open(ctx(t), dlq.Config{Topic: "dead", ReplicationFactor: 1}, kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	err = w.Write(ctx(t), []connect.DeadLetter{{Record: connect.RawSinkRecord{Topic: "in", Value: []byte("x"),
		Headers: []connect.Header{{Key: "h", Value: []byte("v")}}}, Stage: "VALUE_CONVERTER", Exception: "E"}})
	if err != nil {
		t.Fatal(err)
	}
	r := consume(t, seeds, "dead", 1)[0]
	if len(r.Headers) != 1 || r.Headers[0].Key != "h" || string(r.Value) != "x" {
		t.Fatalf("letter %q with headers %+v, want the record's only", r.Value, r.Headers)
	}
}

// An existing topic is used as it is; a replication factor the cluster
// cannot meet fails the open, as Kafka Connect fails the task's start.
func TestOpenUsesAnExistingTopicAndFailsOnABadFactor(t *testing.T) {
	seeds := cluster(t)
	adm := admin(t, seeds)
	if _, err := adm.CreateTopic(ctx(t), 3, 1, nil, "existing"); err != nil {
		t.Fatal(err)
	}
	w, err := dlq.Open(ctx(t), dlq.Config{Topic: "existing", ReplicationFactor: 3}, kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatalf("an existing topic needs no creation: %v", err)
	}
	w.Close()
	topics, err := adm.ListTopics(ctx(t), "existing")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(topics["existing"].Partitions); n != 3 {
		t.Fatalf("the existing topic has %d partitions, want its 3", n)
	}

	_, err = dlq.Open(ctx(t), dlq.Config{Topic: "new", ReplicationFactor: 3}, kgo.SeedBrokers(seeds...))
	if !errors.Is(err, kerr.InvalidReplicationFactor) {
		t.Fatalf("3 replicas on one broker: got %v, want INVALID_REPLICATION_FACTOR", err)
	}
}
