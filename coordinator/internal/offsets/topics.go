package offsets

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/validate"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/offsetstore"
)

// Topics keeps source connectors' own offsets topics (KIP-618's
// offsets.storage.topic): which topic a config names, creating it as
// Kafka Connect does, and its mark in the fleet topic.
type Topics struct {
	cfg *Config
	log *slog.Logger
}

// Own is the offsets topic of a source connector's own, "" when it has
// none: not a source, not set, or set to the worker's topic, which Kafka
// Connect then uses alone.
func (t *Topics) Own(config map[string]string) string {
	// Kafka Connect trims a string setting's value.
	topic := strings.TrimSpace(config[validate.OffsetsStorageTopicConfig])
	if topic == "" || topic == t.cfg.OffsetsTopic {
		return ""
	}
	if p, ok := t.cfg.Plugins.Choose(config); !ok || p.Plugin.Kind != connect.KindSource {
		return ""
	}
	return topic
}

// prepareTimeout bounds creating a connector's own offsets topic.
const prepareTimeout = 60 * time.Second

// Prepare creates a source connector's own offsets topic when its config
// names one, as Kafka Connect does whenever it starts the connector
// (stopped ones too): a connector whose topic cannot be created is FAILED
// with Kafka Connect's "Unable to create topic(s)" as its trace. A topic
// that existed before and vanished is never created again (MayCreate): the
// connector is FAILED with a trace that says so, instead of its sources
// starting over. The leader marks the topic in the fleet topic.
func (t *Topics) Prepare(ctx context.Context, name string, config map[string]string) error {
	topic := t.Own(config)
	if topic == "" {
		return nil
	}
	// The connector's worker waits for it: bound it, so that a broker that
	// never shows the topic does not hold up its stop or delete.
	ctx, cancel := context.WithTimeout(ctx, prepareTimeout)
	defer cancel()
	exists, err := kafkautil.TopicExists(ctx, t.cfg.TopicClient, topic)
	if err != nil {
		return err
	}
	if !exists {
		if err := t.cfg.MayCreate(topic); err != nil {
			t.log.Error("the connector's offsets topic is missing and Sluice does not create it", "connector", name, "topic", topic, "err", err)
			return err
		}
		if err := offsetstore.EnsureTopic(ctx, t.cfg.Admin, topic, t.cfg.OffsetsTopic); err != nil {
			t.log.Warn("creating the connector's offsets topic failed", "connector", name, "topic", topic, "err", err)
			return err
		}
	}
	t.mark(ctx, name, topic)
	return nil
}

// Guard lets the offsets registry create a connector's missing offsets
// topic (a GET …/offsets before the connector started) only when it never
// existed and creation is on (offsetstore.CreateGuard).
func (t *Topics) Guard(ctx context.Context, topic string) error {
	// The caller found it missing a moment ago; the leader may have created
	// (and marked) it since, as it starts the connector. Marked and there
	// is not vanished.
	if exists, err := kafkautil.TopicExists(ctx, t.cfg.TopicClient, topic); err == nil && exists {
		return nil
	}
	return t.cfg.MayCreate(topic)
}

// mark records in the fleet topic that connector name relies on topic,
// once; a failure is logged (the next start tries again).
func (t *Topics) mark(ctx context.Context, name, topic string) {
	if t.cfg.Marks.Marked(topic) {
		return
	}
	mark := store.TopicMark{Purpose: fmt.Sprintf("connector %s's offsets topic", name), Cluster: t.cfg.ClusterID, Connector: name, Since: t.cfg.Clock.Now().UTC()}
	if err := t.cfg.Marks.Mark(ctx, topic, mark); err != nil {
		t.log.Warn("marking the connector's offsets topic", "connector", name, "topic", topic, "err", err)
	}
}

// Forget removes the mark of topic, the offsets topic of a connector just
// deleted, unless another connector names it: a connector created later
// with that topic may then create it again.
func (t *Topics) Forget(ctx context.Context, topic string) {
	if topic == "" || !t.cfg.Marks.Marked(topic) {
		return
	}
	for _, c := range t.cfg.Connectors.All() {
		if t.Own(c.Config) == topic {
			return
		}
	}
	if err := t.cfg.Marks.Forget(ctx, topic); err != nil {
		t.log.Warn("forgetting the deleted connector's offsets topic", "topic", topic, "err", err)
	}
}
