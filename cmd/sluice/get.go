package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
)

// getCommand lists connectors, plugins, offsets and tasks, kcctl's "get".
func getCommand() *cli.Command {
	return &cli.Command{
		Name:  "get",
		Usage: "list connectors, plugins, offsets, tasks or agents",
		Flags: clientFlags(),
		Subcommands: []*cli.Command{
			{Name: "connectors", Aliases: []string{"connector", "conn"}, ArgsUsage: "[NAME…]",
				Usage: "connectors with their type, state, tasks and class (all, or the ones named)", Action: getConnectors},
			{Name: "plugins", Aliases: []string{"plugin"}, ArgsUsage: "[CLASS…]",
				Usage: "connector plugins (all, or those whose class or short name is given)", Action: getPlugins},
			{Name: "offsets", Aliases: []string{"offset"}, ArgsUsage: "NAME…",
				Usage: "the named connectors' offsets", Action: getOffsets},
			{Name: "tasks", Aliases: []string{"task"}, ArgsUsage: "NAME…",
				Usage: "the named connectors' tasks with their state and agent", Action: getTasks},
			{Name: "agents", Aliases: []string{"agent"}, Usage: "the agents with their state, tasks, version, labels and lease", Action: listAgents},
		},
	}
}

// connectorRow is one connector in `get connectors`.
type connectorRow struct {
	Name         string `json:"name"`
	Type         string `json:"type"`
	State        string `json:"state"`
	TasksRunning int    `json:"tasks_running"`
	Tasks        int    `json:"tasks"`
	Class        string `json:"class"`
}

// listConnectors is GET /connectors?expand=status&expand=info.
func (s *session) listConnectors() (map[string]api.ConnectorExpanded, error) {
	var all map[string]api.ConnectorExpanded
	if err := s.get("/connectors?expand=status&expand=info", &all); err != nil {
		return nil, err
	}
	return all, nil
}

// notFound is the error of names asked for that do not exist, after the
// others were printed.
func notFound(kind string, missing []string) error {
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("404: %s not found: %s", kind, strings.Join(missing, ", "))
}

func getConnectors(c *cli.Context) error {
	s, err := open(c)
	if err != nil {
		return err
	}
	all, err := s.listConnectors()
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
	var rows []connectorRow
	var missing []string
	for _, n := range names {
		e, ok := all[n]
		if !ok {
			missing = append(missing, n)
			continue
		}
		r := connectorRow{Name: n}
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
		rows = []connectorRow{}
	}
	err = s.print(rows, func() *output.Rows {
		t := output.NewRows("NAME", "TYPE", "STATE", "TASKS", "CLASS")
		for _, r := range rows {
			t.Add(r.Name, r.Type, r.State, fmt.Sprintf("%d/%d", r.TasksRunning, r.Tasks), r.Class)
		}
		return t
	})
	return errors.Join(err, notFound("connector", missing))
}

func getPlugins(c *cli.Context) error {
	s, err := open(c)
	if err != nil {
		return err
	}
	var plugins []api.PluginInfo
	if err := s.get("/connector-plugins?connectorsOnly=false", &plugins); err != nil {
		return err
	}
	want := c.Args().Slice()
	var rows []api.PluginInfo
	var missing []string
	for _, w := range want {
		if !slices.ContainsFunc(plugins, func(p api.PluginInfo) bool { return pluginIs(p, w) }) {
			missing = append(missing, w)
		}
	}
	for _, p := range plugins {
		if len(want) == 0 || slices.ContainsFunc(want, func(w string) bool { return pluginIs(p, w) }) {
			rows = append(rows, p)
		}
	}
	if rows == nil {
		rows = []api.PluginInfo{}
	}
	err = s.print(rows, func() *output.Rows {
		t := output.NewRows("CLASS", "TYPE", "VERSION")
		for _, p := range rows {
			t.Add(p.Class, p.Type, p.Version)
		}
		return t
	})
	return errors.Join(err, notFound("plugin", missing))
}

// pluginIs reports whether name is p's class, or its short name (the
// class after the last dot, with or without "Connector").
func pluginIs(p api.PluginInfo, name string) bool {
	short := p.Class[strings.LastIndexByte(p.Class, '.')+1:]
	return name == p.Class || name == short || name+"Connector" == short
}

// offsetRow is one partition's offset in `get offsets`.
type offsetRow struct {
	Connector string         `json:"connector"`
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// perConnector prints the rows fetch returns for each named connector,
// going on past a connector that fails, and returns the failures.
func perConnector[T any](c *cli.Context, fetch func(s *session, name string) ([]T, error), table func([]T) *output.Rows) error {
	if c.NArg() == 0 {
		return usageError{errors.New("name at least one connector")}
	}
	s, err := open(c)
	if err != nil {
		return err
	}
	rows := []T{}
	var errs []error
	for _, n := range c.Args().Slice() {
		more, err := fetch(s, n)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n, err))
		}
		rows = append(rows, more...)
	}
	err = s.print(rows, func() *output.Rows { return table(rows) })
	return errors.Join(append([]error{err}, errs...)...)
}

func getOffsets(c *cli.Context) error {
	return perConnector(c, func(s *session, n string) ([]offsetRow, error) {
		var o api.ConnectorOffsets
		if err := s.get(connectorPath(n, "/offsets"), &o); err != nil {
			return nil, err
		}
		rows := make([]offsetRow, 0, len(o.Offsets))
		for _, e := range o.Offsets {
			rows = append(rows, offsetRow{Connector: n, Partition: e.Partition, Offset: e.Offset})
		}
		return rows, nil
	}, func(rows []offsetRow) *output.Rows {
		t := output.NewRows("CONNECTOR", "PARTITION", "OFFSET")
		for _, r := range rows {
			t.Add(r.Connector, compact(r.Partition), compact(r.Offset))
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
	return perConnector(c, func(s *session, n string) ([]taskRow, error) {
		var st api.ConnectorStateInfo
		if err := s.get(connectorPath(n, "/status"), &st); err != nil {
			return nil, err
		}
		rows := make([]taskRow, 0, len(st.Tasks))
		for _, t := range st.Tasks {
			rows = append(rows, taskRow{Connector: n, TaskState: t})
		}
		return rows, nil
	}, taskTable)
}

// taskTable shows tasks with their agent and the first line of a failed
// task's trace.
func taskTable(rows []taskRow) *output.Rows {
	t := output.NewRows("CONNECTOR", "TASK", "STATE", "AGENT", "TRACE")
	for _, r := range rows {
		t.Add(r.Connector, strconv.Itoa(r.ID), r.State, r.WorkerID, firstLine(r.Trace))
	}
	return t
}

// firstLine is a trace's first line, where Java and Go put the message.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return oneLine(line, 100)
}
