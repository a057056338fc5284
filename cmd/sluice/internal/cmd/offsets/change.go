package offsets

// Sluice's own offsets operations (docs/offsets.md): dry runs of alter and
// reset, resets by rule, the offsets history with undo and restore. They
// call the routes under /sluice/connectors/{name}/…; Kafka Connect's own
// offsets endpoints are still what `offsets alter` and `offsets reset`
// send without these flags.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// openChange opens the session of an offsets change: its --reason goes on
// the request, and its answer prints as a table unless -o was given (the
// offsets group's JSON default is the REST-mirroring commands' own).
func openChange(c *cli.Context) (*session.Session, error) {
	s, err := session.OpenWithReason(c)
	if err != nil {
		return nil, err
	}
	s.TableUnlessAsked()
	return s, nil
}

// offsetsAlterCommand is `offsets alter NAME -f FILE`: PATCH …/offsets, or
// with --dry-run the preview of it.
func offsetsAlterCommand() *cli.Command {
	return &cli.Command{
		Name: "alter", Usage: "alter a stopped connector's offsets from a JSON file ({\"offsets\":[…]})", ArgsUsage: "NAME",
		Flags: []cli.Flag{session.FileFlag(), session.ReasonFlag(), session.DryRunFlag()},
		Action: func(c *cli.Context) error {
			n, err := session.NameArg(c)
			if err != nil {
				return err
			}
			var req api.ConnectorOffsets
			if err := session.ReadJSON(c.String("file"), &req); err != nil {
				return err
			}
			if c.Bool("dry-run") {
				return changeOffsets(c, "previewing the offsets of "+n, func(s *session.Session) (api.OffsetsChanges, error) {
					return session.Call2(s, s.API.Offsets().Preview, n, api.OffsetsPreviewRequest{Offsets: req.Offsets})
				})
			}
			return answerBusy(c, "altering the offsets of "+n, func(s *session.Session) (api.Message, error) {
				return session.Call2(s, s.API.Offsets().Alter, n, req.Offsets)
			})
		},
	}
}

// offsetsResetCommand is `offsets reset NAME`: Kafka Connect's DELETE
// …/offsets, or with a rule (--to, --shift-by) a reset by rule.
func offsetsResetCommand() *cli.Command {
	return &cli.Command{
		Name:      "reset",
		Usage:     "reset a stopped connector's offsets: all of them, or a sink's to a rule (--to earliest|latest|timestamp|offset, --shift-by N)",
		ArgsUsage: "NAME",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "to", Usage: "earliest, latest, timestamp (with --timestamp) or offset (with --offset)"},
			&cli.StringFlag{Name: "timestamp", Usage: "for --to timestamp: an RFC 3339 time (2026-11-30T10:00:00Z) or epoch milliseconds"},
			&cli.Int64Flag{Name: "offset", Usage: "for --to offset: the position, 0 or more"},
			&cli.Int64Flag{Name: "shift-by", Usage: "move each position by this many records (negative: back), instead of --to"},
			&cli.StringSliceFlag{Name: "topics", Usage: "only these of the connector's topics (t1,t2)"},
			&cli.IntSliceFlag{Name: "partitions", Usage: "only these partition numbers (0,3)"},
			session.ReasonFlag(), session.DryRunFlag(),
		},
		Action: resetOffsets,
	}
}

func resetOffsets(c *cli.Context) error {
	n, err := session.NameArg(c)
	if err != nil {
		return err
	}
	req, byRule, err := resetRule(c)
	if err != nil {
		return session.UsageError{Err: err}
	}
	switch {
	case byRule:
		req.DryRun = c.Bool("dry-run")
		return changeOffsets(c, "resetting the offsets of "+n, func(s *session.Session) (api.OffsetsChanges, error) {
			return session.Call2(s, s.API.Offsets().ResetTo, n, req)
		})
	case c.Bool("dry-run"):
		return changeOffsets(c, "previewing the reset of "+n, func(s *session.Session) (api.OffsetsChanges, error) {
			return session.Call2(s, s.API.Offsets().Preview, n, api.OffsetsPreviewRequest{Reset: true})
		})
	}
	return answerBusy(c, "resetting the offsets of "+n, func(s *session.Session) (api.Message, error) {
		return session.Call(s, s.API.Offsets().Reset, n)
	})
}

// answerBusy runs one of Kafka Connect's offsets writes (call), with
// --reason and a spinner while it runs, and prints the server's answer.
func answerBusy(c *cli.Context, what string, call func(*session.Session) (api.Message, error)) error {
	s, err := session.OpenWithReason(c)
	if err != nil {
		return err
	}
	var msg api.Message
	if err := session.Busy(what, func() (err error) {
		msg, err = call(s)
		return err
	}); err != nil {
		return err
	}
	return s.PrintAnswer(msg)
}

// resetRule reads the rule flags of `offsets reset`: the request, and
// whether a rule was given at all (without one, the reset is Kafka
// Connect's). Combinations that cannot mean anything are refused here;
// the values themselves (a time that does not parse, a negative offset)
// are the server's to judge, with its own messages.
func resetRule(c *cli.Context) (api.OffsetsResetRequest, bool, error) {
	var req api.OffsetsResetRequest
	to, shift := c.String("to"), c.IsSet("shift-by")
	switch {
	case to != "" && shift:
		return req, false, errors.New("give --to or --shift-by, not both")
	case to == "" && !shift:
		for _, f := range []string{"timestamp", "offset", "topics", "partitions"} {
			if c.IsSet(f) {
				return req, false, fmt.Errorf("--%s needs a rule: --to earliest|latest|timestamp|offset or --shift-by N", f)
			}
		}
		return req, false, nil
	}
	switch to {
	case "", api.ResetEarliest, api.ResetLatest, api.ResetTimestamp, api.ResetOffset:
	default:
		return req, false, fmt.Errorf("--to %q: want earliest, latest, timestamp or offset", to)
	}
	for _, p := range []struct {
		flag, rule string
	}{{"timestamp", api.ResetTimestamp}, {"offset", api.ResetOffset}} {
		switch given := c.IsSet(p.flag); {
		case given && to != p.rule:
			return req, false, fmt.Errorf("--%s goes with --to %s only", p.flag, p.rule)
		case !given && to == p.rule:
			return req, false, fmt.Errorf("--to %s needs --%s", p.rule, p.flag)
		}
	}
	req.To, req.Topics = to, c.StringSlice("topics")
	if ts := c.String("timestamp"); ts != "" {
		req.Timestamp = timestampValue(ts)
	}
	if c.IsSet("offset") {
		o := c.Int64("offset")
		req.Offset = &o
	}
	if shift {
		by := c.Int64("shift-by")
		req.ShiftBy = &by
	}
	for _, p := range c.IntSlice("partitions") {
		if p < math.MinInt32 || p > math.MaxInt32 {
			return req, false, fmt.Errorf("--partitions %d is not a partition number", p)
		}
		req.Partitions = append(req.Partitions, int32(p))
	}
	return req, true, nil
}

// timestampValue is --timestamp as the server takes it: all digits are
// epoch milliseconds, sent as a JSON number (a string of digits is
// refused there); anything else an RFC 3339 time, sent as a string.
func timestampValue(ts string) any {
	if strings.Trim(ts, "0123456789") == "" {
		return json.Number(ts)
	}
	return ts
}

// changeOffsets makes one Sluice offsets change (or its dry run), call,
// with a spinner while it runs, and prints the changes it answers with.
func changeOffsets(c *cli.Context, what string, call func(*session.Session) (api.OffsetsChanges, error)) error {
	s, err := openChange(c)
	if err != nil {
		return err
	}
	var res api.OffsetsChanges
	if err := session.Busy(what, func() (err error) {
		res, err = call(s)
		return err
	}); err != nil {
		return err
	}
	if res.Changes == nil {
		res.Changes = []api.OffsetChange{}
	}
	if err := s.Print(res, func() *output.Rows { return changeRows(res.Changes) }); err != nil {
		return err
	}
	fmt.Fprintln(c.App.ErrWriter, summary(res))
	return nil
}

// summary is the line a change prints on stderr: how many partitions move
// — a partition the change writes with the position it has already is not
// one, so a change that moves none says that nothing changed — and the
// change's offsets history entry.
func summary(res api.OffsetsChanges) string {
	moved := 0
	for _, ch := range res.Changes {
		if !reflect.DeepEqual(ch.From, ch.To) {
			moved++
		}
	}
	var what string
	switch {
	case moved > 0 && res.DryRun:
		what = output.Count(moved, "partition") + " would change"
	case moved > 0:
		what = output.Count(moved, "partition") + " changed"
	case res.DryRun:
		what = "nothing would change"
	default:
		what = "nothing changed"
	}
	if same := len(res.Changes) - moved; same > 0 && moved == 0 {
		what += fmt.Sprintf(" (%s already there)", output.Count(same, "partition"))
	}
	switch {
	case res.DryRun:
		return "dry run: " + what + ", nothing was written"
	case res.HistoryID != "":
		return what + "; offsets history entry " + res.HistoryID
	}
	return what
}

// changeRows is a table of offsets changes; a missing position is "-".
func changeRows(changes []api.OffsetChange) *output.Rows {
	t := output.NewRows("PARTITION", "FROM", "TO")
	for _, ch := range changes {
		t.Add(output.Compact(ch.Partition), position(ch.From), position(ch.To))
	}
	return t
}

// position is an offset as a cell: "-" for none.
func position(o map[string]any) string {
	if o == nil {
		return ""
	}
	return output.Compact(o)
}

// offsetsHistoryCommand is `offsets history NAME [ID]`.
func offsetsHistoryCommand() *cli.Command {
	return &cli.Command{
		Name:      "history",
		Usage:     "show a connector's offsets history, newest first, or one entry with its changes (a deleted connector's too)",
		ArgsUsage: "NAME [ID]",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "limit", Usage: "at most this many entries (1 to 1000; default 50)"},
			&cli.StringFlag{Name: "before", Usage: "only the entries older than this id (the next page)"},
		},
		Action: offsetsHistory,
	}
}

func offsetsHistory(c *cli.Context) error {
	if c.NArg() < 1 || c.NArg() > 2 {
		return session.Usage("give a connector name, and optionally an entry id")
	}
	name := c.Args().First()
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	s.TableUnlessAsked()
	if c.NArg() == 2 {
		if c.IsSet("limit") || c.IsSet("before") {
			return session.Usage("--limit and --before page the history: not with an entry id")
		}
		e, err := session.Call2(s, s.API.Offsets().HistoryEntry, name, c.Args().Get(1))
		if err != nil {
			return err
		}
		if s.Format != output.Table {
			return s.Print(e, nil)
		}
		return writeEntry(s, e)
	}
	if c.IsSet("limit") && c.Int("limit") < 1 {
		return session.Usage("--limit %d: give 1 or more", c.Int("limit"))
	}
	h, err := session.Call2(s, s.API.Offsets().History, name, api.HistoryQuery{Limit: c.Int("limit"), Before: c.String("before")})
	if err != nil {
		return err
	}
	if err := s.Print(h, func() *output.Rows { return historyRows(h.Entries) }); err != nil {
		return err
	}
	if h.More && len(h.Entries) > 0 && s.Format == output.Table {
		fmt.Fprintf(s.W, "(older entries exist: --before %s)\n", h.Entries[len(h.Entries)-1].ID)
	}
	return nil
}

// historyRows is the history as a table, an entry a line.
func historyRows(entries []api.OffsetsHistoryEntry) *output.Rows {
	t := output.NewRows("ID", "TIME", "OPERATION", "PRINCIPAL", "PARTITIONS", "DETAIL", "REASON")
	for _, e := range entries {
		t.Add(e.ID, entryTime(e.Time), e.Operation, e.Principal, strconv.Itoa(len(e.Changes)), e.Detail, output.OneLine(e.Reason, 80))
	}
	return t
}

// entryTime is an entry's time in the local zone, as audit shows times.
func entryTime(t time.Time) string { return t.Local().Format(time.DateTime) }

// writeEntry prints one history entry: its fields, then its changes.
func writeEntry(s *session.Session, e api.OffsetsHistoryEntry) error {
	fields := output.NewRows()
	fields.Add("id:", e.ID).Add("time:", entryTime(e.Time)).Add("connector:", e.Connector).Add("type:", e.Type)
	for _, f := range []struct{ k, v string }{
		{"group:", e.Group}, {"operation:", e.Operation}, {"detail:", e.Detail}, {"principal:", e.Principal},
		{"reason:", e.Reason}, {"undoes:", e.Undoes}, {"from entry:", e.FromEntry},
	} {
		if f.v != "" {
			fields.Add(f.k, f.v)
		}
	}
	if err := fields.Write(s.W); err != nil {
		return err
	}
	fmt.Fprintln(s.W, "\nchanges:")
	return output.Section(s.W, changeRows(e.Changes))
}

// offsetsUndoCommand is `offsets undo NAME ID`.
func offsetsUndoCommand() *cli.Command {
	return &cli.Command{
		Name:      "undo",
		Usage:     "put back the positions a history entry changed, on a stopped connector",
		ArgsUsage: "NAME ID",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "even if its partitions changed after the entry"},
			session.ReasonFlag(), session.DryRunFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return session.Usage("give the connector name and the history entry id")
			}
			name, id := c.Args().Get(0), c.Args().Get(1)
			opts := api.UndoOptions{Force: c.Bool("force"), DryRun: c.Bool("dry-run")}
			return changeOffsets(c, "undoing "+id+" on "+name, func(s *session.Session) (api.OffsetsChanges, error) {
				changes, err := s.API.Offsets().Undo(s.Ctx(), name, id, opts)
				return changes, s.Err(err)
			})
		},
	}
}

// offsetsRestoreCommand is `offsets restore NAME --from OLD`.
func offsetsRestoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "restore",
		Usage:     "write the positions another connector's history recorded (a deleted one's too) to a stopped connector",
		ArgsUsage: "NAME",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Required: true, Usage: "the connector whose offsets history holds the positions"},
			&cli.StringFlag{Name: "entry", Usage: "the entry of --from's history (default: its newest)"},
			&cli.StringFlag{Name: "positions", Value: "before", Usage: "before (the positions the entry changed from) or after (those it changed to)"},
			session.ReasonFlag(), session.DryRunFlag(),
		},
		Action: func(c *cli.Context) error {
			name, err := session.NameArg(c)
			if err != nil {
				return err
			}
			req := api.OffsetsRestoreRequest{From: c.String("from"), Entry: c.String("entry"), Positions: c.String("positions"), DryRun: c.Bool("dry-run")}
			if req.Positions != "before" && req.Positions != "after" {
				return session.Usage("--positions %q: want before or after", req.Positions)
			}
			return changeOffsets(c, "restoring the offsets of "+name, func(s *session.Session) (api.OffsetsChanges, error) {
				return session.Call2(s, s.API.Offsets().Restore, name, req)
			})
		},
	}
}
