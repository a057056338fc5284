package connectors

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// FleetList is `sluice fleet connectors`: the fleet listing (GET
// /sluice/fleet/connectors), every connector with its derived health and
// why, filtered, sorted and paged by the coordinator.
func FleetList() *cli.Command {
	return &cli.Command{
		Name: "connectors", Aliases: []string{"connector", "conn"}, ArgsUsage: "[SEARCH]",
		Usage: "every connector with its health (healthy, degraded, failed, paused, stopped, unassigned) and why, " +
			"what needs attention first; SEARCH keeps the names holding it",
		// No environment variables: one left set would filter every
		// listing without a word.
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "state", Usage: "only connectors in these states (RUNNING, PAUSED, STOPPED, FAILED, RESTARTING, UNASSIGNED; repeat or comma-separate)"},
			&cli.StringSliceFlag{Name: "health", Usage: "only connectors of these healths (failed, degraded, unassigned, paused, stopped, healthy; repeat or comma-separate)"},
			&cli.StringSliceFlag{Name: "type", Usage: "only connectors of these types (source, sink, unknown)"},
			&cli.StringFlag{Name: "agent", Usage: "only connectors with a task on this agent"},
			&cli.StringFlag{Name: "plugin", Usage: "only connectors of this plugin: its class, simple name or alias"},
			&cli.StringSliceFlag{Name: "label", Usage: "key=value: only connectors whose sluice.labels hold it (repeat: all must hold)"},
			&cli.StringFlag{Name: "sort", Value: api.SortAttention, Usage: "attention (failed, degraded, unassigned, paused, stopped, healthy, then name), name, or changed (latest first)"},
			&cli.IntFlag{Name: "offset", Usage: "rows to skip"},
			&cli.IntFlag{Name: "limit", Value: api.DefaultFleetLimit, Usage: fmt.Sprintf("rows at most (1 to %d)", api.MaxFleetLimit)},
			&cli.BoolFlag{Name: "all", Usage: "every row, page after page, instead of one page"},
		},
		Action: fleetList,
	}
}

func fleetList(c *cli.Context) error {
	if c.NArg() > 1 {
		return session.Usage("fleet connectors takes one SEARCH at most, not %d", c.NArg())
	}
	q := api.FleetQuery{Q: c.Args().First(), States: splitAll(c.StringSlice("state")), Healths: splitAll(c.StringSlice("health")),
		Types: splitAll(c.StringSlice("type")), Agent: c.String("agent"), Plugin: c.String("plugin"), Sort: c.String("sort"),
		Offset: c.Int("offset"), Limit: c.Int("limit")}
	for _, l := range c.StringSlice("label") {
		k, v, ok := strings.Cut(l, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return session.Usage("--label %q: give key=value", l)
		}
		if q.Labels == nil {
			q.Labels = map[string]string{}
		}
		q.Labels[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	page, err := session.Call(s, s.API.Fleet().Connectors, q)
	if err != nil {
		return err
	}
	// --all reads on until the rows are all in; a fleet that changes
	// meanwhile may show a connector twice or not at all, as any paging.
	for c.Bool("all") && page.Offset+len(page.Connectors) < page.Total && len(page.Connectors) > 0 {
		q.Offset = page.Offset + len(page.Connectors)
		next, err := session.Call(s, s.API.Fleet().Connectors, q)
		if err != nil {
			return err
		}
		if len(next.Connectors) == 0 {
			break
		}
		page.Connectors, page.Total = append(page.Connectors, next.Connectors...), next.Total
	}
	if err := s.Print(page, func() *output.Rows { return fleetTable(page.Connectors) }); err != nil {
		return err
	}
	if s.Format == output.Table {
		s.Progress("%s", fleetSummary(page))
	}
	return nil
}

// splitAll is every comma-separated value of vals.
func splitAll(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// fleetTable shows the rows of a listing.
func fleetTable(rows []api.FleetConnector) *output.Rows {
	t := output.NewRows("NAME", "HEALTH", "STATE", "TYPE", "TASKS", "AGENTS", "LAG", "CHANGED", "REASON")
	for _, r := range rows {
		lag := "-"
		if r.SinkLag != nil {
			lag = fmt.Sprint(*r.SinkLag)
		}
		changed := "-"
		if r.Changed != nil {
			changed = r.Changed.Format(time.RFC3339)
		}
		t.Add(output.Cell(r.Name), r.Health, r.State, r.Type, fmt.Sprintf("%d/%d", r.TasksRunning, r.TasksTotal),
			output.OrDash(output.Cell(strings.Join(r.Agents, ","))), lag, changed, output.Cell(output.OneLine(r.Reason, 100)))
	}
	return t
}

// fleetSummary says which rows were shown of how many, and the fleet's
// healths: "rows 1-50 of 212; fleet: failed 2, degraded 3, healthy 207".
func fleetSummary(l api.FleetConnectors) string {
	var counts []string
	for _, h := range api.Healths {
		if n := l.Counts.Health[h]; n > 0 {
			counts = append(counts, fmt.Sprintf("%s %d", h, n))
		}
	}
	fleet := "fleet: " + strings.Join(counts, ", ")
	if len(counts) == 0 {
		fleet = "fleet: no connectors"
	}
	if len(l.Connectors) == 0 {
		return fmt.Sprintf("no rows of %d; %s", l.Total, fleet)
	}
	first := l.Offset + 1
	return fmt.Sprintf("rows %d-%d of %d; %s", first, first+len(l.Connectors)-1, l.Total, fleet)
}
