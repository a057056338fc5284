package herder

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/validate"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/offsetstore"
)

// ownOffsetsTopic is the offsets topic of a source connector's own
// (KIP-618's offsets.storage.topic), "" when it has none: not a source, not
// set, or set to the worker's topic, which Kafka Connect then uses alone.
func (h *Herder) ownOffsetsTopic(config map[string]string) string {
	// Kafka Connect trims a string setting's value.
	t := strings.TrimSpace(config[validate.OffsetsStorageTopicConfig])
	if t == "" || t == h.cfg.OffsetsTopic {
		return ""
	}
	if p, ok := h.pluginOf(config); !ok || p.Kind != connect.KindSource {
		return ""
	}
	return t
}

// sourceView reads a source connector's offsets to their end: the worker's
// topic and, when topic is set, the connector's own, created if missing as
// Kafka Connect creates it. A topic that cannot be created answers Kafka
// Connect's "Unable to create topic(s)" 500; one that cannot be read the
// 500 of failure (a format naming the connector). Call release when done.
func (h *Herder) sourceView(ctx context.Context, name, topic, failure string) (offsetstore.View, func(), error) {
	v, release, err := h.stores.View(ctx, topic)
	if err == nil {
		return v, release, nil
	}
	h.log.Error("reading the offsets topics failed", "connector", name, "connector_topic", topic, "err", err)
	var ce *offsetstore.CreateTopicError
	var ve *kafkautil.VanishedTopicError
	var me *kafkautil.MissingTopicError
	switch {
	case errors.As(err, &ce):
		return v, release, v1.Errorf(v1.CodeInternal, "%s", ce.Error())
	case errors.As(err, &ve):
		return v, release, v1.Errorf(v1.CodeInternal, "%s", ve.Error())
	case errors.As(err, &me):
		return v, release, v1.Errorf(v1.CodeInternal, "%s", me.Error())
	}
	return v, release, v1.Errorf(v1.CodeInternal, failure, name)
}

// prepareTimeout bounds creating a connector's own offsets topic.
const prepareTimeout = 60 * time.Second

// offsetsFeatures are the features an agent must serve to change the
// offsets of a connector whose own offsets topic is topic.
func offsetsFeatures(topic string) []string {
	if topic == "" {
		return nil
	}
	return []string{v1.FeatureConnectorOffsetsTopic}
}

// prepareConnector creates a source connector's own offsets topic when its
// config names one, as Kafka Connect does whenever it starts the connector
// (stopped ones too): a connector whose topic cannot be created is FAILED
// with Kafka Connect's "Unable to create topic(s)" as its trace. A topic
// that existed before and vanished is never created again (topics.go): the
// connector is FAILED with a trace that says so, instead of its sources
// starting over. The leader marks the topic in the fleet topic.
func (h *Herder) prepareConnector(ctx context.Context, name string, config map[string]string) error {
	topic := h.ownOffsetsTopic(config)
	if topic == "" {
		return nil
	}
	// The connector's worker waits for it: bound it, so that a broker that
	// never shows the topic does not hold up its stop or delete.
	ctx, cancel := context.WithTimeout(ctx, prepareTimeout)
	defer cancel()
	exists, err := kafkautil.TopicExists(ctx, h.adminCl, topic)
	if err != nil {
		return err
	}
	if !exists {
		if err := h.mayCreate(h.connectorTopic(topic), ""); err != nil {
			h.log.Error("the connector's offsets topic is missing and Sluice does not create it", "connector", name, "topic", topic, "err", err)
			return err
		}
		if err := offsetstore.EnsureTopic(ctx, h.admin, topic, h.cfg.OffsetsTopic); err != nil {
			h.log.Warn("creating the connector's offsets topic failed", "connector", name, "topic", topic, "err", err)
			return err
		}
	}
	h.markConnectorTopic(ctx, name, topic)
	return nil
}

// connectorTopic is a connector's own offsets topic, as prepareConnector
// creates it.
func (h *Herder) connectorTopic(topic string) internalTopic {
	return internalTopic{spec: kafkautil.TopicSpec{Name: topic, Partitions: h.cfg.OffsetsPartitions, Compacted: true},
		setting: "offsets.storage.topic", loss: "restart the connector's source tasks from the worker offsets topic's positions, or from scratch"}
}

// connectorTopicGuard lets the offsets registry create a connector's
// missing offsets topic (a GET …/offsets before the connector started)
// only when it never existed and creation is on.
func (h *Herder) connectorTopicGuard(ctx context.Context, topic string) error {
	// The caller found it missing a moment ago; the leader may have created
	// (and marked) it since, as it starts the connector. Marked and there
	// is not vanished.
	if exists, err := kafkautil.TopicExists(ctx, h.adminCl, topic); err == nil && exists {
		return nil
	}
	return h.mayCreate(h.connectorTopic(topic), "")
}

// markConnectorTopic records in the fleet topic that connector name relies
// on topic, once; a failure is logged (the next start tries again).
func (h *Herder) markConnectorTopic(ctx context.Context, name, topic string) {
	if _, ok := h.fleet.State.Topic(topic); ok {
		return
	}
	mark := store.TopicMark{Purpose: fmt.Sprintf("connector %s's offsets topic", name), Cluster: h.clusterID, Connector: name, Since: time.Now().UTC()}
	if err := h.fleet.Apply(ctx, store.MarkTopic{Name: topic, Mark: mark}); err != nil {
		h.log.Warn("marking the connector's offsets topic", "connector", name, "topic", topic, "err", err)
	}
}

// forgetConnectorTopic removes the mark of topic, the offsets topic of a
// connector just deleted, unless another connector names it: a connector
// created later with that topic may then create it again.
func (h *Herder) forgetConnectorTopic(ctx context.Context, topic string) {
	if topic == "" {
		return
	}
	if _, ok := h.fleet.State.Topic(topic); !ok {
		return
	}
	for _, c := range h.configs.State.All() {
		if h.ownOffsetsTopic(c.Config) == topic {
			return
		}
	}
	if err := h.fleet.Apply(ctx, store.ForgetTopic{Name: topic}); err != nil {
		h.log.Warn("forgetting the deleted connector's offsets topic", "topic", topic, "err", err)
	}
}
