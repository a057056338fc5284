package coordinator

import (
	"cmp"
	"context"
	"strconv"
	"time"

	"github.com/sluice-io/sluice/shared/kafkautil"
)

// guardRecordTopics checks the audit, offsets and config history topics before
// they are created: none is created when internal topic creation is off
// (Config.DisableInternalTopicCreation), nor when it existed before and
// vanished (the fleet topic marks it), which would silently restart the
// audit trail or the history empty. Run it after the herder's Prepare.
func (c *Coordinator) guardRecordTopics(ctx context.Context) error {
	audit := recordTopic(cmp.Or(c.cfg.Audit.Topic, DefaultAuditTopic), cmp.Or(c.cfg.Audit.Retention, DefaultAuditRetention))
	if err := c.herder.TopicGuard(ctx, audit, "--audit-topic", "restart the audit trail of REST writes empty"); err != nil {
		return err
	}
	history := recordTopic(cmp.Or(c.cfg.OffsetsHistory.Topic, DefaultOffsetsHistoryTopic), cmp.Or(c.cfg.OffsetsHistory.Retention, DefaultOffsetsHistoryRetention))
	if err := c.herder.TopicGuard(ctx, history, "--offsets-history-topic", "lose every change of a connector's positions recorded so far, and with them every undo"); err != nil {
		return err
	}
	configs := recordTopic(cmp.Or(c.cfg.ConfigHistory.Topic, DefaultConfigHistoryTopic), cmp.Or(c.cfg.ConfigHistory.Retention, DefaultConfigHistoryRetention))
	return c.herder.TopicGuard(ctx, configs, "--config-history-topic", "lose every change of a connector's config recorded so far, and with them every restore")
}

// recordTopic is a topic of records kept for retention, as
// topicscan.EnsureTopic creates it.
func recordTopic(name string, retention time.Duration) kafkautil.TopicSpec {
	return kafkautil.TopicSpec{Name: name, Partitions: 1, Configs: map[string]string{
		"cleanup.policy": "delete", "retention.ms": strconv.FormatInt(retention.Milliseconds(), 10)}}
}
