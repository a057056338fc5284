package faults

import (
	"fmt"
	"strings"
	"time"
)

// Result is one row of the table.
type Result struct {
	Fault string
	// Skipped, when set, is why the row did not run ("n/a (…)").
	Skipped string
	// Err is what went wrong running the row (its figures may be partial).
	Err         string
	Topic, Sink Counts
	// Flow and Write are the seconds until data flows and until a REST
	// write works, counted from the clock start; FlowOK and WriteOK are
	// false when that did not happen within Limit.
	Flow, Write     time.Duration
	FlowOK, WriteOK bool
	Limit           time.Duration
	// Needless counts task restarts beyond those the fault justifies.
	Needless int
	Notes    []string
	// Violations are what must not happen and did: the row failed.
	Violations []string
}

// Header is the table's header row.
var Header = []string{"fault", "lost (topic / sink)", "duplicated (topic / sink)",
	"records by an old instance after its successor (topic / sink)", "s until data flows",
	"s until a REST write works", "tasks restarted needlessly", "notes"}

// cells renders r as the table's cells.
func (r Result) cells() []string {
	if r.Skipped != "" {
		return []string{r.Fault, r.Skipped, r.Skipped, r.Skipped, r.Skipped, r.Skipped, r.Skipped, ""}
	}
	secs := func(d time.Duration, ok bool) string {
		if !ok {
			return fmt.Sprintf("> %.0f", r.Limit.Seconds())
		}
		return fmt.Sprintf("%.1f", d.Seconds())
	}
	pair := func(a, b int) string { return fmt.Sprintf("%d / %d", a, b) }
	notes := strings.Join(r.Notes, "; ")
	if r.Err != "" {
		notes = strings.TrimPrefix(notes+"; error: "+r.Err, "; ")
	}
	return []string{r.Fault,
		pair(r.Topic.Lost, r.Sink.Lost),
		pair(r.Topic.Duplicated, r.Sink.Duplicated),
		pair(r.Topic.OldAfterNew, r.Sink.OldAfterNew),
		secs(r.Flow, r.FlowOK), secs(r.Write, r.WriteOK),
		fmt.Sprint(r.Needless), notes}
}

// Markdown renders the results as a Markdown table.
func Markdown(results []Result) string {
	var b strings.Builder
	row := func(cells []string) {
		for i := range cells {
			cells[i] = strings.ReplaceAll(cells[i], "|", `\|`)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	row(append([]string(nil), Header...))
	sep := make([]string, len(Header))
	for i := range sep {
		sep[i] = "---"
	}
	row(sep)
	for _, r := range results {
		row(r.cells())
	}
	return b.String()
}

// Text renders the results as an aligned plain-text table for a terminal.
func Text(results []Result) string {
	rows := [][]string{{"fault", "lost", "dup", "old>new", "flow s", "write s", "restarts", "notes"}}
	for _, r := range results {
		c := r.cells()
		rows = append(rows, c)
	}
	widths := make([]int, len(rows[0])-1) // the notes column is not padded
	for _, cells := range rows {
		for i := range widths {
			widths[i] = max(widths[i], len([]rune(cells[i])))
		}
	}
	var b strings.Builder
	for _, cells := range rows {
		for i, cell := range cells {
			if i < len(widths) {
				fmt.Fprintf(&b, "%-*s  ", widths[i], cell)
			} else {
				b.WriteString(cell)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
