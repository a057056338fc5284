package kafkautil

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

// ErrFenced is returned (wrapped) once a TxnWriter has been fenced. A fenced
// writer never writes again.
var ErrFenced = errors.New("transactional writer fenced by a newer producer")

// ErrWriterBroken is returned (wrapped) once a write was interrupted (its
// context ended) mid-transaction — the transaction's outcome is unknown, and
// an abort could disturb a newer owner of the id — or once the broker
// rejected the producer's sequence numbers. The writer is not used again.
// Open a new one.
var ErrWriterBroken = errors.New("transactional writer unusable: interrupted mid-transaction, or its producer state lost")

// txnRetryBackoff is the first wait before retrying a transaction that
// Kafka says is still completing (franz-go grows it if the state lasts).
const txnRetryBackoff = 2 * time.Millisecond

// TxnWriter writes batches of records atomically under one transactional id.
// It is safe for concurrent use. A transactional id has at most one open
// transaction, so writes that arrive while one is being written wait, and
// are then written together, in one transaction (group commit): a burst of
// config and status changes costs a few transactions, not one each. Each
// caller's records stay atomic (they are part of one atomic whole) and in
// order.
type TxnWriter struct {
	client *kgo.Client
	admin  *kadm.Client
	// mu is held by the caller that writes a transaction; fenced and broken
	// are guarded by it.
	mu     sync.Mutex
	fenced bool
	broken bool
	// qmu guards queue: the writes waiting for the next transaction.
	qmu   sync.Mutex
	queue []*pendingWrite
	// BeforeCommit, when set, runs after the records were produced and before
	// the commit: a seam for tests that hold a writer mid-commit.
	BeforeCommit func(ctx context.Context) error
	// BeforeCommitOf is BeforeCommit given the transaction's records (every
	// caller's of a group commit): a seam for tests that fail a commit by
	// what it would make visible.
	BeforeCommitOf func(ctx context.Context, recs []*kgo.Record) error
	// AwaitVisible makes Write wait, holding the writer, until its records
	// are visible to read_committed readers: for a writer that commits
	// bursts back to back (the leader's). Kafka commits a transaction
	// before it writes the markers, and a transaction begun before they
	// are written is refused with CONCURRENT_TRANSACTIONS — with
	// transactions v2 (Kafka 4) the broker then retries on its own after
	// 20 ms (add.partitions.to.txn.retry.backoff.ms), so back-to-back
	// writes cost ≈ 20 ms each; waiting for the markers (≈ 1–3 ms) lets the
	// next one start at once. A writer that commits now and then (a
	// task's offsets) gains nothing from it, and the wait costs it — in
	// our rolling-upgrade benchmark task moves took twice as long.
	AwaitVisible bool
	// Followed, when set, tells AwaitVisible how to see a topic's records
	// without asking the broker: a read_committed reader of the topic in
	// this process that has read past an offset has seen everything up to
	// it. It returns that reader's wait for topic, or nil to have the topic
	// polled (ListOffsets until its last stable offset passes the records).
	// A reader's fetch is answered the moment the markers land, while a poll
	// backs off and keeps the broker busy: the leader's bursts commit
	// sooner with it.
	Followed func(topic string) func(ctx context.Context, partition int32, offset int64) error
}

// pendingWrite is one caller's records, waiting to be written; err is set
// before done is closed.
type pendingWrite struct {
	recs []*kgo.Record
	err  error
	done chan struct{}
}

// NewTxnWriter makes a writer with transactional id txnID; opts are the base
// client options.
func NewTxnWriter(txnID string, opts ...kgo.Opt) (*TxnWriter, error) {
	all := append([]kgo.Opt{}, opts...)
	all = append(all,
		// One produce request in flight per broker: with several, the first
		// batch to a partition that never held a record can be refused for a
		// moment (its leader not yet known) while a later one lands; every
		// retry of the first is then out of sequence (KAFKA-15591), and the
		// writer is stuck. A transaction's records go out together anyway.
		kgo.MaxProduceRequestsInflightPerBroker(1),
		kgo.TransactionalID(txnID),
		kgo.TransactionTimeout(60*time.Second),
		// Kafka answers CONCURRENT_TRANSACTIONS to a transaction begun
		// while the previous one's markers are still being written, which
		// back-to-back writes (a burst of config changes) always hit.
		// franz-go's 20ms default made each of them cost 20ms; the markers
		// usually land within a few.
		kgo.ConcurrentTransactionsBackoff(txnRetryBackoff),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
	)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("transactional writer %s: %w", txnID, err)
	}
	return &TxnWriter{client: cl, admin: kadm.NewClient(cl)}, nil
}

// visibleTimeout bounds the wait after a commit until its records are
// visible (see Write).
const visibleTimeout = 5 * time.Second

// Init takes the writer's producer epoch now, retrying what IsRetriable
// accepts until ctx ends. Its InitProducerID is a fence: every producer of
// the id that holds an older epoch (a zombie) is fenced, and its open
// transaction aborted, once Init returns. Take it before trusting what the
// id wrote: franz-go would otherwise take the epoch lazily at the first
// write, and a process paused in between would, once resumed, fence
// whoever took the id meanwhile instead of being fenced by them.
func (w *TxnWriter) Init(ctx context.Context) error {
	return Retry(ctx, func() error {
		_, _, err := w.client.ProducerID(ctx)
		return err
	})
}

// Client exposes the underlying client (for producing inside an exactly-once
// transaction that the caller manages).
func (w *TxnWriter) Client() *kgo.Client { return w.client }

// Write produces recs in one transaction and commits it. On success the
// records carry their offsets and, with AwaitVisible set, read_committed
// readers see them (or the wait for that ran out after visibleTimeout: the
// commit stands, and a reader waits for the markers itself). On failure
// the transaction is aborted and nothing is visible to read_committed
// readers. Writes of concurrent callers may share the transaction; it is
// written under the context of the caller that writes it, so callers
// should bound their writes alike.
func (w *TxnWriter) Write(ctx context.Context, recs ...*kgo.Record) error {
	if len(recs) == 0 {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.unusable()
	}
	p := &pendingWrite{recs: recs, done: make(chan struct{})}
	w.qmu.Lock()
	w.queue = append(w.queue, p)
	w.qmu.Unlock()

	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-p.done: // written with an earlier caller's transaction
		return p.err
	default:
	}
	// Write everything that queued up meanwhile, this caller's records among
	// them, in one transaction.
	w.qmu.Lock()
	group := w.queue
	w.queue = nil
	w.qmu.Unlock()
	var all []*kgo.Record
	for _, g := range group {
		all = append(all, g.recs...)
	}
	err := w.unusable()
	if err == nil {
		err = w.transaction(ctx, all)
	}
	if err == nil && w.AwaitVisible {
		vctx, cancel := context.WithTimeout(ctx, visibleTimeout)
		_ = w.awaitVisible(vctx, all)
		cancel()
	}
	for _, g := range group {
		g.err = err
		close(g.done)
	}
	return p.err
}

// awaitVisible waits until read_committed readers see recs: through the
// followed topics' readers, and by polling for the others.
func (w *TxnWriter) awaitVisible(ctx context.Context, recs []*kgo.Record) error {
	last := LastOffsets(recs)
	if w.Followed != nil {
		for topic, parts := range last {
			wait := w.Followed(topic)
			if wait == nil {
				continue
			}
			for p, off := range parts {
				if err := wait(ctx, p, off); err != nil {
					return err
				}
			}
			delete(last, topic)
		}
	}
	if len(last) == 0 {
		return nil
	}
	return WaitVisible(ctx, w.admin, last)
}

// unusable returns why the writer can no longer write, or nil. w.mu is held.
func (w *TxnWriter) unusable() error {
	if w.fenced {
		return ErrFenced
	}
	if w.broken {
		return ErrWriterBroken
	}
	return nil
}

// transaction writes recs in one transaction. w.mu is held.
func (w *TxnWriter) transaction(ctx context.Context, recs []*kgo.Record) error {
	if err := w.client.BeginTransaction(); err != nil {
		return w.fail("begin transaction", err)
	}
	if err := w.produce(ctx, recs); err != nil {
		return w.fail("produce", err)
	}
	if w.BeforeCommit != nil {
		if err := w.BeforeCommit(ctx); err != nil {
			return w.fail("before commit", err)
		}
	}
	if w.BeforeCommitOf != nil {
		if err := w.BeforeCommitOf(ctx, recs); err != nil {
			return w.fail("before commit", err)
		}
	}
	if err := w.client.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return w.fail("commit transaction", err)
	}
	return nil
}

// produce sends recs and waits until each is acknowledged. It flushes
// rather than waiting for the client's linger (10ms by default): the
// transaction is complete, nothing more will join the batch, and every
// config, status and offsets write would otherwise pay the linger.
func (w *TxnWriter) produce(ctx context.Context, recs []*kgo.Record) error {
	var mu sync.Mutex
	var first error
	for _, r := range recs {
		w.client.Produce(ctx, r, func(_ *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = err
			}
		})
	}
	if err := w.client.Flush(ctx); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	return first
}

func (w *TxnWriter) fail(step string, cause error) error {
	if IsFenced(cause) {
		w.fenced = true
		return fmt.Errorf("%s: %w: %w", step, ErrFenced, cause)
	}
	if errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
		// The transaction may or may not have committed, and the process
		// may have been paused long enough for a successor to take the id:
		// an abort now could bump the epoch under that successor. Leave the
		// transaction to its timeout or its next owner's fencing.
		w.broken = true
		return fmt.Errorf("%s: %w: %w", step, ErrWriterBroken, cause)
	}
	// Abort what was produced so it never becomes visible; use a fresh
	// context, the caller's may be the reason we failed.
	actx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = w.client.AbortBufferedRecords(actx)
	if err := w.client.EndTransaction(actx, kgo.TryAbort); err != nil && IsFenced(err) {
		w.fenced = true
		return fmt.Errorf("%s: %w: %w", step, ErrFenced, cause)
	}
	if lostProducerState(cause) {
		// The broker no longer accepts this producer's sequence numbers:
		// every later write would fail the same way. Its owner opens a new
		// writer (a new epoch, sequences from zero).
		w.broken = true
		return fmt.Errorf("%s: %w: %w", step, ErrWriterBroken, cause)
	}
	return fmt.Errorf("%s: %w", step, cause)
}

// lostProducerState reports whether err means the broker and the producer
// disagree on the producer's sequence numbers.
func lostProducerState(err error) bool {
	return errors.Is(err, kerr.OutOfOrderSequenceNumber) || errors.Is(err, kerr.UnknownProducerID) ||
		errors.Is(err, kerr.InvalidProducerIDMapping)
}

// Usable reports whether the writer can still write: not fenced by a newer
// producer of its id, nor broken (ErrWriterBroken).
func (w *TxnWriter) Usable() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unusable() == nil
}

// Close closes the writer's client. It never aborts: an open transaction is
// aborted by its timeout or by the id's next owner.
func (w *TxnWriter) Close() { w.client.Close() }

// WaitCommitted waits until read_committed readers can see recs, which a
// TxnWriter wrote and committed. Kafka acknowledges a commit once it is
// decided, and writes the transaction markers to the partitions after that;
// until then the last stable offset stays behind the records, and a reader
// that reads "to the end" (to the last stable offset) misses them.
func WaitCommitted(ctx context.Context, adm *kadm.Client, recs ...*kgo.Record) error {
	return WaitVisible(ctx, adm, LastOffsets(recs))
}

// LastOffsets is the offset of the last of recs in each partition, by
// topic and partition.
func LastOffsets(recs []*kgo.Record) map[string]map[int32]int64 {
	last := map[string]map[int32]int64{}
	for _, r := range recs {
		if last[r.Topic] == nil {
			last[r.Topic] = map[int32]int64{}
		}
		if o, ok := last[r.Topic][r.Partition]; !ok || r.Offset > o {
			last[r.Topic][r.Partition] = r.Offset
		}
	}
	return last
}

// WaitVisible waits until read_committed readers can see the committed
// records at the offsets want lists (by topic and partition): until each
// partition's last stable offset passes its offset.
func WaitVisible(ctx context.Context, adm *kadm.Client, want map[string]map[int32]int64) error {
	topics := make([]string, 0, len(want))
	for t := range want {
		topics = append(topics, t)
	}
	// The markers usually land within a millisecond or two of the commit:
	// poll soon and often at first (each poll is one ListOffsets round
	// trip), then back off.
	backoff := 200 * time.Microsecond
	for {
		lso, err := adm.ListCommittedOffsets(ctx, topics...)
		if err == nil {
			err = visible(lso, want)
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("committed records not yet visible: %w (last: %v)", ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 200*time.Millisecond)
	}
}

func visible(lso kadm.ListedOffsets, want map[string]map[int32]int64) error {
	for t, parts := range want {
		for p, off := range parts {
			o, ok := lso.Lookup(t, p)
			switch {
			case !ok:
				return fmt.Errorf("%s/%d: no last stable offset", t, p)
			case o.Err != nil:
				return fmt.Errorf("%s/%d: %w", t, p, o.Err)
			case o.Offset <= off:
				return fmt.Errorf("%s/%d: last stable offset %d, record at %d", t, p, o.Offset, off)
			}
		}
	}
	return nil
}
