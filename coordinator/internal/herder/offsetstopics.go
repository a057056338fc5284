package herder

import (
	"context"
	"errors"
	"strings"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/validate"
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
	if errors.As(err, &ce) {
		return v, release, v1.Errorf(v1.CodeInternal, "%s", ce.Error())
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
// with Kafka Connect's "Unable to create topic(s)" as its trace.
func (h *Herder) prepareConnector(ctx context.Context, name string, config map[string]string) error {
	topic := h.ownOffsetsTopic(config)
	if topic == "" {
		return nil
	}
	// The connector's worker waits for it: bound it, so that a broker that
	// never shows the topic does not hold up its stop or delete.
	ctx, cancel := context.WithTimeout(ctx, prepareTimeout)
	defer cancel()
	if err := offsetstore.EnsureTopic(ctx, h.admin, topic, h.cfg.OffsetsTopic); err != nil {
		h.log.Warn("creating the connector's offsets topic failed", "connector", name, "topic", topic, "err", err)
		return err
	}
	return nil
}
