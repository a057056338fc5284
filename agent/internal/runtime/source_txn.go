package runtime

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/connect"
)

// With exactly-once support on, a source task's transactions end where its
// connector's transaction.boundary says (KIP-618), as in Kafka Connect's
// ExactlyOnceWorkerSourceTask:
//
//	poll:      after every batch a poll returns
//	interval:  after the first batch once transaction.boundary.interval.ms
//	           (default: the offset flush interval) has passed
//	connector: where the task asks, through its TransactionContext or a
//	           record's TransactionRequest; an abort drops the records of
//	           the transaction and commits their positions all the same
//
// A pause or a stop ends the open transaction as a batch would (poll and
// interval: commit; connector: only if the task asked). A task with
// connector-defined boundaries that stops mid-transaction has it aborted,
// and its positions are not committed: the next owner reads those records
// again.

// boundary is a connector's transaction.boundary.
type boundary int

const (
	boundaryPoll boundary = iota
	boundaryInterval
	boundaryConnector
)

// The connector config keys of the boundaries.
const (
	boundaryKey         = "transaction.boundary"
	boundaryIntervalKey = "transaction.boundary.interval.ms"
)

// parseBoundary reads a connector config's boundary and interval (flush
// when the config names none). Validation rejected anything else before
// the connector was created.
func parseBoundary(conn map[string]string, flush time.Duration) (boundary, time.Duration) {
	interval := flush
	if v := strings.TrimSpace(conn[boundaryIntervalKey]); v != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms >= 0 {
			interval = time.Duration(ms) * time.Millisecond
		}
	}
	switch strings.ToLower(strings.TrimSpace(conn[boundaryKey])) {
	case "interval":
		return boundaryInterval, interval
	case "connector":
		return boundaryConnector, interval
	}
	return boundaryPoll, interval
}

// txnRequests is the TransactionContext of a task that defines its own
// boundaries: the requests for the end of the current batch.
type txnRequests struct{ commit, abort atomic.Bool }

// CommitTransaction implements connect.TransactionContext.
func (q *txnRequests) CommitTransaction() { q.commit.Store(true) }

// AbortTransaction implements connect.TransactionContext.
func (q *txnRequests) AbortTransaction() { q.abort.Store(true) }

// take returns the requests and clears them.
func (q *txnRequests) take() (commit, abort bool) { return q.commit.Swap(false), q.abort.Swap(false) }

// ownsCommits implements boundaryOwner: an exactly-once source commits at
// its boundaries, not on the task loop's flush interval.
func (r *sourceRunner) ownsCommits() bool { return r.eos }

// recordBoundary ends the transaction after rec when rec asks for it.
func (r *sourceRunner) recordBoundary(ctx context.Context, rec *connect.SourceRecord) error {
	if !r.eos || r.boundary != boundaryConnector || rec.Transaction == connect.TxnNone {
		return nil
	}
	return r.endTransaction(ctx, rec.Transaction == connect.TxnAbort)
}

// batchBoundary ends the transaction after a batch when the boundary says.
func (r *sourceRunner) batchBoundary(ctx context.Context) error {
	if !r.eos {
		return nil
	}
	switch r.boundary {
	case boundaryInterval:
		if time.Since(r.lastTxn) < r.interval {
			return nil
		}
		r.lastTxn = time.Now()
	case boundaryConnector:
		commit, abort := r.txnReqs.take()
		if !commit && !abort {
			return nil
		}
		return r.endTransaction(ctx, abort)
	}
	return r.endTransaction(ctx, false)
}

// finishTransaction implements boundaryOwner: the task pauses (final
// false) or stops.
func (r *sourceRunner) finishTransaction(ctx context.Context, final bool) error {
	if r.boundary != boundaryConnector {
		return r.commitExactlyOnce(ctx)
	}
	if commit, abort := r.txnReqs.take(); commit || abort {
		return r.endTransaction(ctx, abort)
	}
	if !final || !r.inTxn {
		return nil
	}
	// Stopping mid-transaction: nothing of it is written, and its positions
	// are not committed, so the next owner polls its records again.
	r.takePending()
	return r.abortOpen(ctx)
}

// endTransaction commits the open transaction, or aborts it and then
// commits the positions its records reached, measured as the task's
// commits are. It is not cut off by a stop arriving meanwhile: an
// interrupted transaction would leave the producer unusable for the final
// commit.
func (r *sourceRunner) endTransaction(ctx context.Context, abort bool) error {
	r.mu.Lock()
	idle := !r.inTxn && len(r.pending) == 0
	r.mu.Unlock()
	if idle {
		return nil // an empty poll: nothing to end
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalCommitTimeout)
	defer cancel()
	start := time.Now()
	var err error
	if abort {
		err = r.abortOpen(cctx)
	}
	if err == nil {
		err = r.commitExactlyOnce(cctx)
	}
	end := time.Now()
	r.t.metrics.Commit(end.Sub(start), end, err)
	return err
}

// abortOpen aborts the open transaction at the task's request: its records
// are acknowledged first (an abort needs an empty buffer, and failing them
// would fail the task), then discarded by Kafka.
func (r *sourceRunner) abortOpen(ctx context.Context) error {
	if !r.inTxn {
		return nil
	}
	if err := r.producer.Flush(ctx); err != nil {
		return r.abort(fmt.Errorf("flush before the requested abort: %w", err))
	}
	if err := r.produceErr(); err != nil {
		return r.abort(err)
	}
	if err := r.producer.EndTransaction(ctx, kgo.TryAbort); err != nil {
		return r.abort(fmt.Errorf("abort transaction: %w", err))
	}
	r.inTxn = false
	return nil
}
