package connectors

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/complete"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// getGaugesCommand is `get gauges NAME…`.
func getGaugesCommand() *cli.Command {
	return &cli.Command{Name: "gauges", Aliases: []string{"gauge"}, ArgsUsage: "NAME…",
		Usage:  "the gauges the named connectors' tasks report of themselves: a replication slot's lag, a snapshot's progress (GET /sluice/connectors/NAME/gauges)",
		Action: getGauges, BashComplete: complete.Connectors}
}

// GaugeRow is one gauge of one task in `get gauges`; a task whose gauges
// could not be read is one row with Error set and no gauge.
type GaugeRow struct {
	Connector string            `json:"connector"`
	Task      int               `json:"task"`
	Agent     string            `json:"agent"`
	Name      string            `json:"name,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	Value     *float64          `json:"value,omitempty"`
	Error     string            `json:"error,omitempty"`
}

func getGauges(c *cli.Context) error {
	return perConnector(c, func(s *session.Session) func(context.Context, string) (api.ConnectorGauges, error) {
		return s.API.Connectors().Gauges
	}, gaugeRows, gaugeTable)
}

// gaugeRows are a connector's gauges, task by task.
func gaugeRows(n string, doc api.ConnectorGauges) []GaugeRow {
	var rows []GaugeRow
	for _, t := range doc.Tasks {
		if t.Error != "" {
			rows = append(rows, GaugeRow{Connector: n, Task: t.ID, Agent: t.WorkerID, Error: t.Error})
			continue
		}
		for _, g := range t.Gauges {
			v := g.Value
			rows = append(rows, GaugeRow{Connector: n, Task: t.ID, Agent: t.WorkerID, Name: g.Name, Labels: g.Labels, Value: &v})
		}
	}
	return rows
}

// gaugeTable shows one gauge a line, a task's snapshot progress after its
// gauges (SnapshotProgress), and a task that could not be read with its
// error in place of a value.
func gaugeTable(rows []GaugeRow) *output.Rows {
	t := output.NewRows("CONNECTOR", "TASK", "AGENT", "GAUGE", "VALUE")
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && rows[end].Connector == rows[start].Connector && rows[end].Task == rows[start].Task {
			end++
		}
		task := rows[start:end:end]
		r, id := task[0], strconv.Itoa(task[0].Task)
		for _, g := range task {
			if g.Error != "" {
				t.Add(g.Connector, id, g.Agent, "", "error: "+output.FirstLine(g.Error))
				continue
			}
			t.Add(g.Connector, id, g.Agent, gaugeName(g.Name, g.Labels), strconv.FormatFloat(*g.Value, 'f', -1, 64))
		}
		for _, p := range SnapshotProgress(task) {
			t.Add(r.Connector, id, r.Agent, gaugeName("progress", map[string]string{"table": p.Table}), p.String())
		}
		for _, p := range IncrementalProgress(task) {
			t.Add(r.Connector, id, r.Agent, gaugeName("incremental_progress", map[string]string{"table": p.Table}), p.String())
		}
		start = end
	}
	return t
}

// gaugeName is a gauge as Prometheus writes it, without Sluice's prefix:
// name{label="value",…}, labels sorted.
func gaugeName(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+strconv.Quote(labels[k]))
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// TableProgress is how far the snapshot of one table is, from the native
// PostgreSQL connector's postgres_snapshot_chunks, …_chunks_done and
// …_rows gauges.
type TableProgress struct {
	Table            string
	Chunks, Done     int64
	Rows             int64
	HasRows, HasDone bool
}

// String is "30% (12/40 chunks, 12000 rows)".
func (p TableProgress) String() string {
	s := fmt.Sprintf("%d%% (%d/%d chunks", p.Done*100/p.Chunks, p.Done, p.Chunks)
	if p.HasRows {
		s += fmt.Sprintf(", %d rows", p.Rows)
	}
	return s + ")"
}

// SnapshotProgress is the snapshot progress of each table one task's
// gauges tell, by table: those with a chunk count and chunks done.
func SnapshotProgress(rows []GaugeRow) []TableProgress {
	by := map[string]*TableProgress{}
	for _, r := range rows {
		table, ok := r.Labels["table"]
		if !ok || r.Value == nil {
			continue
		}
		p := by[table]
		if p == nil {
			p = &TableProgress{Table: table}
			by[table] = p
		}
		switch r.Name {
		case "postgres_snapshot_chunks":
			p.Chunks = int64(*r.Value)
		case "postgres_snapshot_chunks_done":
			p.Done, p.HasDone = int64(*r.Value), true
		case "postgres_snapshot_rows":
			p.Rows, p.HasRows = int64(*r.Value), true
		}
	}
	var out []TableProgress
	for _, table := range slices.Sorted(maps.Keys(by)) {
		if p := by[table]; p.Chunks > 0 && p.HasDone {
			out = append(out, *p)
		}
	}
	return out
}

// IncrementalTable is how far an incremental snapshot of one table is,
// from the native PostgreSQL connector's
// postgres_incremental_snapshot_rows, …_rows_estimate and …_done gauges.
type IncrementalTable struct {
	Table          string
	Rows, Estimate int64
	Done           bool
}

// String is "done (3000 rows)" or "about 43% (1300 of ~3000 rows)".
func (p IncrementalTable) String() string {
	switch {
	case p.Done:
		return fmt.Sprintf("done (%d rows)", p.Rows)
	case p.Estimate > 0:
		return fmt.Sprintf("about %d%% (%d of ~%d rows)", min(p.Rows*100/p.Estimate, 99), p.Rows, p.Estimate)
	}
	return fmt.Sprintf("running (%d rows)", p.Rows)
}

// IncrementalProgress is the incremental snapshot progress of each table
// one task's gauges tell, by table.
func IncrementalProgress(rows []GaugeRow) []IncrementalTable {
	by := map[string]*IncrementalTable{}
	for _, r := range rows {
		table, ok := r.Labels["table"]
		if !ok || r.Value == nil || !strings.HasPrefix(r.Name, "postgres_incremental_snapshot_") {
			continue
		}
		p := by[table]
		if p == nil {
			p = &IncrementalTable{Table: table}
			by[table] = p
		}
		switch r.Name {
		case "postgres_incremental_snapshot_rows":
			p.Rows = int64(*r.Value)
		case "postgres_incremental_snapshot_rows_estimate":
			p.Estimate = int64(*r.Value)
		case "postgres_incremental_snapshot_done":
			p.Done = *r.Value == 1
		}
	}
	out := make([]IncrementalTable, 0, len(by))
	for _, table := range slices.Sorted(maps.Keys(by)) {
		out = append(out, *by[table])
	}
	return out
}
