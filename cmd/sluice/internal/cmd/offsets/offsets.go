// Package offsets is `sluice offsets …`: Kafka Connect's offsets
// endpoints (alter, reset), Sluice's dry runs, resets by rule, the offsets
// history with undo and restore, and export and import of connectors with
// their positions.
package offsets

import (
	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/connectors"
	"github.com/sluice-io/sluice/cmd/sluice/internal/complete"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// Command is the offsets group. Its -o defaults to json, the
// REST-mirroring commands' default (`offsets get`, and `alter` and `reset`
// without a dry run or a rule, print the server's answer); its other
// commands print tables unless -o is given.
func Command() *cli.Command {
	cmd := &cli.Command{
		Name:  "offsets",
		Usage: "read and change connector offsets: Kafka Connect's endpoints (JSON by default), dry runs, resets by rule, the offsets history, undo and restore",
		Flags: session.FlagsOutputUnbounded("json"), // export and import go through many connectors
		Subcommands: []*cli.Command{
			connectors.Alias("get", "get offsets", connectors.Answer("NAME", connectors.GetOffsets())),
			offsetsExportCommand(), offsetsImportCommand(),
			offsetsResetCommand(), offsetsAlterCommand(),
			offsetsHistoryCommand(), offsetsUndoCommand(), offsetsRestoreCommand(),
		},
	}
	for _, sub := range cmd.Subcommands {
		if sub.Name != "import" {
			sub.BashComplete = complete.Connectors // each takes connector names
		}
	}
	return cmd
}
