// Package maintenance is `sluice maintenance …`: windows that hold
// connectors STOPPED or PAUSED and give them their states back.
package maintenance

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"

	"github.com/sluice-io/sluice/api"
)

// Command opens, lists, shows and closes maintenance windows
// through /sluice/maintenance.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "maintenance",
		Usage: "hold connectors STOPPED or PAUSED for a while and give each its state back after (maintenance windows)",
		Subcommands: []*cli.Command{
			{
				Name: "open", Usage: "open a window: record each selected connector's state, then stop or pause it",
				Flags: append(session.Flags(),
					&cli.StringFlag{Name: "match", Usage: "the connectors whose names match this glob (path.Match: * ? [a-z])"},
					&cli.StringFlag{Name: "names", Usage: "the connectors named, comma-separated"},
					&cli.StringFlag{Name: "state", Usage: "STOPPED or PAUSED: the state the window holds them in", Required: true},
					&cli.StringFlag{Name: "reason", Usage: "why, shown with the window"},
				),
				Action: openWindow,
			},
			{
				Name: "list", Usage: "list the open windows",
				Flags: session.Flags(),
				Action: func(c *cli.Context) error {
					s, err := session.Open(c)
					if err != nil {
						return err
					}
					list, err := session.Call0(s, s.API.Fleet().MaintenanceWindows)
					if err != nil {
						return err
					}
					return s.Print(list, func() *output.Rows { return windowRows(list.Windows) })
				},
			},
			{
				Name: "get", Usage: "show a window and its connectors' previous states", ArgsUsage: "ID",
				Flags: session.Flags(),
				Action: func(c *cli.Context) error {
					return windowCall(c, func(f *api.Fleet) func(context.Context, string) (api.MaintenanceWindow, error) {
						return f.MaintenanceWindow
					})
				},
			},
			{
				Name: "close", Usage: "close a window: give each connector its previous state back, unless changed by hand or deleted", ArgsUsage: "ID",
				Flags: session.Flags(),
				Action: func(c *cli.Context) error {
					return windowCall(c, func(f *api.Fleet) func(context.Context, string) (api.MaintenanceWindow, error) {
						return f.CloseMaintenance
					})
				},
			},
		},
	}
}

// openWindow is `sluice maintenance open`.
func openWindow(c *cli.Context) error {
	var req api.MaintenanceRequest
	req.Match, req.State, req.Reason = c.String("match"), strings.ToUpper(c.String("state")), c.String("reason")
	if c.String("names") != "" {
		req.Names = strings.Split(c.String("names"), ",")
	}
	if (len(req.Names) > 0) == (req.Match != "") {
		return session.Usage("select the connectors with --match GLOB or --names a,b: one of them")
	}
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	w, err := session.Call(s, s.API.Fleet().OpenMaintenance, req)
	if err != nil {
		return err
	}
	return printWindow(s, w)
}

// windowCall is get or close (the call of the client's fleet group) of
// the window the argument names.
func windowCall(c *cli.Context, call func(*api.Fleet) func(context.Context, string) (api.MaintenanceWindow, error)) error {
	if c.NArg() != 1 {
		return session.Usage("give the window's id (sluice maintenance list shows them)")
	}
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	w, err := session.Call(s, call(s.API.Fleet()), c.Args().First())
	if err != nil {
		return err
	}
	return printWindow(s, w)
}

// printWindow prints a window answer: a line about the window, then its
// connectors (with their outcomes once it closed).
func printWindow(s *session.Session, w api.MaintenanceWindow) error {
	if s.Format != output.Table {
		return s.Print(w, nil)
	}
	fmt.Fprintf(s.W, "window %s: %s since %s by %s", w.ID, w.State, w.OpenedAt.Local().Format(time.DateTime), w.Principal)
	if w.Reason != "" {
		fmt.Fprintf(s.W, " (%s)", w.Reason)
	}
	fmt.Fprintln(s.W)
	closed := len(w.Connectors) > 0 && w.Connectors[0].Outcome != ""
	t := output.NewRows("CONNECTOR", "PREVIOUS")
	if closed {
		t = output.NewRows("CONNECTOR", "PREVIOUS", "OUTCOME", "STATE")
	}
	for _, mc := range w.Connectors {
		if closed {
			t.Add(mc.Name, mc.Previous, mc.Outcome, output.OrDash(mc.State))
		} else {
			t.Add(mc.Name, mc.Previous)
		}
	}
	return t.Write(s.W)
}

// windowRows is the table of `sluice maintenance list`.
func windowRows(ws []api.MaintenanceWindow) *output.Rows {
	t := output.NewRows("ID", "STATE", "CONNECTORS", "OPENED", "BY", "REASON")
	for _, w := range ws {
		t.Add(w.ID, w.State, strconv.Itoa(len(w.Connectors)), w.OpenedAt.Local().Format(time.DateTime), w.Principal, output.OrDash(w.Reason))
	}
	return t
}
