package sluicetest

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
	var out []Record
	for _, r := range ReadLog(c.T, c.Brokers, "test-reader", topic, true) {
		if !r.Attrs.IsControl() {
			out = append(out, Record{Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value})
		}
	}
	return out
}

// ReadLog reads every record of topic up to its end as it is now, control
// records (transaction markers) included, in partition and offset order.
// committed reads read_committed up to the last stable offset; otherwise
// read_uncommitted up to the high watermark, so records of aborted or still
// open transactions show too.
func ReadLog(t interface {
	Helper()
	Fatal(...any)
	Fatalf(string, ...any)
}, brokers, clientID, topic string, committed bool) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	isolation := kgo.ReadUncommitted()
	if committed {
		isolation = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(append(ClientOpts(brokers, clientID),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(isolation),
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	list := adm.ListEndOffsets
	if committed {
		list = adm.ListCommittedOffsets
	}
	ends, err := list(ctx, topic)
	if err != nil {
		t.Fatalf("list end offsets of %s: %v", topic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	byPart := map[int32][]*kgo.Record{}
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
			t.Fatalf("reading %s timed out", topic)
		}
		fs.EachRecord(func(r *kgo.Record) {
			next[r.Partition] = r.Offset + 1
			byPart[r.Partition] = append(byPart[r.Partition], r)
		})
	}
	var out []*kgo.Record
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
	if err := kafkautil.EnsureTopicDefaults(ctx, c.Admin(), topic); err != nil {
		c.T.Fatal(err)
	}
	recs := make([]Record, len(values))
	for i, v := range values {
		recs[i] = Record{Value: []byte(v)}
	}
	c.ProduceRecords(topic, recs...)
}

// ProduceRecords writes the keys and values of recs to topic, which must
// exist; a nil Value is a tombstone.
func (c *Cluster) ProduceRecords(topic string, recs ...Record) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(append(ClientOpts(c.Brokers, "test-producer"), kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		c.T.Fatal(err)
	}
	defer cl.Close()
	krecs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krecs[i] = &kgo.Record{Key: r.Key, Value: r.Value}
	}
	if err := cl.ProduceSync(ctx, krecs...).FirstErr(); err != nil {
		c.T.Fatalf("produce to %s: %v", topic, err)
	}
}

// Admin returns an admin client for the cluster's broker, closed at cleanup.
func (c *Cluster) Admin() *kadm.Client {
	cl, err := kgo.NewClient(ClientOpts(c.Brokers, "test-admin")...)
	if err != nil {
		c.T.Fatal(err)
	}
	c.T.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}
