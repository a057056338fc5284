// Package liveness keeps an agent heard by the leader over Kafka as well as
// NATS, and says when the agent may run its tasks (wire.LivenessBeat).
//
//	every beat:  produce {group, agent, term, sent} to the liveness topic
//	acked:       lastAck = max(lastAck, sent)
//	MayRun:      now − max(last NATS heartbeat acked, lastAck) ≤ ¾ lease
//
// The leader takes an agent for lost only when it has heard it on neither
// path for a whole lease, and every time it has heard it is after the
// agent sent what it heard, so an agent that may no longer run stops
// before anything of its can have been started elsewhere. An agent cut off
// from NATS alone keeps running; so does every agent when NATS is down for
// everyone, since then no leader can move a task.
package liveness

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/wire"
)

// deliveryTimeout bounds how long a beat may wait to be written: one
// written late still says only when it was sent.
const deliveryTimeout = 2 * time.Second

// Beater writes an agent's liveness beats.
type Beater struct {
	group, agent string
	opts         []kgo.Opt
	log          *slog.Logger
	lastAck      atomic.Pointer[time.Time]

	mu      sync.Mutex
	term    int64
	started bool
	cancel  context.CancelFunc
	done    chan struct{}
}

// New makes a beater for agent of group, whose Kafka client is made with
// opts when Start is first called.
func New(group, agent string, opts []kgo.Opt, log *slog.Logger) *Beater {
	if log == nil {
		log = slog.Default()
	}
	return &Beater{group: group, agent: agent, opts: opts, log: log}
}

// Start begins beating to topic every interval, once (later calls only
// update the term the beats carry). The leader names the topic and the
// interval when the agent registers.
func (b *Beater) Start(topic string, every time.Duration, term int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.term = term
	if b.started || topic == "" || every <= 0 {
		return nil
	}
	cl, err := kgo.NewClient(append(append([]kgo.Opt(nil), b.opts...),
		kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0), kgo.RecordDeliveryTimeout(deliveryTimeout),
		kgo.MaxBufferedRecords(64))...)
	if err != nil {
		return fmt.Errorf("liveness beats to %s: %w", topic, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.started, b.cancel, b.done = true, cancel, make(chan struct{})
	go b.run(ctx, cl, topic, every)
	return nil
}

func (b *Beater) run(ctx context.Context, cl *kgo.Client, topic string, every time.Duration) {
	defer close(b.done)
	defer cl.Close()
	tick := time.NewTicker(every)
	defer tick.Stop()
	var failing atomic.Bool
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		b.mu.Lock()
		term := b.term
		b.mu.Unlock()
		sent := time.Now()
		rec := &kgo.Record{Topic: topic, Key: []byte(b.agent), Value: wire.EncodeLivenessBeat(b.group, b.agent, term, sent)}
		cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
			if err != nil {
				if !failing.Swap(true) && ctx.Err() == nil {
					b.log.Debug("liveness beat not written", "topic", topic, "err", err)
				}
				return
			}
			failing.Store(false)
			for {
				prev := b.lastAck.Load()
				if prev != nil && !sent.After(*prev) {
					return
				}
				if b.lastAck.CompareAndSwap(prev, &sent) {
					return
				}
			}
		})
	}
}

// LastAck is when the newest beat Kafka acknowledged was sent; false
// before the first.
func (b *Beater) LastAck() (time.Time, bool) {
	if t := b.lastAck.Load(); t != nil {
		return *t, true
	}
	return time.Time{}, false
}

// Stop stops beating.
func (b *Beater) Stop() {
	b.mu.Lock()
	cancel, done := b.cancel, b.done
	b.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// MayRun reports whether an agent whose leader granted it lease, and which
// was last heard at heard (the newest of its acknowledged NATS heartbeat
// and Kafka beat, by the send time), may still run tasks at now: a fenced
// agent stops them, since the leader may soon start them elsewhere. A zero
// lease (never registered) holds no task a leader placed: it may run.
func MayRun(heard time.Time, lease time.Duration, now time.Time) bool {
	if lease <= 0 {
		return true
	}
	return now.Sub(heard) <= FenceAfter(lease)
}

// FenceAfter is how long an agent heard on neither path keeps its tasks:
// three quarters of its lease, leaving a quarter for a batch under way to
// finish before the leader may start its tasks elsewhere.
func FenceAfter(lease time.Duration) time.Duration { return lease * 3 / 4 }
