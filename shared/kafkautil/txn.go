package kafkautil

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrFenced is returned (wrapped) once a TxnWriter has been fenced. A fenced
// writer never writes again.
var ErrFenced = errors.New("transactional writer fenced by a newer producer")

// TxnWriter writes batches of records atomically under one transactional id.
type TxnWriter struct {
	client *kgo.Client
	fenced bool
	// BeforeCommit, when set, runs after the records were produced and before
	// the commit: a seam for tests that hold a writer mid-commit.
	BeforeCommit func(ctx context.Context) error
}

// NewTxnWriter makes a writer with transactional id txnID; opts are the base
// client options.
func NewTxnWriter(txnID string, opts ...kgo.Opt) (*TxnWriter, error) {
	all := append([]kgo.Opt{}, opts...)
	all = append(all,
		kgo.TransactionalID(txnID),
		kgo.TransactionTimeout(60*time.Second),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
	)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("transactional writer %s: %w", txnID, err)
	}
	return &TxnWriter{client: cl}, nil
}

// Client exposes the underlying client (for producing inside an exactly-once
// transaction that the caller manages).
func (w *TxnWriter) Client() *kgo.Client { return w.client }

// Write produces recs in one transaction and commits it. On success the
// records carry their offsets. On failure the transaction is aborted and
// nothing is visible to read_committed readers.
func (w *TxnWriter) Write(ctx context.Context, recs ...*kgo.Record) error {
	if w.fenced {
		return ErrFenced
	}
	if len(recs) == 0 {
		return nil
	}
	if err := w.client.BeginTransaction(); err != nil {
		return w.fail("begin transaction", err)
	}
	if err := w.client.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return w.fail("produce", err)
	}
	if w.BeforeCommit != nil {
		if err := w.BeforeCommit(ctx); err != nil {
			return w.fail("before commit", err)
		}
	}
	if err := w.client.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return w.fail("commit transaction", err)
	}
	return nil
}

func (w *TxnWriter) fail(step string, cause error) error {
	if IsFenced(cause) {
		w.fenced = true
		return fmt.Errorf("%s: %w: %w", step, ErrFenced, cause)
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
	return fmt.Errorf("%s: %w", step, cause)
}

// Close closes the writer's client.
func (w *TxnWriter) Close() { w.client.Close() }
