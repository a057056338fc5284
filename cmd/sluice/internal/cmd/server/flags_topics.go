package server

import (
	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/urfave/cli/v2"
)

// topicCreationFlag mirrors Kafka Connect 4.4's
// internal.topics.automatic.creation.enable (KIP-1209), default true as
// there. Either way a topic that existed before and vanished is never
// created again (docs/reliability.md).
var topicCreationFlag = &cli.BoolFlag{
	Name:    "internal-topics-automatic-creation",
	Value:   true,
	EnvVars: envflag.Env("internal-topics-automatic-creation"),
	Usage: "coordinators: create the internal topics (config, offsets, status, fleet, audit, offsets history, connectors' own offsets topics) that never existed, as Kafka Connect's internal.topics.automatic.creation.enable; " +
		"false: create none, a missing one is an error naming it. Either way a topic that existed before and vanished is never created again: Sluice stops with an error naming it",
}

// topicCreationDisabled reads --internal-topics-automatic-creation.
func topicCreationDisabled(c *cli.Context) bool {
	return !c.Bool(topicCreationFlag.Name)
}
