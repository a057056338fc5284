package connectors

import (
	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// Aliases is `sluice connectors …`, the REST-mirroring spelling: each of
// its subcommands is an alias of a verb (`connectors pause X` is
// `pause X`, `connectors status X` is `get tasks X`, `connectors gauges X`
// is `get gauges X`) and runs that verb's
// code. The reads print the server's answer (session.PrintAnswer) rather than the
// verb's rows (session.AsAnswer: `connectors list` prints GET /connectors,
// the names); the group's -o defaults to json, as
// these commands always printed JSON.
func Aliases() *cli.Command {
	return &cli.Command{
		Name:    "connectors",
		Aliases: []string{"connector"},
		Usage:   "aliases of get, describe, create, restore, pause, resume, stop, restart and delete, spelled as the REST API (the server's answers, JSON by default)",
		Flags:   session.FlagsOutput("json"),
		Subcommands: []*cli.Command{
			Alias("list", "get connectors", Answer("", getConnectorsCommand())),
			Alias("create", "create", create()),
			Alias("get", "describe connector", Answer("NAME", describeConnectorCommand())),
			Alias("status", "get tasks", Answer("NAME", getTasksCommand())),
			Alias("tasks", "get task-configs", Answer("NAME", getTaskConfigsCommand())),
			Alias("gauges", "get gauges", Answer("NAME", getGaugesCommand())),
			Alias("lag", "get lag", Answer("NAME", getLagCommand())),
			Alias("config-history", "get config-history", Answer("NAME [ID]", getConfigHistoryCommand())),
			Alias("config-restore", "restore config", Answer("NAME ID", restoreConfigCommand())),
			Alias("stop", "stop", action("stop", "stop connectors", "stopped")),
			Alias("pause", "pause", action("pause", "pause connectors", "paused")),
			Alias("resume", "resume", action("resume", "resume connectors", "resumed")),
			Alias("restart", "restart", action("restart", "restart connectors and their tasks (--only-failed, --include-tasks=false, --task N)", "restarted")),
			Alias("delete", "delete", action("delete", "delete connectors", "deleted")),
			Alias("snapshot", "snapshot", session.AsAnswer(snapshot())),
			Alias("snapshot-stop", "snapshot-stop", session.AsAnswer(snapshotStop())),
		},
	}
}

// Answer makes cmd, a read, print the server's answer (session.PrintAnswer)
// (session.AsAnswer), taking args (the one connector it reads, or nothing
// for a list). It returns cmd.
func Answer(args string, cmd *cli.Command) *cli.Command {
	cmd.ArgsUsage = args
	return session.AsAnswer(cmd)
}

// Alias names cmd, a verb's command, as the subcommand name of a
// REST-mirroring group, and says in its help which verb it is an alias
// of. It returns cmd.
func Alias(name, of string, cmd *cli.Command) *cli.Command {
	cmd.Name, cmd.Aliases = name, nil
	cmd.Usage = "alias of `sluice " + of + "`: " + cmd.Usage
	return cmd
}
