// Command sluice runs Sluice: the coordinator, an agent, or both with an
// embedded NATS server and Kafka broker for a first run (dev), and operator
// commands that call the REST API.
package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/argv"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/agents"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/audit"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/config"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/connectors"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/info"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/logs"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/maintenance"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/migrate"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/offsets"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/rollout"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/server"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
	"github.com/sluice-io/sluice/cmd/sluice/internal/suggest"
	"github.com/sluice-io/sluice/shared/version"
)

// The exit codes (docs/cli.md).
const (
	exitRefused  = 1 // the server refused a request, or the command failed
	exitUsage    = 2 // the command line is wrong
	exitNoServer = 3 // no Sluice answered at the URL
)

func main() {
	app := newApp()
	if err := app.Run(argv.Reorder(app, os.Args)); err != nil {
		fmt.Fprintln(os.Stderr, "sluice:", message(err))
		os.Exit(exitCode(err))
	}
}

// message is err as the CLI says it: urfave/cli's "No help topic for 'x'"
// of an unknown command in the CLI's words, anything else as it is.
func message(err error) string {
	m := err.Error()
	if rest, ok := strings.CutPrefix(m, "No help topic for "); ok {
		name, hint, _ := strings.Cut(rest, ". ")
		m = "unknown command " + name + " (--help lists the commands)"
		if hint != "" {
			m += "; " + strings.ToLower(hint[:1]) + hint[1:]
		}
	}
	return m
}

// exitCode is the process's exit code for err.
func exitCode(err error) int {
	var ue session.UsageError
	var ce *session.ConnectError
	var ec cli.ExitCoder
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &ec):
		// urfave/cli's own exit errors: "No help topic for 'x'", an
		// unknown command.
		return exitUsage
	case strings.HasPrefix(err.Error(), "Required flag"):
		// urfave/cli's missing required flag error has an unexported
		// type; its message is all there is to tell it by.
		return exitUsage
	case errors.As(err, &ce):
		return exitNoServer
	}
	return exitRefused
}

func newApp() *cli.App {
	app := &cli.App{
		Name:                 "sluice",
		Usage:                "run Kafka Connect-style connectors with a coordinator and agents",
		Version:              version.Version + " (" + version.Commit + ")",
		EnableBashCompletion: true,
		Commands: slices.Concat(
			category("Run Sluice", server.Coordinator(), server.Agent(), server.Dev(), server.NATSConfig(), server.LeaderKey(), server.Auth()),
			category("Connectors",
				connectors.Get(),
				connectors.Describe(),
				connectors.Create(),
				connectors.Apply(),
				connectors.Patch(),
				connectors.Restore(),
				connectors.Action("pause", "pause connectors", "paused"),
				connectors.Action("resume", "resume connectors", "resumed"),
				connectors.Action("stop", "stop connectors", "stopped"),
				connectors.Action("restart", "restart connectors and their tasks (--only-failed, --include-tasks=false, --task N)", "restarted"),
				connectors.Action("delete", "delete connectors", "deleted"),
				connectors.Move("move", false),
				connectors.Move("copy", true),
				connectors.Snapshot(),
				connectors.SnapshotStop(),
				offsets.Command(),
				logs.Command(),
				migrate.Command(),
			),
			category("Operations", info.Command(), maintenance.Command(), rollout.Command(), agents.Command(), agents.Rebalance(), agents.Fleet(connectors.FleetList()), audit.Command()),
			category("The CLI", config.Command(), config.Completion()),
			category("Aliases (the REST API's spelling)", connectors.Aliases()),
		),
	}
	// "Did you mean" for an unknown command: urfave/cli's, with the
	// suggestion only when one is close (its own offers the nearest
	// command however far).
	app.Suggest = true
	cli.SuggestCommand = suggestCommand
	app.OnUsageError = onUsageError
	// main chooses the exit code; urfave/cli would exit with its own.
	app.ExitErrHandler = func(*cli.Context, error) {}
	markUsageErrors(app.Commands)
	pointToGroupFlags(app.Commands)
	return app
}

// category puts cmds in the help's category name.
func category(name string, cmds ...*cli.Command) []*cli.Command {
	for _, c := range cmds {
		c.Category = name
	}
	return cmds
}

// pointToGroupFlags tells the help of each subcommand of a client command
// group (get, connectors, …) where the connection and output flags are:
// they are the group's, so the subcommand's own help does not list them,
// though they are accepted after it.
func pointToGroupFlags(cmds []*cli.Command) {
	for _, c := range cmds {
		if len(c.Subcommands) == 0 || findFlag(c.Flags, "url") == nil {
			continue
		}
		for _, sub := range c.Subcommands {
			if sub.Description == "" {
				sub.Description = fmt.Sprintf("Takes %s's flags too (--url, --context, --user, -o, …: sluice %s --help), before or after its arguments.", c.Name, c.Name)
			}
		}
	}
}

// findFlag reports the flag of flags called name, or nil.
func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// onUsageError makes a flag parsing error a usageError (exit code 2), with
// the command's flags close to an undefined one.
func onUsageError(c *cli.Context, err error, _ bool) error {
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok && c.Command != nil {
		name = strings.TrimLeft(name, "-")
		var known []string
		for _, cc := range c.Lineage() {
			if cc.Command == nil {
				continue
			}
			for _, f := range cc.Command.Flags {
				for _, n := range f.Names() {
					known = append(known, dashed(n))
				}
			}
		}
		err = fmt.Errorf("%w%s", err, suggest.DidYouMean(dashed(name), known))
	}
	return session.UsageError{Err: err}
}

// dashed is a flag's name as typed: -o, --url.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// suggestCommand is urfave/cli's SuggestCommand: the commands close to
// the one typed, as "Did you mean …?", or nothing.
func suggestCommand(cmds []*cli.Command, typed string) string {
	var known []string
	for _, c := range cmds {
		if !c.Hidden {
			known = append(known, c.Names()...)
		}
	}
	m := suggest.Closest(typed, known)
	if len(m) == 0 {
		return ""
	}
	return "Did you mean " + strings.Join(m, " or ") + "?"
}

// markUsageErrors sets onUsageError on every command, as urfave/cli asks
// each command separately.
func markUsageErrors(cmds []*cli.Command) {
	for _, c := range cmds {
		c.OnUsageError = onUsageError
		markUsageErrors(c.Subcommands)
	}
}
