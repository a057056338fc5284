package coordinator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/coordinator/internal/offsethistory"
	"github.com/sluice-io/sluice/shared/logging"
)

// The defaults of OffsetsHistoryConfig.
const (
	DefaultOffsetsHistoryTopic     = offsethistory.DefaultTopic
	DefaultOffsetsHistoryRetention = offsethistory.DefaultRetention
)

// OffsetsHistoryConfig configures the offsets history: every change of a
// connector's positions is recorded in its topic, with the positions
// before and after, for GET …/offsets/history and undo (docs/offsets.md).
type OffsetsHistoryConfig struct {
	// Topic is the history topic, created if missing with one partition,
	// cleanup.policy=delete and retention.ms=Retention (default
	// DefaultOffsetsHistoryTopic).
	Topic string
	// Retention is the topic's retention when Sluice creates it (default
	// DefaultOffsetsHistoryRetention, 90 days): an entry older than that
	// can no longer be undone.
	Retention time.Duration
}

func (h OffsetsHistoryConfig) validate() error {
	if h.Retention < 0 {
		return errors.New("offsets history retention must not be negative")
	}
	return nil
}

// newHistory makes the offsets history's writer and reader over the
// coordinator's Kafka options.
func (c *Coordinator) newHistory(kafkaOpts []kgo.Opt) (*offsethistory.Log, error) {
	l, err := offsethistory.New(offsethistory.Config{
		Topic:     c.cfg.OffsetsHistory.Topic,
		Retention: c.cfg.OffsetsHistory.Retention,
		KafkaOpts: kafkaOpts,
		Logger:    c.cfg.Loggers.Logger(logging.Herder),
		Gate:      c.signing,
	})
	if err != nil {
		return nil, fmt.Errorf("offsets history: %w", err)
	}
	return l, nil
}

// startHistory creates the history topic if it is missing, before the
// coordinator takes any offsets change.
func (c *Coordinator) startHistory(ctx context.Context) error {
	if err := c.history.EnsureTopic(ctx); err != nil {
		return fmt.Errorf("offsets history topic: %w", err)
	}
	return nil
}
