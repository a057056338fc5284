package harness

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkautil"
)

// Record is a record read from a topic.
type Record struct {
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
}

// ReadTopic reads every committed record of topic that exists now, in
// partition and offset order (read_committed).
func (c *Cluster) ReadTopic(topic string) []Record {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admCl, err := kgo.NewClient(kafkautil.ClientOpts(c.Brokers, "test-reader")...)
	if err != nil {
		c.T.Fatal(err)
	}
	defer admCl.Close()
	ends, err := kadm.NewClient(admCl).ListCommittedOffsets(ctx, topic)
	if err != nil {
		c.T.Fatalf("list offsets of %s: %v", topic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	if len(want) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(append(kafkautil.ClientOpts(c.Brokers, "test-reader"),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		c.T.Fatal(err)
	}
	defer cl.Close()
	byPart := map[int32][]Record{}
	next := map[int32]int64{}
	done := func() bool {
		for p, end := range want {
			if next[p] < end {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			c.T.Fatalf("reading %s timed out", topic)
		}
		fs.EachRecord(func(r *kgo.Record) {
			next[r.Partition] = r.Offset + 1
			if !r.Attrs.IsControl() {
				byPart[r.Partition] = append(byPart[r.Partition], Record{Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value})
			}
		})
	}
	var out []Record
	for p := int32(0); len(byPart) > 0; p++ {
		out = append(out, byPart[p]...)
		delete(byPart, p)
	}
	return out
}

// Produce writes values to topic (creating it with the broker defaults).
func (c *Cluster) Produce(topic string, values ...string) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(append(kafkautil.ClientOpts(c.Brokers, "test-producer"), kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		c.T.Fatal(err)
	}
	defer cl.Close()
	if err := kafkautil.EnsureTopicDefaults(ctx, kadm.NewClient(cl), topic); err != nil {
		c.T.Fatal(err)
	}
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Value: []byte(v)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		c.T.Fatalf("produce to %s: %v", topic, err)
	}
}

// Admin returns an admin client for the cluster's broker, closed at cleanup.
func (c *Cluster) Admin() *kadm.Client {
	cl, err := kgo.NewClient(kafkautil.ClientOpts(c.Brokers, "test-admin")...)
	if err != nil {
		c.T.Fatal(err)
	}
	c.T.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}
