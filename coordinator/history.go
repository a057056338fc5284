package coordinator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/coordinator/internal/confighistory"
	"github.com/sluice-io/sluice/coordinator/internal/laghistory"
	"github.com/sluice-io/sluice/coordinator/internal/offsethistory"
	"github.com/sluice-io/sluice/shared/logging"
)

// The defaults of OffsetsHistoryConfig.
const (
	DefaultOffsetsHistoryTopic     = offsethistory.DefaultTopic
	DefaultOffsetsHistoryRetention = offsethistory.DefaultRetention
)

// The defaults of ConfigHistoryConfig.
const (
	DefaultConfigHistoryTopic     = confighistory.DefaultTopic
	DefaultConfigHistoryRetention = confighistory.DefaultRetention
)

// DefaultLagHistoryInterval is how often the leader samples sinks' lag
// unless Config.LagHistoryInterval says: each partition keeps its newest
// 240 samples, an hour at this interval (docs/observability.md).
const DefaultLagHistoryInterval = laghistory.DefaultInterval

// ConfigHistoryConfig configures the config history: every change of a
// connector's config is recorded in its topic, with the configs before
// and after, for GET …/config/history and restore (docs/config-history.md).
type ConfigHistoryConfig struct {
	// Topic is the history topic, created if missing with one partition,
	// cleanup.policy=delete and retention.ms=Retention (default
	// DefaultConfigHistoryTopic).
	Topic string
	// Retention is the topic's retention when Sluice creates it (default
	// DefaultConfigHistoryRetention, 90 days).
	Retention time.Duration
}

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

func (h ConfigHistoryConfig) validate() error {
	if h.Retention < 0 {
		return errors.New("config history retention must not be negative")
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

// newConfigHistory makes the config history's writer and reader over the
// coordinator's Kafka options.
func (c *Coordinator) newConfigHistory(kafkaOpts []kgo.Opt) (*confighistory.Log, error) {
	l, err := confighistory.New(confighistory.Config{
		Topic:     c.cfg.ConfigHistory.Topic,
		Retention: c.cfg.ConfigHistory.Retention,
		KafkaOpts: kafkaOpts,
		Logger:    c.cfg.Loggers.Logger(logging.Herder),
		Gate:      c.signing,
	})
	if err != nil {
		return nil, fmt.Errorf("config history: %w", err)
	}
	return l, nil
}

// startHistory creates the offsets and config history topics if they are
// missing, before the coordinator takes any change.
func (c *Coordinator) startHistory(ctx context.Context) error {
	if err := c.history.EnsureTopic(ctx); err != nil {
		return fmt.Errorf("offsets history topic: %w", err)
	}
	if err := c.configHistory.EnsureTopic(ctx); err != nil {
		return fmt.Errorf("config history topic: %w", err)
	}
	return nil
}
