package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkautil"
)

// The broker's floor for a fenced offsets change (scenario 1): what any
// system must pay at least for PATCH …/offsets of 10 partitions of a
// one-task source connector, measured on the same broker with a bare
// franz-go client and nothing in between:
//
//	new transactional producer of the task's id ─► InitProducerID (fences the id's
//	previous owner) ─► one transaction of the 10 offset records ─► wait until a
//	read_committed reader sees them (the last stable offset passes them)
//
// The producer is a fresh one each time, as an offsets change's writer is.
// The same transaction through one reused producer (no fence, its
// connections warm) is measured beside it: what the fresh producer costs.

// floorPartitions is the partition count of the floor's offsets topic: that
// of an offsets topic made with Kafka Connect's and Sluice's defaults, so
// the 10 records spread over as many partitions (and markers) as theirs.
const floorPartitions = 25

// floor measures the broker's floor on topic.
type floor struct {
	brokers string
	topic   string
	adm     *kadm.Client
	n       int
	warm    *kgo.Client // the reused producer, made at its first use
}

// newFloor creates the floor's offsets topic.
func (b *bench) newFloor() (*floor, error) {
	topic := b.runID + "-floor-offsets"
	if err := b.kafka.createTopic(topic, floorPartitions); err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	return &floor{brokers: b.brokers, topic: topic, adm: b.kafka.adm}, nil
}

// producer is a transactional producer of the floor's id: no linger (the
// records are all there; franz-go's default 10 ms linger would be the
// largest part of the figure), and a 2 ms backoff on Kafka's
// CONCURRENT_TRANSACTIONS, which a transaction begun while the previous
// one's markers are written gets (franz-go waits 20 ms by default).
func (f *floor) producer(id string) (*kgo.Client, error) {
	return kgo.NewClient(append(kafkautil.ClientOpts(f.brokers, "bench-floor", nil),
		kgo.TransactionalID(f.topic+"-"+id), kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.ProducerLinger(0), kgo.ConcurrentTransactionsBackoff(2*time.Millisecond))...)
}

// op makes one fenced offsets change and returns how long it took.
func (f *floor) op(ctx context.Context) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	t0 := time.Now()
	cl, err := f.producer("task-0")
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	if _, _, err := cl.ProducerID(ctx); err != nil {
		return 0, fmt.Errorf("floor: init producer id: %w", err)
	}
	if err := f.transaction(ctx, cl); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

// warmOp is op's transaction through the reused producer.
func (f *floor) warmOp(ctx context.Context) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if f.warm == nil {
		cl, err := f.producer("warm")
		if err != nil {
			return 0, err
		}
		if _, _, err := cl.ProducerID(ctx); err != nil {
			cl.Close()
			return 0, fmt.Errorf("floor: init producer id: %w", err)
		}
		f.warm = cl
	}
	t0 := time.Now()
	if err := f.transaction(ctx, f.warm); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

// close closes the reused producer.
func (f *floor) close() {
	if f.warm != nil {
		f.warm.Close()
	}
}

// transaction writes the 10 offset records in one transaction and waits
// until read_committed readers see them.
func (f *floor) transaction(ctx context.Context, cl *kgo.Client) error {
	f.n++
	if err := cl.BeginTransaction(); err != nil {
		return fmt.Errorf("floor: begin: %w", err)
	}
	recs := make([]*kgo.Record, 10)
	for p := range recs {
		key, _ := json.Marshal([]any{"bench-floor", map[string]any{"filename": fmt.Sprintf("/bench/file-%d.txt", p)}})
		val, _ := json.Marshal(map[string]any{"position": f.n*10 + p})
		recs[p] = &kgo.Record{Topic: f.topic, Key: key, Value: val}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("floor: produce: %w", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("floor: commit: %w", err)
	}
	if err := kafkautil.WaitCommitted(ctx, f.adm, recs...); err != nil {
		return fmt.Errorf("floor: wait until readable: %w", err)
	}
	return nil
}
