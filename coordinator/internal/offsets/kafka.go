package offsets

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/offsetstore"
)

// KafkaReader is the Reader of a running coordinator: consumer groups'
// offsets from the brokers, source offsets from the followed offsets
// topics.
type KafkaReader struct {
	Admin  *kadm.Client
	Stores *offsetstore.Registry
}

var _ Reader = KafkaReader{}

// groupOffsetsTimeout bounds the retries of fetching a group's offsets.
const groupOffsetsTimeout = 30 * time.Second

// GroupOffsets implements Reader, retrying what Kafka says is retriable
// for up to 30 s.
func (k KafkaReader) GroupOffsets(ctx context.Context, group string) (kadm.OffsetResponses, error) {
	var resp kadm.OffsetResponses
	rctx, cancel := context.WithTimeout(ctx, groupOffsetsTimeout)
	defer cancel()
	err := kafkautil.Retry(rctx, func() error {
		var err error
		if resp, err = k.Admin.FetchOffsets(rctx, group); err == nil {
			err = resp.Error()
		}
		return err
	})
	if errors.Is(err, kerr.GroupIDNotFound) {
		return kadm.OffsetResponses{}, nil
	}
	return resp, err
}

// SourceEntries implements Reader.
func (k KafkaReader) SourceEntries(ctx context.Context, name, topic string) ([]offsetstore.Entry, string, error) {
	view, release, err := k.Stores.View(ctx, topic)
	defer release()
	if err != nil {
		return nil, "", err
	}
	return view.Entries(name), view.ConnectorTopic(), nil
}

// SourceView reads a source connector's offsets to their end: the
// worker's topic and, when topic is set, the connector's own, created if
// missing as Kafka Connect creates it. A failure is answered as
// viewFailed says. Call release when done.
func (s *Service) SourceView(ctx context.Context, name, topic, failure string) (offsetstore.View, func(), error) {
	v, release, err := s.cfg.Stores.View(ctx, topic)
	if err != nil {
		err = viewFailed(s.log, name, topic, failure, err)
	}
	return v, release, err
}

// viewFailed is the answer to offsets topics that cannot be read: Kafka
// Connect's "Unable to create topic(s)" 500 for a topic that cannot be
// created, the topic's own error for one vanished or missing, and
// otherwise the 500 of failure (a format naming the connector).
func viewFailed(log *slog.Logger, name, topic, failure string, err error) error {
	log.Error("reading the offsets topics failed", "connector", name, "connector_topic", topic, "err", err)
	var ce *offsetstore.CreateTopicError
	var ve *kafkautil.VanishedTopicError
	var me *kafkautil.MissingTopicError
	switch {
	case errors.As(err, &ce):
		return api.Errorf(api.CodeInternal, "%s", ce.Error())
	case errors.As(err, &ve):
		return api.Errorf(api.CodeInternal, "%s", ve.Error())
	case errors.As(err, &me):
		return api.Errorf(api.CodeInternal, "%s", me.Error())
	}
	return api.Errorf(api.CodeInternal, failure, name)
}
