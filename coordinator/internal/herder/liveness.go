package herder

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/wire"
)

// Agents are heard on two paths: NATS (register, heartbeat) and Kafka,
// where each writes a liveness beat every reconciler.LivenessEvery. This
// file follows the Kafka path and hands every beat to the reconciler,
// which keeps the agent's lease (reconciler/liveness.go says why).

// livenessLoop follows the liveness topic from its end while this
// coordinator leads, and keeps the lease of every agent it hears there.
func (h *Herder) livenessLoop(ctx context.Context) {
	topic := h.cfg.LivenessTopic
	if topic == "" {
		return
	}
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := h.followLiveness(ctx, topic)
		if ctx.Err() != nil {
			return
		}
		h.log.Warn("reading agents' liveness beats failed; agents are heard on NATS alone meanwhile", "topic", topic, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// followLiveness makes sure of the topic and reads it until ctx ends or it
// fails.
func (h *Herder) followLiveness(ctx context.Context, topic string) error {
	spec := kafkautil.TopicSpec{Name: topic, Partitions: 1,
		Configs: map[string]string{"cleanup.policy": "delete", "retention.ms": "3600000", "segment.ms": "600000"}}
	if err := h.TopicGuard(ctx, spec, "--liveness-topic", "nothing that lasts: agents' liveness beats of the last hour"); err != nil {
		return err
	}
	if err := kafkautil.EnsureTopics(ctx, h.admin, spec); err != nil {
		return err
	}
	cl, err := kgo.NewClient(append(append([]kgo.Opt(nil), h.cfg.KafkaOpts...),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), kgo.FetchMaxWait(250*time.Millisecond))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var ferr error
		fetches.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.Canceled) {
				ferr = err
			}
		})
		if ferr != nil {
			return ferr
		}
		var heard []string
		fetches.EachRecord(func(r *kgo.Record) {
			b, err := wire.DecodeLivenessBeat(r.Value)
			if err != nil || b.Group != h.cfg.GroupID {
				return
			}
			heard = append(heard, b.Agent)
		})
		h.rec.HeardBeats(heard)
	}
}
