// Package kafkalog follows a compacted Kafka topic from its start and hands
// every committed record to an apply function, the way Kafka Connect's
// KafkaBasedLog backs its config, status and offset stores. It can wait until
// it has read to the end of the topic, or past a given record, which gives
// the stores read-your-writes.
//
//	Start ──► poll loop: fetch ─► apply(record) ─► next[p] = offset+1 ─► wake waiters
//	ReadToEnd: list last stable offsets ─► wait until next[p] ≥ LSO for every p
package kafkalog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fetchMaxWait bounds how long the broker holds a fetch of the log, and
// how stale the log's view of partition leaders may get.
const fetchMaxWait = 500 * time.Millisecond

// ApplyFunc receives each committed data record in partition order.
type ApplyFunc func(r *kgo.Record)

// Log follows one topic. Create with New, then Start.
type Log struct {
	topic  string
	client *kgo.Client
	admin  *kadm.Client
	apply  ApplyFunc

	mu      sync.Mutex
	changed chan struct{} // closed and replaced whenever next advances
	next    map[int32]int64
	err     error

	cancel context.CancelFunc
	done   chan struct{}
}

// New makes a Log for topic. opts are the base client options (seed brokers
// and the like); the Log adds its own consumer options. Records of aborted
// transactions are never applied (read_committed).
func New(topic string, apply ApplyFunc, opts ...kgo.Opt) (*Log, error) {
	all := append([]kgo.Opt{}, opts...)
	all = append(all,
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Control records let the position move past a transaction marker,
		// so "read to the end" terminates after a committed transaction.
		kgo.KeepControlRecords(),
		// A fetch the broker parks waiting for data returns after this at
		// the latest (Kafka's consumer default, which Kafka Connect's
		// KafkaBasedLog reads with; franz-go's is 5 s): a fetch parked
		// while a transaction's records were not yet committed must not
		// hold a read-to-end for seconds after its markers land.
		kgo.FetchMaxWait(fetchMaxWait),
		// A partition without a known leader (a topic created a moment
		// ago, a leader moving) is looked up again after this, not after
		// franz-go's 5 s: a read-to-end must not wait that out.
		kgo.MetadataMinAge(fetchMaxWait),
	)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("kafkalog %s: new client: %w", topic, err)
	}
	return &Log{
		topic:   topic,
		client:  cl,
		admin:   kadm.NewClient(cl),
		apply:   apply,
		changed: make(chan struct{}),
		next:    map[int32]int64{},
		done:    make(chan struct{}),
	}, nil
}

// Start begins following the topic in the background.
func (l *Log) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.run(ctx)
}

// Close stops following and closes the client.
func (l *Log) Close() {
	if l.cancel != nil {
		l.cancel()
		<-l.done
	}
	l.client.Close()
}

func (l *Log) run(ctx context.Context) {
	defer close(l.done)
	for {
		fetches := l.client.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		fetches.EachError(func(t string, p int32, err error) {
			if errors.Is(err, context.Canceled) {
				return
			}
			l.mu.Lock()
			l.err = fmt.Errorf("kafkalog %s[%d]: %w", t, p, err)
			l.mu.Unlock()
		})
		advanced := false
		fetches.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				l.apply(r)
			}
			l.mu.Lock()
			l.next[r.Partition] = r.Offset + 1
			l.mu.Unlock()
			advanced = true
		})
		if advanced {
			l.mu.Lock()
			close(l.changed)
			l.changed = make(chan struct{})
			l.mu.Unlock()
		}
	}
}

// ReadToEnd waits until every committed record that existed when it was
// called has been applied. A topic created a moment ago may not be known to
// every broker yet; such transient answers are retried until ctx ends.
func (l *Log) ReadToEnd(ctx context.Context) error {
	want, err := l.endOffsets(ctx)
	if err != nil {
		return err
	}
	return l.waitUntil(ctx, func(next map[int32]int64) bool {
		for p, end := range want {
			if end > 0 && next[p] < end {
				return false
			}
		}
		return true
	})
}

// endOffsets lists the last stable offset of every partition.
func (l *Log) endOffsets(ctx context.Context) (map[int32]int64, error) {
	backoff := 50 * time.Millisecond
	for {
		ends, err := l.admin.ListCommittedOffsets(ctx, l.topic)
		if err == nil {
			err = ends.Error()
		}
		if err == nil {
			want := map[int32]int64{}
			ends.Each(func(o kadm.ListedOffset) {
				if o.Topic == l.topic {
					want[o.Partition] = o.Offset
				}
			})
			return want, nil
		}
		if !kerr.IsRetriable(err) && !errors.Is(err, kerr.UnknownTopicOrPartition) {
			return nil, fmt.Errorf("kafkalog %s: list end offsets: %w", l.topic, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("kafkalog %s: list end offsets: %w (last error: %v)", l.topic, ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// WaitPast waits until the record at offset in partition has been consumed.
func (l *Log) WaitPast(ctx context.Context, partition int32, offset int64) error {
	return l.waitUntil(ctx, func(next map[int32]int64) bool { return next[partition] > offset })
}

func (l *Log) waitUntil(ctx context.Context, done func(map[int32]int64) bool) error {
	for {
		l.mu.Lock()
		ok := done(l.next)
		ch := l.changed
		l.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			l.mu.Lock()
			lastErr := l.err
			l.mu.Unlock()
			if lastErr != nil {
				return fmt.Errorf("kafkalog %s: not caught up (%w): %w", l.topic, ctx.Err(), lastErr)
			}
			return fmt.Errorf("kafkalog %s: not caught up: %w", l.topic, ctx.Err())
		}
	}
}
