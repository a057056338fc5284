package connectors

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/complete"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// Describe shows everything about one connector.
func Describe() *cli.Command {
	return &cli.Command{
		Name:        "describe",
		Usage:       "show a connector in full (state, tasks, config, topics, offsets, a sink's lag, its tasks' gauges), or a plugin's config keys",
		Flags:       session.Flags(),
		Subcommands: []*cli.Command{describeConnectorCommand(), describePluginCommand()},
	}
}

// describeConnectorCommand is `describe connector NAME`.
func describeConnectorCommand() *cli.Command {
	return &cli.Command{
		Name: "connector", Aliases: []string{"connectors", "conn"}, ArgsUsage: "NAME",
		Usage: "show a connector in full", Action: describeConnector, BashComplete: complete.Connectors,
	}
}

// description is what `describe connector` shows.
type description struct {
	Name    string                `json:"name"`
	Type    string                `json:"type"`
	State   api.ConnectorState    `json:"connector"`
	Tasks   []api.TaskState       `json:"tasks"`
	Config  map[string]string     `json:"config"`
	Topics  []string              `json:"topics"`
	Offsets []api.ConnectorOffset `json:"offsets"`
	Lag     *api.ConnectorLag     `json:"lag,omitempty"`
	// Gauges are what its tasks report of themselves, when any does.
	Gauges  []GaugeRow             `json:"gauges,omitempty"`
	Missing map[string]string      `json:"unavailable,omitempty"`
	status  api.ConnectorStateInfo // for the table
}

func describeConnector(c *cli.Context) error {
	name, err := session.NameArg(c)
	if err != nil {
		return err
	}
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	info, err := session.Call(s, s.API.Connectors().Get, name)
	if err != nil {
		return err
	}
	if s.Answer {
		return s.PrintAnswer(info)
	}
	d := description{Name: name, Type: info.Type, Config: info.Config, Missing: map[string]string{}}
	if d.status, err = session.Call(s, s.API.Connectors().Status, name); err != nil {
		return err
	}
	d.State, d.Tasks = d.status.Connector, d.status.Tasks
	// The parts below are extras: a failure to read one is shown in its
	// place, not fatal, as the connector itself was read.
	if topics, err := session.Call(s, s.API.Connectors().Topics, name); err != nil {
		d.Missing["topics"] = err.Error()
	} else {
		d.Topics = topics
	}
	if offsets, err := session.Call(s, s.API.Offsets().Get, name); err != nil {
		d.Missing["offsets"] = err.Error()
	} else {
		d.Offsets = offsets.Offsets
	}
	if d.Type == "sink" {
		lag, err := session.Call(s, s.API.Connectors().Lag, name)
		switch {
		case session.IsStatus(err, http.StatusNotFound):
			d.Missing["lag"] = "this coordinator does not serve GET /sluice/connectors/{name}/lag"
		case err != nil:
			d.Missing["lag"] = err.Error()
		default:
			d.Lag = &lag
		}
	}
	// Most connectors report no gauges: the section is shown only when a
	// task does, and a coordinator without the route (404) says nothing.
	gauges, err := session.Call(s, s.API.Connectors().Gauges, name)
	switch {
	case session.IsStatus(err, http.StatusNotFound):
	case err != nil:
		d.Missing["gauges"] = err.Error()
	case slices.ContainsFunc(gauges.Tasks, func(t api.TaskGauges) bool { return len(t.Gauges) > 0 }):
		d.Gauges = gaugeRows(name, gauges)
	}
	if len(d.Missing) == 0 {
		d.Missing = nil
	}
	if s.Format != output.Table {
		return s.Print(d, nil)
	}
	return d.write(s.W)
}

// write prints the description for people: sections, each a table.
func (d description) write(w io.Writer) error {
	fmt.Fprintf(w, "name:   %s\ntype:   %s\nstate:  %s\nworker: %s\n", d.Name, output.OrDash(d.Type), d.State.State, output.OrDash(d.State.WorkerID))
	if d.State.Trace != "" {
		fmt.Fprintf(w, "trace:  %s\n", output.FirstLine(d.State.Trace))
	}
	fmt.Fprintln(w, "\ntasks:")
	tasks := make([]taskRow, len(d.Tasks))
	for i, t := range d.Tasks {
		tasks[i] = taskRow{Connector: d.Name, TaskState: t}
	}
	if err := output.Section(w, taskTable(tasks)); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nconfig:")
	keys := make([]string, 0, len(d.Config))
	for k := range d.Config {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	cfg := output.NewRows()
	for _, k := range keys {
		cfg.Add(k, d.Config[k])
	}
	if err := output.Section(w, cfg); err != nil {
		return err
	}
	if why, ok := d.Missing["topics"]; ok {
		fmt.Fprintf(w, "\ntopics: unavailable (%s)\n", why)
	} else {
		fmt.Fprintf(w, "\ntopics: %s\n", output.OrDash(strings.Join(d.Topics, ", ")))
	}
	if why, ok := d.Missing["offsets"]; ok {
		fmt.Fprintf(w, "\noffsets: unavailable (%s)\n", why)
	} else {
		fmt.Fprintln(w, "\noffsets:")
		off := output.NewRows("PARTITION", "OFFSET")
		for _, o := range d.Offsets {
			off.Add(output.Compact(o.Partition), output.Compact(o.Offset))
		}
		if err := output.Section(w, off); err != nil {
			return err
		}
	}
	if why, ok := d.Missing["gauges"]; ok {
		fmt.Fprintf(w, "\ngauges: unavailable (%s)\n", why)
	} else if len(d.Gauges) > 0 {
		fmt.Fprintln(w, "\ngauges:")
		if err := output.Section(w, gaugeTable(d.Gauges)); err != nil {
			return err
		}
	}
	if d.Type != "sink" {
		return nil
	}
	if d.Lag == nil {
		fmt.Fprintln(w, "\nlag: unavailable")
		return nil
	}
	fmt.Fprintf(w, "\nlag: %d\n", d.Lag.TotalLag)
	lag := output.NewRows("TOPIC", "PARTITION", "END", "COMMITTED", "LAG")
	for _, p := range d.Lag.Partitions {
		lag.Add(p.Topic, fmt.Sprint(p.Partition), fmt.Sprint(p.EndOffset), fmt.Sprint(p.CommittedOffset), fmt.Sprint(p.Lag))
	}
	return output.Section(w, lag)
}
