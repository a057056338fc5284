// Package rollout is `sluice rollout …`: health-gated config rollouts,
// created, listed, followed, paused, resumed and aborted.
package rollout

// sluice rollout: health-gated config rollouts through /sluice/rollouts
// (docs/operations.md, "Health-gated config rollouts").

import (
	"context"
	"fmt"
	stdmaps "maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/configdiff"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// Command is sluice rollout create|list|get|pause|resume|abort.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "rollout",
		Usage: "roll a config patch out to many connectors, batch by batch behind a health gate",
		Flags: session.FlagsUnbounded(), // --watch follows it for as long as it takes
		Subcommands: []*cli.Command{
			{
				Name: "create", Usage: "start a rollout from a JSON file (match or names, patch, batches, health, on_failure)",
				Flags: []cli.Flag{
					session.FileFlag(),
					&cli.BoolFlag{Name: "watch", Usage: "follow its progress until it ends (done, paused, rolled back, aborted)"},
					&cli.DurationFlag{Name: "interval", Value: time.Second, Usage: "how often --watch polls"},
					&cli.BoolFlag{Name: "dry-run", Usage: "start nothing: print the batches and each connector's change, every patched config validated"},
				},
				Action: func(c *cli.Context) error {
					if c.Bool("dry-run") && c.Bool("watch") {
						return session.Usage("--dry-run starts nothing to --watch")
					}
					var req api.RolloutRequest
					if err := session.ReadJSON(c.String("file"), &req); err != nil {
						return err
					}
					s, err := session.Open(c)
					if err != nil {
						return err
					}
					if c.Bool("dry-run") {
						p, err := session.Call(s, s.API.Fleet().PlanRollout, req)
						if err != nil {
							return err
						}
						return printRollout(s, p)
					}
					r, err := session.Call(s, s.API.Fleet().CreateRollout, req)
					if err != nil {
						return err
					}
					if !c.Bool("watch") {
						return printRollout(s, r)
					}
					fmt.Fprintf(s.W, "rollout %s: %d connectors in %d batches\n", r.ID, rolloutSize(r), len(r.Batches))
					return watchRollout(s, r.ID, c.Duration("interval"))
				},
			},
			{Name: "list", Usage: "list the rollouts, oldest first", Action: func(c *cli.Context) error {
				s, err := session.Open(c)
				if err != nil {
					return err
				}
				list, err := session.Call0(s, s.API.Fleet().Rollouts)
				if err != nil {
					return err
				}
				return s.Print(list, func() *output.Rows { return rolloutRows(list.Rollouts) })
			}},
			{
				Name: "get", Usage: "show a rollout's progress: each batch and connector", ArgsUsage: "ID",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "watch", Usage: "follow its progress until it ends"},
					&cli.DurationFlag{Name: "interval", Value: time.Second, Usage: "how often --watch polls"}},
				Action: func(c *cli.Context) error {
					s, id, err := rolloutArg(c)
					if err != nil {
						return err
					}
					if c.Bool("watch") {
						return watchRollout(s, id, c.Duration("interval"))
					}
					r, err := session.Call(s, s.API.Fleet().Rollout, id)
					if err != nil {
						return err
					}
					return printRollout(s, r)
				},
			},
			rolloutAction("pause", "pause a running rollout before its next connector"),
			rolloutAction("resume", "resume a paused rollout where it stopped (a failed batch is verified again)"),
			rolloutAction("abort", "stop a rollout for good, leaving what it applied"),
		},
	}
}

// rolloutAction is a subcommand PUTting /sluice/rollouts/ID/<name>.
func rolloutAction(name, usage string) *cli.Command {
	call := map[string]func(*api.Fleet) func(context.Context, string) (api.Rollout, error){
		"pause":  func(f *api.Fleet) func(context.Context, string) (api.Rollout, error) { return f.PauseRollout },
		"resume": func(f *api.Fleet) func(context.Context, string) (api.Rollout, error) { return f.ResumeRollout },
		"abort":  func(f *api.Fleet) func(context.Context, string) (api.Rollout, error) { return f.AbortRollout },
	}[name]
	return &cli.Command{Name: name, Usage: usage, ArgsUsage: "ID", Action: func(c *cli.Context) error {
		s, id, err := rolloutArg(c)
		if err != nil {
			return err
		}
		r, err := session.Call(s, call(s.API.Fleet()), id)
		if err != nil {
			return err
		}
		return printRollout(s, r)
	}}
}

// rolloutArg opens the session of a command whose one argument is a
// rollout's id, and returns the id.
func rolloutArg(c *cli.Context) (*session.Session, string, error) {
	if c.NArg() != 1 || strings.TrimSpace(c.Args().First()) == "" {
		return nil, "", session.Usage("%s takes one rollout id (sluice rollout list shows them)", c.Command.Name)
	}
	s, err := session.Open(c)
	return s, c.Args().First(), err
}

// printRollout prints one rollout: as a table, a line about it and a row
// per connector.
func printRollout(s *session.Session, r api.Rollout) error {
	switch {
	case s.Format != output.Table:
	case r.State == api.RolloutPlanned:
		fmt.Fprintf(s.W, "dry run: %d connectors in %d batches, on failure %s, healthy for %s with at most %d task(s) FAILED; nothing was started\n",
			rolloutSize(r), len(r.Batches), r.Request.OnFailure, r.Request.Health.RunningFor, r.Request.Health.MaxFailedTasks)
	default:
		fmt.Fprintf(s.W, "rollout %s: %s, batch %s, on failure %s, healthy for %s with at most %d task(s) FAILED\n",
			r.ID, r.State, batchPosition(r), r.Request.OnFailure, r.Request.Health.RunningFor, r.Request.Health.MaxFailedTasks)
		if r.Error != "" {
			fmt.Fprintf(s.W, "error: %s\n", r.Error)
		}
	}
	return s.Print(r, func() *output.Rows {
		rows := output.NewRows("BATCH", "BATCH STATE", "CONNECTOR", "STATE", "WAS RUNNING", "CHANGE")
		for i, b := range r.Batches {
			for _, c := range b.Connectors {
				rows.Add(strconv.Itoa(i+1), b.State, c.Name, c.State, strconv.FormatBool(c.WasRunning), rolloutChange(c))
			}
		}
		return rows
	})
}

// rolloutRows is the table of sluice rollout list.
func rolloutRows(list []api.Rollout) *output.Rows {
	rows := output.NewRows("ID", "STATE", "BATCH", "CONNECTORS", "PATCH", "PRINCIPAL", "CREATED")
	for _, r := range list {
		keys := slices.Sorted(stdmaps.Keys(r.Request.Patch))
		rows.Add(r.ID, r.State, batchPosition(r), strconv.Itoa(rolloutSize(r)), strings.Join(keys, ","), r.Principal,
			r.CreatedAt.Local().Format(time.DateTime))
	}
	return rows
}

// batchPosition is "2/4": the batch in progress (or the last, once all are
// done) of how many.
func batchPosition(r api.Rollout) string {
	return fmt.Sprintf("%d/%d", min(r.Batch+1, len(r.Batches)), len(r.Batches))
}

func rolloutSize(r api.Rollout) int {
	n := 0
	for _, b := range r.Batches {
		n += len(b.Connectors)
	}
	return n
}

// rolloutChange is the keys a connector's patch adds (+), changes (~) and
// removes (-).
func rolloutChange(c api.RolloutConnector) string {
	var keys []string
	for _, k := range configdiff.Diff(c.Before, c.After) {
		keys = append(keys, k.Mark()+k.Key)
	}
	return strings.Join(keys, " ")
}
