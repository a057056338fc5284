package kafkautil

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fenceParallel bounds how many ids are fenced at once: a connector may
// have thousands of task ids, and one at a time they would not all be
// fenced within an agent's lease.
const fenceParallel = 16

// Fence bumps the producer epoch of each transactional id, as Kafka's
// Admin.fenceProducers does: any producer still holding an older epoch (a
// zombie task) gets PRODUCER_FENCED on its next write, and its open
// transaction is aborted. Ids are fenced up to fenceParallel at a time;
// retriable coordinator errors are retried until ctx ends. It returns nil
// only when every id was fenced, else the first error.
func Fence(ctx context.Context, cl *kgo.Client, txnIDs ...string) error {
	if len(txnIDs) == 1 {
		return fenceOne(ctx, cl, txnIDs[0])
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	slots := make(chan struct{}, fenceParallel)
	var wg sync.WaitGroup
	for _, id := range txnIDs {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := fenceOne(ctx, cl, id); err != nil {
				cancel(err) // the first error wins; the others stop
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

func fenceOne(ctx context.Context, cl *kgo.Client, id string) error {
	backoff := 20 * time.Millisecond
	for {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &id
		req.TransactionTimeoutMillis = 60000
		req.ProducerID = -1
		req.ProducerEpoch = -1
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil {
			return nil
		}
		if !IsRetriable(err) {
			return fmt.Errorf("fence transactional id %s: %w", id, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("fence transactional id %s: %w (last error: %v)", id, ctx.Err(), err)
		case <-time.After(backoff):
		}
		if backoff < time.Second {
			backoff *= 2
		}
	}
}
