package offsets

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/offsetval"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/topicguard"
)

// CheckSinkPartitions refuses sink offsets that name a reserved topic, or
// a partition the broker does not have, before any is sent to an agent:
// Kafka would refuse the whole change there, as a 500 that does not say
// which entry was wrong.
func (s *Service) CheckSinkPartitions(ctx context.Context, name string, offsets []offsetval.SinkOffset) error {
	topics := offsetval.SinkTopics(offsets)
	guard := topicguard.New(s.cfg.Reserved())
	for _, topic := range topics {
		if err := guard.Check(topic); err != nil {
			return api.Errorf(api.CodeBadRequest, "Invalid kafka_topic %s in the offsets of connector %s: the %v", topic, name, err)
		}
	}
	counts := map[string]int{}
	if len(topics) > 0 {
		mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var details kadm.TopicDetails
		err := kafkautil.Retry(mctx, func() error {
			var err error
			if details, err = s.cfg.Admin.ListTopics(mctx, topics...); err != nil {
				return err
			}
			for _, d := range details {
				if d.Err != nil && !errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
					return d.Err
				}
			}
			return nil
		})
		if err != nil {
			s.log.Error("reading the metadata of the topics of a sink offsets change failed", "connector", name, "topics", topics, "err", err)
			return api.Errorf(api.CodeInternal, "Failed to alter consumer group offsets for connector %s", name)
		}
		for topic, d := range details {
			if d.Err == nil {
				counts[topic] = len(d.Partitions)
			}
		}
	}
	return offsetval.SinkPartitions(offsets, counts)
}
