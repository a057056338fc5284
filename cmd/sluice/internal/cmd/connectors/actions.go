package connectors

import (
	"context"
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/complete"
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
func act(s *session.Session, name string, c *cli.Context) func(context.Context, string) error {
	cc := s.API.Connectors()
	switch name {
	case "pause":
		return cc.Pause
	case "resume":
		return cc.Resume
	case "stop":
		return cc.Stop
	case "restart":
		opts := restartOptions(c)
		return func(ctx context.Context, n string) error {
			_, err := cc.Restart(ctx, n, opts)
			return err
		}
	case "delete":
		if c.Bool("reset-offsets") {
			return cc.DeleteResettingOffsets
		}
		return cc.Delete
	}
	panic("sluice: no action " + name)
}

// restartFlags are restart's: which of a connector's parts restart
// (POST /connectors/{name}/restart?includeTasks=&onlyFailed=), or one task.
func restartFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "include-tasks", Value: true, Usage: "restart the tasks too (--include-tasks=false: the connector alone, as Kafka Connect's default)"},
		&cli.BoolFlag{Name: "only-failed", Usage: "restart only the connector or tasks that are FAILED"},
		&cli.IntFlag{Name: "task", DefaultText: "none", Usage: "restart this one task of the connector (POST /connectors/{name}/tasks/{task}/restart)"},
	}
}

// restartOptions are restart's query parameters from its flags.
func restartOptions(c *cli.Context) api.RestartOptions {
	return api.RestartOptions{IncludeTasks: c.Bool("include-tasks"), OnlyFailed: c.Bool("only-failed")}
}

// checkRestart refuses restart's flags that do not go together: --task
// names one task of one connector, which --include-tasks, --only-failed,
// several names, a pattern or --server do not.
func checkRestart(c *cli.Context, crit selection.Criteria) error {
	if !c.IsSet("task") {
		return nil
	}
	switch {
	case len(crit.Names) != 1:
		return session.Usage("--task restarts a task of one connector: give exactly one name")
	case c.IsSet("include-tasks") || c.IsSet("only-failed"):
		return session.Usage("--task restarts one task: --include-tasks and --only-failed do not go with it")
	case c.Bool("server"):
		return session.Usage("--task does not go with --server")
	case c.Int("task") < 0:
		return session.Usage("--task %d: a task id is 0 or more", c.Int("task"))
	}
	return nil
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
	if name == "restart" {
		flags = append(flags, restartFlags()...)
	}
	if name == "resume" || name == "restart" {
		flags = append(flags, session.WaitFlag())
	}
	if name != "delete" {
		flags = append(flags, serverFlag())
	}
	return &cli.Command{
		Name: name, Usage: usage + " (NAME…, --match GLOB or -e REGEX)", ArgsUsage: "[NAME…]",
		Flags: flags, BashComplete: complete.Connectors,
		Action: func(c *cli.Context) error {
			crit := selection.Criteria{Names: c.Args().Slice(), Glob: c.String("match"), Regex: c.String("regex")}
			if err := crit.Validate(); err != nil {
				return session.UsageError{Err: err}
			}
			if name == "restart" {
				if err := checkRestart(c, crit); err != nil {
					return err
				}
			}
			s, err := session.Open(c)
			if err != nil {
				return err
			}
			if c.Bool("server") {
				done, err := serverAction(s, name, crit, restartOptions(c))
				if err != nil {
					return err
				}
				return waitRunning(c, s, name, done)
			}
			if c.IsSet("task") {
				return restartTask(c, s, crit.Names[0], c.Int("task"))
			}
			var existing []string
			if crit.ByPattern() {
				if existing, err = session.Call0(s, s.API.Connectors().List); err != nil {
					return err
				}
			}
			names, _ := crit.Select(existing) // validated above
			call := act(s, name, c)
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
			return waitRunning(c, s, name, names)
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

// waitRunning waits, with --wait (resume, restart), until the connectors
// action acted on run.
func waitRunning(c *cli.Context, s *session.Session, action string, names []string) error {
	switch {
	case !c.Bool("wait") || len(names) == 0:
		return nil
	case action == "restart":
		return s.WaitRestarted(slices.Clone(names))
	}
	return s.WaitRunning(slices.Clone(names))
}

// restartTask is `restart NAME --task N`: POST
// /connectors/{name}/tasks/{task}/restart, a line for it, and --wait.
func restartTask(c *cli.Context, s *session.Session, name string, task int) error {
	if err := s.Err(s.API.Connectors().RestartTask(s.Ctx(), name, task)); err != nil {
		return err
	}
	r := ActionResult{Connector: name, Result: fmt.Sprintf("task %d restarted", task)}
	if err := s.Print([]ActionResult{r}, func() *output.Rows { return resultRows([]ActionResult{r}) }); err != nil {
		return err
	}
	return waitRunning(c, s, "restart", []string{name})
}
