package connectors

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/complete"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// Snapshot is `sluice snapshot NAME --tables T,…`: an execute-snapshot
// signal (an incremental snapshot of the tables) for a running CDC
// connector, through POST /sluice/connectors/{name}/signals.
func Snapshot() *cli.Command { return withConnFlags(snapshot()) }

// SnapshotStop is `sluice snapshot-stop NAME [--tables T,…]`: a
// stop-snapshot signal.
func SnapshotStop() *cli.Command { return withConnFlags(snapshotStop()) }

// withConnFlags gives a verb's command the connection flags, which the
// connectors group gives its aliases itself.
func withConnFlags(cmd *cli.Command) *cli.Command {
	cmd.Flags = append(session.Flags(), cmd.Flags...)
	return cmd
}

// snapshot is Snapshot without the connection flags.
func snapshot() *cli.Command {
	return &cli.Command{
		Name: "snapshot", ArgsUsage: "NAME", BashComplete: complete.Connectors,
		Usage: "take an incremental snapshot of tables of a running CDC connector while it streams (an execute-snapshot signal; POST /sluice/connectors/NAME/signals)",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "tables", Aliases: []string{"t"}, Required: true,
				Usage: "the tables, as <schema>.<table> (regular expressions, as Debezium's data-collections; comma-separated or repeated)"},
			&cli.StringSliceFlag{Name: "filter", Usage: "read only the rows of a table a condition selects: TABLE=CONDITION, e.g. public.orders=\"region = 'EU'\" (repeat for more tables)"},
			&cli.StringFlag{Name: "id", Usage: "the signal's id (default: a new UUID)"}},
		Action: func(c *cli.Context) error {
			data := map[string]any{"type": "incremental", "data-collections": c.StringSlice("tables")}
			var conds []map[string]string
			for _, f := range c.StringSlice("filter") {
				table, cond, ok := strings.Cut(f, "=")
				if !ok || strings.TrimSpace(table) == "" || strings.TrimSpace(cond) == "" {
					return session.Usage("--filter %q: give TABLE=CONDITION", f)
				}
				// The table is matched as a regular expression: its dots
				// stand for themselves.
				conds = append(conds, map[string]string{"data-collection": regexp.QuoteMeta(strings.TrimSpace(table)), "filter": cond})
			}
			if conds != nil {
				data["additional-conditions"] = conds
			}
			return sendSignal(c, "execute-snapshot", data)
		},
	}
}

// snapshotStop is SnapshotStop without the connection flags.
func snapshotStop() *cli.Command {
	return &cli.Command{
		Name: "snapshot-stop", ArgsUsage: "NAME", BashComplete: complete.Connectors,
		Usage: "stop a CDC connector's incremental snapshot, of every table or of those named (a stop-snapshot signal; POST /sluice/connectors/NAME/signals)",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "tables", Aliases: []string{"t"}, Usage: "stop only these tables' part (default: the whole snapshot)"},
			&cli.StringFlag{Name: "id", Usage: "the signal's id (default: a new UUID)"}},
		Action: func(c *cli.Context) error {
			data := map[string]any{"type": "incremental"}
			if t := c.StringSlice("tables"); len(t) > 0 {
				data["data-collections"] = t
			}
			return sendSignal(c, "stop-snapshot", data)
		},
	}
}

// sendSignal sends a signal of type typ with data to the connector named
// by the one argument, and says where it went.
func sendSignal(c *cli.Context, typ string, data map[string]any) error {
	name, err := session.NameArg(c)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	res, err := session.Call2(s, s.API.Connectors().Signal, name, api.ConnectorSignal{ID: c.String("id"), Type: typ, Data: raw})
	if err != nil {
		return err
	}
	if s.Answer {
		return s.PrintAnswer(res)
	}
	if s.Format != output.Table {
		return s.Print(res, nil)
	}
	fmt.Fprintf(s.W, "signal %s (%s) written by %s's task %d on %s\n", res.ID, res.Type, res.Connector, res.Task, res.WorkerID)
	if typ == "execute-snapshot" {
		fmt.Fprintf(c.App.ErrWriter, "follow the snapshot with: sluice get gauges %s\n", name)
	}
	return nil
}
