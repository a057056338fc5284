package connectors

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/complete"
	"github.com/sluice-io/sluice/cmd/sluice/internal/configdiff"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// getConfigHistoryCommand is `get config-history NAME [ID]`.
func getConfigHistoryCommand() *cli.Command {
	return &cli.Command{Name: "config-history", ArgsUsage: "NAME [ID]",
		Usage: "a connector's config history, newest first, or one entry with its configs before and after (GET /sluice/connectors/NAME/config/history)",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "limit", Usage: "at most this many entries (1 to 100; default 50)"},
			&cli.StringFlag{Name: "before", Usage: "only the entries older than this id (the next page)"},
		},
		Action: getConfigHistory, BashComplete: complete.Connectors}
}

func getConfigHistory(c *cli.Context) error {
	if c.NArg() < 1 || c.NArg() > 2 {
		return session.Usage("give a connector name, and optionally an entry id")
	}
	name := c.Args().First()
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	if c.NArg() == 2 {
		if c.IsSet("limit") || c.IsSet("before") {
			return session.Usage("--limit and --before page the history: not with an entry id")
		}
		e, err := session.Call2(s, s.API.Connectors().ConfigHistoryEntry, name, c.Args().Get(1))
		if err != nil {
			return err
		}
		if s.Answer || s.Format != output.Table {
			return s.PrintAnswer(e)
		}
		return writeConfigEntry(s, e)
	}
	if c.IsSet("limit") && c.Int("limit") < 1 {
		return session.Usage("--limit %d: give 1 or more", c.Int("limit"))
	}
	h, err := session.Call2(s, s.API.Connectors().ConfigHistory, name, api.HistoryQuery{Limit: c.Int("limit"), Before: c.String("before")})
	if err != nil {
		return err
	}
	if s.Answer {
		return s.PrintAnswer(h)
	}
	if err := s.Print(h, func() *output.Rows { return configHistoryRows(h.Entries) }); err != nil {
		return err
	}
	if h.More && len(h.Entries) > 0 && s.Format == output.Table {
		fmt.Fprintf(s.W, "(older entries exist: --before %s)\n", h.Entries[len(h.Entries)-1].ID)
	}
	return nil
}

// configHistoryRows is the history as a table, an entry a line.
func configHistoryRows(entries []api.ConfigHistorySummary) *output.Rows {
	t := output.NewRows("ID", "TIME", "OPERATION", "PRINCIPAL", "CHANGES", "DETAIL")
	for _, e := range entries {
		t.Add(e.ID, localTime(e.Time), e.Operation, e.Principal, diffText(e.Diff), e.Detail)
	}
	return t
}

// diffText names the keys a change added (+), removed (-) and changed
// (~), at most a few of each.
func diffText(d api.ConfigDiff) string {
	var parts []string
	for _, g := range []struct {
		mark string
		keys []string
	}{{"+", d.Added}, {"-", d.Removed}, {"~", d.Changed}} {
		for i, k := range g.keys {
			if i == 3 {
				parts = append(parts, fmt.Sprintf("%s%d more", g.mark, len(g.keys)-i))
				break
			}
			parts = append(parts, g.mark+k)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// localTime is a time in the local zone, as the audit and offsets
// histories show times.
func localTime(t time.Time) string { return t.Local().Format(time.DateTime) }

// writeConfigEntry prints one entry: its fields, then each key it changed
// with its values before and after ([hidden] for a secret).
func writeConfigEntry(s *session.Session, e api.ConfigHistoryEntry) error {
	fields := output.NewRows()
	fields.Add("id:", e.ID).Add("time:", localTime(e.Time)).Add("connector:", e.Connector).Add("operation:", e.Operation)
	for _, f := range []struct{ k, v string }{{"detail:", e.Detail}, {"principal:", e.Principal}, {"hidden:", strings.Join(e.Hidden, ", ")}} {
		if f.v != "" {
			fields.Add(f.k, f.v)
		}
	}
	if e.Omitted {
		fields.Add("configs:", "too large for the history: not kept")
	}
	if err := fields.Write(s.W); err != nil {
		return err
	}
	fmt.Fprintln(s.W, "\nchanges:")
	t := output.NewRows("CHANGE")
	for _, ch := range configdiff.Diff(e.Before, e.After) {
		t.Add(ch.String())
	}
	return output.Section(s.W, t)
}

// Restore is `restore config NAME ID`: POST
// /sluice/connectors/{name}/config/history/{id}/restore.
func Restore() *cli.Command {
	return &cli.Command{
		Name:        "restore",
		Usage:       "put back a connector's config as one entry of its config history wrote it",
		Flags:       session.Flags(),
		Subcommands: []*cli.Command{restoreConfigCommand()},
	}
}

// restoreConfigCommand is `restore config NAME ID`.
func restoreConfigCommand() *cli.Command {
	return &cli.Command{
		Name: "config", ArgsUsage: "NAME ID", BashComplete: complete.Connectors,
		Usage: "write the config entry ID of the connector's config history wrote, as PUT …/config does; a secret the history hides keeps its current value",
		Flags: []cli.Flag{session.WaitFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return session.Usage("give the connector name and the config history entry id")
			}
			name, id := c.Args().Get(0), c.Args().Get(1)
			s, err := session.Open(c)
			if err != nil {
				return err
			}
			before, err := session.Call(s, s.API.Connectors().Config, name)
			if _, missing := session.MissingConnector(err); err != nil && !missing {
				return err
			}
			res, err := session.Call2(s, s.API.Connectors().RestoreConfig, name, id)
			if err != nil {
				return err
			}
			if s.Answer {
				return s.PrintAnswer(res)
			}
			err = s.Print(res, func() *output.Rows {
				t := output.NewRows("CONNECTOR", "CHANGE")
				changes := configdiff.Diff(before, res.Connector.Config)
				for _, ch := range changes {
					t.Add(name, ch.String())
				}
				if len(changes) == 0 {
					t.Add(name, "unchanged")
				}
				for _, k := range res.KeptCurrent {
					t.Add(name, "kept the current value of secret "+k)
				}
				return t
			})
			if err != nil || !c.Bool("wait") || heldByIntent(s, applyResult{Connector: name, Action: "restored"}) {
				return err
			}
			return s.WaitRunning([]string{name})
		},
	}
}
