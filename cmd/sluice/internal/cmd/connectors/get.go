// Package connectors is the verbs on connectors — get, describe, create,
// apply, patch, restore, pause, resume, stop, restart, delete, move,
// copy — and `sluice connectors …`, their REST-mirroring aliases.
package connectors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/agents"
	"github.com/sluice-io/sluice/cmd/sluice/internal/complete"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
	"github.com/sluice-io/sluice/cmd/sluice/internal/suggest"
)

// Get lists connectors, plugins, offsets and tasks, kcctl's "get".
func Get() *cli.Command {
	return &cli.Command{
		Name:  "get",
		Usage: "list connectors, plugins, offsets, tasks, task configs, task gauges, a sink's lag, a config history or agents",
		Flags: session.Flags(),
		Subcommands: []*cli.Command{
			getConnectorsCommand(),
			{Name: "plugins", Aliases: []string{"plugin"}, ArgsUsage: "[CLASS…]",
				Usage: "connector plugins (all, or those whose class or short name is given)", Action: getPlugins, BashComplete: complete.Plugins},
			GetOffsets(),
			getTasksCommand(),
			getTaskConfigsCommand(),
			getGaugesCommand(),
			getLagCommand(),
			getConfigHistoryCommand(),
			{Name: "agents", Aliases: []string{"agent"}, Usage: "the agents with their state, tasks, version, labels and lease", Action: agents.List},
		},
	}
}

// getConnectorsCommand is `get connectors [NAME…]`.
func getConnectorsCommand() *cli.Command {
	return &cli.Command{Name: "connectors", Aliases: []string{"connector", "conn"}, ArgsUsage: "[NAME…]",
		Usage: "connectors with their type, state, tasks and class (all, or the ones named)", Action: getConnectors, BashComplete: complete.Connectors}
}

// GetOffsets is `get offsets NAME…`, which `offsets get NAME` is an alias
// of.
func GetOffsets() *cli.Command {
	return &cli.Command{Name: "offsets", Aliases: []string{"offset"}, ArgsUsage: "NAME…",
		Usage: "the named connectors' offsets", Action: getOffsets, BashComplete: complete.Connectors}
}

// getTasksCommand is `get tasks NAME…`.
func getTasksCommand() *cli.Command {
	return &cli.Command{Name: "tasks", Aliases: []string{"task"}, ArgsUsage: "NAME…",
		Usage: "the named connectors' tasks with their state and agent", Action: getTasks, BashComplete: complete.Connectors}
}

// getTaskConfigsCommand is `get task-configs NAME…`.
func getTaskConfigsCommand() *cli.Command {
	return &cli.Command{Name: "task-configs", Aliases: []string{"task-config"}, ArgsUsage: "NAME…",
		Usage: "the named connectors' task configs (GET /connectors/NAME/tasks)", Action: getTaskConfigs, BashComplete: complete.Connectors}
}

// ConnectorRow is one connector in `get connectors`.
type ConnectorRow struct {
	Name         string `json:"name"`
	Type         string `json:"type"`
	State        string `json:"state"`
	TasksRunning int    `json:"tasks_running"`
	Tasks        int    `json:"tasks"`
	Class        string `json:"class"`
}

// notFound is an error for each name a get did not find, in the CLI's one
// form of a refusal ("404: Connector X not found"; session.NotFound), with
// the known names close to it.
func notFound(kind string, missing, known []string) error {
	var errs []error
	for _, n := range missing {
		errs = append(errs, fmt.Errorf("404: %s %s not found%s", kind, n, suggest.DidYouMean(n, known)))
	}
	return errors.Join(errs...)
}

func getConnectors(c *cli.Context) error {
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	if s.Answer {
		// connectors list: GET /connectors, the names.
		names, err := session.Call0(s, s.API.Connectors().List)
		if err != nil {
			return err
		}
		return s.PrintAnswer(names)
	}
	all, err := session.Call2(s, s.API.Connectors().ListExpanded, true, true)
	if err != nil {
		return err
	}
	names := c.Args().Slice()
	if len(names) == 0 {
		for n := range all {
			names = append(names, n)
		}
		slices.Sort(names)
	}
	var rows []ConnectorRow
	var missing []string
	for _, n := range names {
		e, ok := all[n]
		if !ok {
			missing = append(missing, n)
			continue
		}
		r := ConnectorRow{Name: n}
		if e.Info != nil {
			r.Type, r.Class = e.Info.Type, e.Info.Config["connector.class"]
		}
		if e.Status != nil {
			r.State, r.Tasks = e.Status.Connector.State, len(e.Status.Tasks)
			if r.Type == "" {
				r.Type = e.Status.Type
			}
			for _, t := range e.Status.Tasks {
				if t.State == "RUNNING" {
					r.TasksRunning++
				}
			}
		}
		rows = append(rows, r)
	}
	if rows == nil {
		rows = []ConnectorRow{}
	}
	err = s.Print(rows, func() *output.Rows {
		t := output.NewRows("NAME", "TYPE", "STATE", "TASKS", "CLASS")
		for _, r := range rows {
			t.Add(r.Name, r.Type, r.State, fmt.Sprintf("%d/%d", r.TasksRunning, r.Tasks), r.Class)
		}
		return t
	})
	return errors.Join(err, notFound("Connector", missing, slices.Collect(maps.Keys(all))))
}

func getPlugins(c *cli.Context) error {
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	plugins, err := session.Call0(s, s.API.Plugins().ListAll)
	if err != nil {
		return err
	}
	want := c.Args().Slice()
	var rows []api.PluginInfo
	var missing []string
	for _, w := range want {
		if !slices.ContainsFunc(plugins, func(p api.PluginInfo) bool { return PluginIs(p, w) }) {
			missing = append(missing, w)
		}
	}
	for _, p := range plugins {
		if len(want) == 0 || slices.ContainsFunc(want, func(w string) bool { return PluginIs(p, w) }) {
			rows = append(rows, p)
		}
	}
	if rows == nil {
		rows = []api.PluginInfo{}
	}
	err = s.Print(rows, func() *output.Rows {
		t := output.NewRows("CLASS", "TYPE", "VERSION")
		for _, p := range rows {
			t.Add(p.Class, p.Type, p.Version)
		}
		return t
	})
	return errors.Join(err, notFound("Plugin", missing, session.PluginNames(plugins)))
}

// PluginIs reports whether name is p's class, or its short name (the
// class after the last dot, with or without "Connector").
func PluginIs(p api.PluginInfo, name string) bool {
	return api.PluginNamed(p.Class, name)
}

// OffsetRow is one partition's offset in `get offsets`.
type OffsetRow struct {
	Connector string         `json:"connector"`
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// perConnector reads each named connector's answer to read and prints
// the rows that rows makes of them, going on past a connector that fails,
// and returns the failures. In the answer view (a REST-mirroring alias)
// it takes one name and prints the server's answer (PrintAnswer).
func perConnector[A, T any](c *cli.Context, read func(s *session.Session) func(context.Context, string) (A, error), rows func(name string, doc A) []T, table func([]T) *output.Rows) error {
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	switch {
	case s.Answer && c.NArg() != 1:
		return session.Usage("give exactly one connector name")
	case c.NArg() == 0:
		return session.Usage("name at least one connector")
	}
	all := []T{}
	var errs []error
	for _, n := range c.Args().Slice() {
		doc, err := session.Call(s, read(s), n)
		switch {
		case s.Answer:
			if err != nil {
				return err
			}
			return s.PrintAnswer(doc)
		case err != nil:
			if _, missing := session.MissingConnector(err); !missing {
				err = fmt.Errorf("%s: %w", n, err) // the error does not name it
			}
			errs = append(errs, err)
		default:
			all = append(all, rows(n, doc)...)
		}
	}
	err = s.Print(all, func() *output.Rows { return table(all) })
	return errors.Join(append([]error{err}, errs...)...)
}

func getOffsets(c *cli.Context) error {
	return perConnector(c, func(s *session.Session) func(context.Context, string) (api.ConnectorOffsets, error) {
		return s.API.Offsets().Get
	}, func(n string, o api.ConnectorOffsets) []OffsetRow {
		rows := make([]OffsetRow, 0, len(o.Offsets))
		for _, e := range o.Offsets {
			rows = append(rows, OffsetRow{Connector: n, Partition: e.Partition, Offset: e.Offset})
		}
		return rows
	}, func(rows []OffsetRow) *output.Rows {
		t := output.NewRows("CONNECTOR", "PARTITION", "OFFSET")
		for _, r := range rows {
			t.Add(r.Connector, output.Compact(r.Partition), output.Compact(r.Offset))
		}
		return t
	})
}

// taskRow is one task in `get tasks`.
type taskRow struct {
	Connector string `json:"connector"`
	api.TaskState
}

func getTasks(c *cli.Context) error {
	return perConnector(c, func(s *session.Session) func(context.Context, string) (api.ConnectorStateInfo, error) {
		return s.API.Connectors().Status
	}, func(n string, st api.ConnectorStateInfo) []taskRow {
		rows := make([]taskRow, 0, len(st.Tasks))
		for _, t := range st.Tasks {
			rows = append(rows, taskRow{Connector: n, TaskState: t})
		}
		return rows
	}, taskTable)
}

// taskConfigRow is one task's config in `get task-configs`.
type taskConfigRow struct {
	Connector string            `json:"connector"`
	Task      int               `json:"task"`
	Config    map[string]string `json:"config"`
}

func getTaskConfigs(c *cli.Context) error {
	return perConnector(c, func(s *session.Session) func(context.Context, string) ([]api.TaskInfo, error) {
		return s.API.Connectors().Tasks
	}, func(n string, tasks []api.TaskInfo) []taskConfigRow {
		rows := make([]taskConfigRow, 0, len(tasks))
		for _, t := range tasks {
			rows = append(rows, taskConfigRow{Connector: n, Task: t.ID.Task, Config: t.Config})
		}
		return rows
	}, func(rows []taskConfigRow) *output.Rows {
		t := output.NewRows("CONNECTOR", "TASK", "CONFIG")
		for _, r := range rows {
			t.Add(r.Connector, strconv.Itoa(r.Task), output.Compact(r.Config))
		}
		return t
	})
}

// taskTable shows tasks with their agent and the first line of a failed
// task's trace.
func taskTable(rows []taskRow) *output.Rows {
	t := output.NewRows("CONNECTOR", "TASK", "STATE", "AGENT", "TRACE")
	for _, r := range rows {
		t.Add(r.Connector, strconv.Itoa(r.ID), r.State, r.WorkerID, output.FirstLine(r.Trace))
	}
	return t
}
