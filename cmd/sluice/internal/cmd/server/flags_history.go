package server

import (
	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/coordinator"
)

// The offsets history's flags (docs/offsets.md), the config history's
// (docs/config-history.md) and the lag history's (docs/observability.md).
var (
	historyTopicFlag     = envflag.String("offsets-history-topic", coordinator.DefaultOffsetsHistoryTopic, "offsets history topic: every change of a connector's positions, before and after (1 partition, cleanup.policy=delete; created if it never existed, see --internal-topics-automatic-creation); give each cluster on a broker its own, as its other topics")
	historyRetentionFlag = envflag.Duration("offsets-history-retention", coordinator.DefaultOffsetsHistoryRetention, "retention.ms of the offsets history topic when Sluice creates it (an existing topic keeps its own): older entries can no longer be undone")

	configHistoryTopicFlag     = envflag.String("config-history-topic", coordinator.DefaultConfigHistoryTopic, "config history topic: every change of a connector's config, before and after (1 partition, cleanup.policy=delete; created if it never existed, see --internal-topics-automatic-creation); give each cluster on a broker its own, as its other topics")
	configHistoryRetentionFlag = envflag.Duration("config-history-retention", coordinator.DefaultConfigHistoryRetention, "retention.ms of the config history topic when Sluice creates it (an existing topic keeps its own): older entries can no longer be restored")
	lagHistoryIntervalFlag     = envflag.Duration("lag-history-interval", coordinator.DefaultLagHistoryInterval, "how often the leader samples every sink's lag per partition for GET …/lag/history; each partition keeps its newest 240 samples (an hour at 15s)")
)

// historyFlags are the flags of the histories a coordinator keeps.
func historyFlags() []cli.Flag {
	return []cli.Flag{historyTopicFlag, historyRetentionFlag, configHistoryTopicFlag, configHistoryRetentionFlag, lagHistoryIntervalFlag}
}

// configHistoryConfig reads the config history flags.
func configHistoryConfig(c *cli.Context) coordinator.ConfigHistoryConfig {
	return coordinator.ConfigHistoryConfig{
		Topic:     c.String("config-history-topic"),
		Retention: c.Duration("config-history-retention"),
	}
}

// historyConfig reads the offsets history flags.
func historyConfig(c *cli.Context) coordinator.OffsetsHistoryConfig {
	return coordinator.OffsetsHistoryConfig{
		Topic:     c.String("offsets-history-topic"),
		Retention: c.Duration("offsets-history-retention"),
	}
}
