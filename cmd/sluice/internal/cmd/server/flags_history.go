package server

import (
	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/coordinator"
)

// The offsets history's flags (docs/offsets.md).
var (
	historyTopicFlag     = envflag.String("offsets-history-topic", coordinator.DefaultOffsetsHistoryTopic, "offsets history topic: every change of a connector's positions, before and after (1 partition, cleanup.policy=delete; created if it never existed, see --internal-topics-automatic-creation); give each cluster on a broker its own, as its other topics")
	historyRetentionFlag = envflag.Duration("offsets-history-retention", coordinator.DefaultOffsetsHistoryRetention, "retention.ms of the offsets history topic when Sluice creates it (an existing topic keeps its own): older entries can no longer be undone")
)

// historyConfig reads the offsets history flags.
func historyConfig(c *cli.Context) coordinator.OffsetsHistoryConfig {
	return coordinator.OffsetsHistoryConfig{
		Topic:     c.String("offsets-history-topic"),
		Retention: c.Duration("offsets-history-retention"),
	}
}
