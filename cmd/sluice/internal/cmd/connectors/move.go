package connectors

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/complete"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// Move is `sluice move OLD NEW` (or, copying, `sluice copy OLD NEW`,
// which is move --copy): one POST /sluice/connectors/{old}/move that stops
// OLD, creates NEW at its positions and, unless copied, deletes OLD — or,
// failing at any step, leaves OLD as it was.
func Move(name string, copying bool) *cli.Command {
	usage := "rename a connector, keeping its positions and state (stop, create NEW at OLD's positions, delete OLD)"
	flags := []cli.Flag{
		&cli.StringSliceFlag{Name: "set", Usage: "override a key of the new connector's config: k=v (repeat for more)"},
		session.ReasonFlag(),
		&cli.BoolFlag{Name: "dry-run", Usage: "show the steps and the positions the move would take; change nothing"},
	}
	if copying {
		usage = "copy a connector with its positions under a new name, keeping the old one (stopped)"
	} else {
		flags = append(flags, &cli.BoolFlag{Name: "copy", Usage: "keep the old connector (stopped) and its positions"})
	}
	return &cli.Command{
		Name: name, Usage: usage, ArgsUsage: "OLD NEW", BashComplete: complete.Connectors,
		Flags: append(session.Flags(), flags...),
		Action: func(c *cli.Context) error {
			return moveConnector(c, copying || c.Bool("copy"))
		},
	}
}

func moveConnector(c *cli.Context, copying bool) error {
	if c.NArg() != 2 {
		return session.Usage("give the connector's name and its new name")
	}
	old, to := c.Args().Get(0), c.Args().Get(1)
	req := api.MoveRequest{To: to, Copy: copying, DryRun: c.Bool("dry-run")}
	for _, kv := range c.StringSlice("set") {
		k, v, err := splitSet(kv)
		if err != nil {
			return err
		}
		if req.Config == nil {
			req.Config = map[string]string{}
		}
		req.Config[k] = v
	}
	s, err := session.OpenWithReason(c)
	if err != nil {
		return err
	}
	verb := "moving"
	if copying {
		verb = "copying"
	}
	// The server answers once every step is done (or undone): the spinner
	// shows it is still at work.
	var res api.MoveResult
	if err := session.Busy(fmt.Sprintf("%s %s to %s", verb, old, to), func() (err error) {
		res, err = session.Call2(s, s.API.Offsets().Move, old, req)
		return err
	}); err != nil {
		return err
	}
	if s.Format != output.Table {
		return s.Print(res, nil)
	}
	if err := writeMove(s.W, res); err != nil {
		return err
	}
	switch {
	case res.DryRun:
		fmt.Fprintf(c.App.ErrWriter, "dry run: nothing was changed\n")
	case res.HistoryID != "":
		fmt.Fprintf(c.App.ErrWriter, "%s is %s at %s; offsets history entry %s\n", to, res.TargetState, output.Count(len(res.Offsets), "partition"), res.HistoryID)
	}
	return nil
}

// writeMove prints a move's steps, then the positions the new connector
// starts from.
func writeMove(w io.Writer, res api.MoveResult) error {
	steps := output.NewRows("STEP", "STATE")
	for _, st := range res.Steps {
		steps.Add(st.Step, st.State)
	}
	if err := steps.Write(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\npositions of %s:\n", res.To)
	off := output.NewRows("PARTITION", "OFFSET")
	for _, o := range res.Offsets {
		off.Add(output.Compact(o.Partition), output.Compact(o.Offset))
	}
	return output.Section(w, off)
}
