package kafkautil

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fence bumps the producer epoch of each transactional id, as Kafka's
// Admin.fenceProducers does: any producer still holding an older epoch (a
// zombie task) gets PRODUCER_FENCED on its next write, and its open
// transaction is aborted. Retriable coordinator errors are retried until ctx
// ends.
func Fence(ctx context.Context, cl *kgo.Client, txnIDs ...string) error {
	for _, id := range txnIDs {
		if err := fenceOne(ctx, cl, id); err != nil {
			return err
		}
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
