// Package audit is `sluice audit`: the trail of REST writes.
package audit

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/configdiff"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"

	"github.com/sluice-io/sluice/api"
)

// Command reads the audit trail through GET /sluice/audit.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "show the audit trail of REST writes, newest first",
		Flags: append(session.Flags(),
			&cli.StringFlag{Name: "connector", Usage: "only the writes to this connector"},
			&cli.StringFlag{Name: "principal", Usage: "only the writes of this caller"},
			&cli.StringFlag{Name: "operation", Usage: "only the writes of this operation (connector.create), or of those a glob matches (offsets.*)"},
			&cli.StringFlag{Name: "since", Usage: "only writes since this RFC 3339 time, or this long ago (90s, 1h, 7d)"},
			&cli.StringFlag{Name: "until", Usage: "only writes before this RFC 3339 time, or this long ago (90s, 1h, 7d)"},
			&cli.IntFlag{Name: "limit", Usage: "at most this many records, the newest (1 to 10000; default 100)"},
			&cli.BoolFlag{Name: "json", Usage: "print the records as the server sent them, not as a table"},
		),
		Action: func(c *cli.Context) error {
			q := url.Values{}
			for _, name := range []string{"connector", "principal", "operation", "since", "until"} {
				if c.IsSet(name) {
					q.Set(name, c.String(name))
				}
			}
			if c.IsSet("limit") {
				q.Set("limit", strconv.Itoa(c.Int("limit")))
			}
			s, err := session.Open(c)
			if err != nil {
				return err
			}
			// GET /sluice/audit as it is: --since may be relative (1h),
			// which the server reads and api.AuditQuery, a time, cannot
			// carry; and --json prints the answer as sent.
			path := "/sluice/audit"
			if len(q) > 0 {
				path += "?" + q.Encode()
			}
			ans, err := s.API.Raw(s.Ctx(), http.MethodGet, path, nil)
			if err != nil {
				return s.Err(err)
			}
			data := ans.Body
			if c.Bool("json") {
				var answer any
				if err := session.DecodeNumbers(data, &answer); err != nil {
					return fmt.Errorf("read the audit trail: %w", err)
				}
				s.Format = output.JSON
				return s.PrintAnswer(answer)
			}
			var log api.AuditLog
			if err := session.DecodeNumbers(data, &log); err != nil {
				return fmt.Errorf("read the audit trail: %w", err)
			}
			if s.Format != output.Table {
				return s.Print(log, nil)
			}
			return printAudit(s.W, log)
		},
	}
}

// printAudit writes the records as a table, one write a line, and what
// the answer left out below it.
func printAudit(w io.Writer, log api.AuditLog) error {
	t := output.NewRows("TIME", "PRINCIPAL", "SOURCE", "OPERATION", "CONNECTOR", "STATUS", "CHANGE")
	for _, r := range log.Records {
		result := strconv.Itoa(r.Status)
		if r.Error != "" {
			result += " " + output.OneLine(r.Error, 80)
		}
		// Cell first: a control character shows escaped, not as the
		// space Add would make of it.
		t.Add(r.Time.Local().Format(time.DateTime), output.Cell(r.Principal), output.Cell(r.Source),
			output.Cell(r.Operation), output.Cell(r.Connector), output.Cell(result), output.Cell(change(r)))
	}
	if err := t.Write(w); err != nil {
		return err
	}
	if log.More {
		fmt.Fprintln(w, "(older records match too: narrow with --since or --connector, raise --limit, or page back with --until set to the oldest time shown)")
	}
	if log.Unwritten > 0 {
		fmt.Fprintf(w, "WARNING: the coordinator that answered could not write %d audit record(s) since it started; see its log\n", log.Unwritten)
	}
	return nil
}

// change says in a few words what a write did to its connector: created,
// deleted, its target state moved, config keys added (+), changed (~) or
// removed (-).
func change(r api.AuditRecord) string {
	b, a := r.Before, r.After
	switch {
	case b == nil && a == nil:
		return "-"
	case b == nil:
		return "created " + a.TargetState
	case a == nil:
		return "deleted"
	}
	var parts []string
	if b.TargetState != a.TargetState {
		parts = append(parts, b.TargetState+" -> "+a.TargetState)
	}
	var keys []string
	for _, k := range configdiff.Diff(b.Config, a.Config) {
		keys = append(keys, k.Mark()+k.Key)
	}
	if len(keys) > 0 {
		parts = append(parts, "config "+strings.Join(keys, " "))
	}
	if len(parts) == 0 {
		return "unchanged"
	}
	return strings.Join(parts, ", ")
}
