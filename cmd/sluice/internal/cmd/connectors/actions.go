package connectors

import (
	"context"
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/selection"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// ActionResult is what one action did to one connector.
type ActionResult struct {
	Connector string `json:"connector"`
	Result    string `json:"result,omitempty"`
	Error     string `json:"error,omitempty"`
}

// act is the typed client's call of an action on one connector.
func act(s *session.Session, name string, resetOffsets bool) func(context.Context, string) error {
	c := s.API.Connectors()
	switch name {
	case "pause":
		return c.Pause
	case "resume":
		return c.Resume
	case "stop":
		return c.Stop
	case "restart":
		return func(ctx context.Context, n string) error {
			_, err := c.Restart(ctx, n, api.RestartOptions{IncludeTasks: true})
			return err
		}
	case "delete":
		if resetOffsets {
			return c.DeleteResettingOffsets
		}
		return c.Delete
	}
	panic("sluice: no action " + name)
}

// Action makes pause, resume, stop, restart or delete: one REST
// call per selected connector, going on past a failure, a line each.
func Action(name, usage, done string) *cli.Command {
	cmd := action(name, usage, done)
	cmd.Flags = append(session.Flags(), cmd.Flags...)
	return cmd
}

// resetOffsetsFlag is delete's --reset-offsets.
func resetOffsetsFlag() cli.Flag {
	return &cli.BoolFlag{Name: "reset-offsets", Usage: "reset its offsets too"}
}

// action is Action without the connection flags, which the connectors
// group gives its aliases.
func action(name, usage, done string) *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "match", Usage: "the connectors whose names match this glob (path.Match: * ? [a-z])"},
		&cli.StringFlag{Name: "regex", Aliases: []string{"e"}, Usage: "the connectors whose names match this regular expression (anywhere in the name unless anchored)"},
	}
	if name == "delete" {
		flags = append(flags, resetOffsetsFlag())
	}
	if name == "resume" {
		flags = append(flags, session.WaitFlags()...)
	}
	if name != "delete" {
		flags = append(flags, serverFlag())
	}
	return &cli.Command{
		Name: name, Usage: usage + " (NAME…, --match GLOB or -e REGEX)", ArgsUsage: "[NAME…]",
		Flags: flags,
		Action: func(c *cli.Context) error {
			crit := selection.Criteria{Names: c.Args().Slice(), Glob: c.String("match"), Regex: c.String("regex")}
			if err := crit.Validate(); err != nil {
				return session.UsageError{Err: err}
			}
			s, err := session.Open(c)
			if err != nil {
				return err
			}
			if c.Bool("server") {
				done, err := serverAction(s, name, crit)
				if err != nil {
					return err
				}
				return waitResumed(c, s, name, done)
			}
			var existing []string
			if crit.ByPattern() {
				if existing, err = session.Call0(s, s.API.Connectors().List); err != nil {
					return err
				}
			}
			names, _ := crit.Select(existing) // validated above
			call := act(s, name, c.Bool("reset-offsets"))
			results := make([]ActionResult, 0, len(names))
			failed := 0
			var errs []error
			for _, n := range names {
				r := ActionResult{Connector: n, Result: done}
				if err := session.Exec(s, call, n); err != nil {
					r.Result, r.Error = "", err.Error()
					failed++
					errs = append(errs, err)
				}
				results = append(results, r)
			}
			if err := s.Print(results, func() *output.Rows { return resultRows(results) }); err != nil {
				return err
			}
			if len(names) == 0 {
				return fmt.Errorf("no connector matches")
			}
			if len(names) == 1 && failed == 1 {
				// One connector: its own error, and its exit code (3
				// when no server answered).
				return errs[0]
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d connectors failed", failed, len(names))
			}
			return waitResumed(c, s, name, names)
		},
	}
}

// resultRows is a table of action results, "FAILED <why>" for a failure.
func resultRows(results []ActionResult) *output.Rows {
	t := output.NewRows("CONNECTOR", "RESULT")
	for _, r := range results {
		res := r.Result
		if r.Error != "" {
			res = "FAILED " + r.Error
		}
		t.Add(r.Connector, res)
	}
	return t
}

// waitResumed waits, for resume --wait, until the connectors resumed run.
func waitResumed(c *cli.Context, s *session.Session, action string, names []string) error {
	if action != "resume" || !c.Bool("wait") {
		return nil
	}
	return s.WaitRunning(slices.Clone(names), c.Duration("timeout"))
}
