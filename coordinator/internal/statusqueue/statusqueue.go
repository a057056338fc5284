// Package statusqueue is the leader's one writer of the status topic: it
// takes status records without waiting and writes them in batches, so
// that a slow broker slows statuses down, never an agent's heartbeat.
package statusqueue

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/records"
)

// Queue is the leader's one writer of the status topic. Heartbeats,
// reports and reconcile passes put records in memory and go on at once; a
// single loop writes what is queued in batches, one transaction each. So a
// slow or stalled broker slows down status updates, never a heartbeat: no
// agent loses its lease because Kafka was slow to answer.
//
//	Enqueue / Write ─► pending (latest record per key) ─► Run: one batch, one txn
//	                                                         │ fails: kept, retried with backoff
//	                                                         ▼ ok: Write callers released
//
// Records of one key coalesce: only the latest enqueued value is written,
// which is all a compacted status topic keeps anyway. The queue is bounded
// by MaxKeys distinct keys; beyond that new keys are dropped (and counted),
// which loses nothing for good, since every status is recomputed from the
// agents' next heartbeat and the next reconcile pass.
type Queue struct {
	write func(context.Context, ...records.Record) error
	opts  Options

	mu      sync.Mutex
	pending map[string]queued
	seq     uint64
	waiters []waiter
	dropped int
	stopped bool
	kick    chan struct{}
}

// Options tune a Queue; the zero value is usable.
type Options struct {
	// MaxKeys bounds the distinct keys queued (default 100,000).
	MaxKeys int
	// MaxBatch bounds the records of one transaction (default 2,000).
	MaxBatch int
	Logger   *slog.Logger
	// Faults is asked at faults.StatusWrite before each batch is written
	// (nil: never); a fault fails that write. Tests block in it to stand
	// for a stalled broker.
	Faults faults.Injector
}

type queued struct {
	rec records.Record
	seq uint64
}

type waiter struct {
	seq  uint64
	done chan error
}

// New returns a queue that writes through write (the status
// store's transactional Write); call Run to start writing.
func New(write func(context.Context, ...records.Record) error, opts Options) *Queue {
	if opts.MaxKeys <= 0 {
		opts.MaxKeys = 100_000
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 2_000
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Queue{write: write, opts: opts, pending: map[string]queued{}, kick: make(chan struct{}, 1)}
}

// Enqueue queues recs and returns at once.
func (q *Queue) Enqueue(recs ...records.Record) {
	if len(recs) == 0 {
		return
	}
	q.mu.Lock()
	q.add(recs, false)
	q.mu.Unlock()
	q.signal()
}

// Write queues recs and waits until they (or newer records of their keys)
// are written, or ctx ends. A REST call that must answer with the status
// written uses it; it shares the queue's order with every other status.
func (q *Queue) Write(ctx context.Context, recs ...records.Record) error {
	if len(recs) == 0 {
		return nil
	}
	done := make(chan error, 1)
	q.mu.Lock()
	if q.stopped {
		// Its leadership is over: nothing would ever write them.
		q.mu.Unlock()
		return store.ErrNotLeader
	}
	seq := q.add(recs, true)
	q.waiters = append(q.waiters, waiter{seq: seq, done: done})
	q.mu.Unlock()
	q.signal()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// add queues recs under q.mu and returns the sequence number of the last.
func (q *Queue) add(recs []records.Record, force bool) uint64 {
	for _, r := range recs {
		if _, ok := q.pending[r.Key]; !ok && !force && len(q.pending) >= q.opts.MaxKeys {
			q.dropped++
			continue
		}
		q.seq++
		q.pending[r.Key] = queued{rec: r, seq: q.seq}
	}
	return q.seq
}

func (q *Queue) signal() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// Pending returns the record queued for key and not yet written, so a
// decision made before the write lands sees its own latest word.
func (q *Queue) Pending(key string) (records.Record, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p, ok := q.pending[key]
	return p.rec, ok
}

// Len returns how many keys are queued.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

// Run writes queued records until ctx ends. A failed batch stays queued
// (unless newer records replaced it) and is retried with backoff.
func (q *Queue) Run(ctx context.Context) {
	backoff := 50 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			q.release(ctx.Err())
			return
		case <-q.kick:
		}
		for ctx.Err() == nil {
			batch, last := q.next()
			if len(batch) == 0 {
				break
			}
			err := q.flush(ctx, batch)
			q.finish(batch, last, err)
			if err == nil {
				backoff = 50 * time.Millisecond
				continue
			}
			if ctx.Err() == nil {
				q.opts.Logger.Warn("status write failed; retrying", "records", len(batch), "err", err, "backoff", backoff)
			}
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
		}
	}
}

// next takes the oldest queued records, up to a batch.
func (q *Queue) next() ([]queued, uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dropped > 0 {
		q.opts.Logger.Warn("status queue full; dropped status records (the next heartbeat and reconcile pass write them again)", "dropped", q.dropped, "max_keys", q.opts.MaxKeys)
		q.dropped = 0
	}
	batch := make([]queued, 0, min(len(q.pending), q.opts.MaxBatch))
	for _, p := range q.pending {
		batch = append(batch, p)
	}
	sort.Slice(batch, func(i, j int) bool { return batch[i].seq < batch[j].seq })
	if len(batch) > q.opts.MaxBatch {
		batch = batch[:q.opts.MaxBatch]
	}
	var last uint64
	if len(batch) > 0 {
		last = batch[len(batch)-1].seq
	}
	return batch, last
}

func (q *Queue) flush(ctx context.Context, batch []queued) error {
	if err := faults.Check(ctx, q.opts.Faults, faults.StatusWrite, nil); err != nil {
		return err
	}
	recs := make([]records.Record, len(batch))
	for i, b := range batch {
		recs[i] = b.rec
	}
	return q.write(ctx, recs...)
}

// finish removes a written batch (keeping keys re-queued meanwhile) and
// answers the waiters it covers: every record queued at or before last has
// been written, or superseded by one that was.
func (q *Queue) finish(batch []queued, last uint64, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err == nil {
		for _, b := range batch {
			if p, ok := q.pending[b.rec.Key]; ok && p.seq == b.seq {
				delete(q.pending, b.rec.Key)
			}
		}
	}
	kept := q.waiters[:0]
	for _, w := range q.waiters {
		if w.seq <= last {
			w.done <- err
			continue
		}
		kept = append(kept, w)
	}
	q.waiters = kept
}

// release answers every waiter when the queue stops.
func (q *Queue) release(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	for _, w := range q.waiters {
		w.done <- err
	}
	q.waiters = nil
}
