package connectors

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/complete"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// getLagCommand is `get lag NAME… [--history]`.
func getLagCommand() *cli.Command {
	return &cli.Command{Name: "lag", ArgsUsage: "NAME…",
		Usage: "the named sink connectors' consumer lag per partition (GET /sluice/connectors/NAME/lag); --history: over the leader's last 240 samples, an hour by default (…/lag/history)",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "history", Usage: "the lag over the last samples the leader took, with a sparkline, not only now"}},
		Action: func(c *cli.Context) error {
			if c.Bool("history") {
				return perConnector(c, func(s *session.Session) func(context.Context, string) (api.LagHistory, error) {
					return s.API.Connectors().LagHistory
				}, lagHistoryRows, lagHistoryTable)
			}
			return perConnector(c, func(s *session.Session) func(context.Context, string) (api.ConnectorLag, error) {
				return s.API.Connectors().Lag
			}, lagRows, lagTable)
		},
		BashComplete: complete.Connectors}
}

// LagRow is one partition of a sink in `get lag`.
type LagRow struct {
	Connector string `json:"connector"`
	api.PartitionLag
}

func lagRows(n string, l api.ConnectorLag) []LagRow {
	rows := make([]LagRow, 0, len(l.Partitions))
	for _, p := range l.Partitions {
		rows = append(rows, LagRow{Connector: n, PartitionLag: p})
	}
	return rows
}

func lagTable(rows []LagRow) *output.Rows {
	t := output.NewRows("CONNECTOR", "TOPIC", "PARTITION", "LAG", "COMMITTED", "END")
	for _, r := range rows {
		committed := strconv.FormatInt(r.CommittedOffset, 10)
		if r.CommittedOffset < 0 {
			committed = "-"
		}
		t.Add(r.Connector, r.Topic, strconv.Itoa(int(r.Partition)), strconv.FormatInt(r.Lag, 10), committed, strconv.FormatInt(r.EndOffset, 10))
	}
	return t
}

// LagHistoryRow is one partition of a sink in `get lag --history`; Note
// alone is set for a connector without series (a source).
type LagHistoryRow struct {
	Connector string     `json:"connector"`
	Topic     string     `json:"topic,omitempty"`
	Partition int32      `json:"partition"`
	Samples   [][2]int64 `json:"samples,omitempty"`
	Note      string     `json:"note,omitempty"`
}

func lagHistoryRows(n string, h api.LagHistory) []LagHistoryRow {
	if len(h.Partitions) == 0 {
		note := h.Note
		if note == "" {
			note = "no sample yet"
		}
		return []LagHistoryRow{{Connector: n, Note: note}}
	}
	rows := make([]LagHistoryRow, 0, len(h.Partitions))
	for _, p := range h.Partitions {
		rows = append(rows, LagHistoryRow{Connector: n, Topic: p.Topic, Partition: p.Partition, Samples: p.Samples})
	}
	return rows
}

// sparkWidth is how many of the newest samples the sparkline draws.
const sparkWidth = 40

func lagHistoryTable(rows []LagHistoryRow) *output.Rows {
	t := output.NewRows("CONNECTOR", "TOPIC", "PARTITION", "NOW", "MIN", "MAX", "SINCE", "TREND")
	for _, r := range rows {
		if len(r.Samples) == 0 {
			t.Add(r.Connector, "", "", "", "", "", "", r.Note)
			continue
		}
		lo, hi := r.Samples[0][1], r.Samples[0][1]
		for _, s := range r.Samples {
			lo, hi = min(lo, s[1]), max(hi, s[1])
		}
		since := time.UnixMilli(r.Samples[0][0]).Local().Format(time.TimeOnly)
		t.Add(r.Connector, r.Topic, strconv.Itoa(int(r.Partition)), strconv.FormatInt(r.Samples[len(r.Samples)-1][1], 10),
			strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10), since, Sparkline(r.Samples, sparkWidth))
	}
	return t
}

// sparks are the sparkline's levels, lowest first.
var sparks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws the newest width samples' lags, each as a block whose
// height is its lag between 0 and the highest drawn.
func Sparkline(samples [][2]int64, width int) string {
	if len(samples) > width {
		samples = samples[len(samples)-width:]
	}
	var hi int64
	for _, s := range samples {
		hi = max(hi, s[1])
	}
	var b strings.Builder
	for _, s := range samples {
		level := 0
		if hi > 0 {
			level = int(s[1] * int64(len(sparks)-1) / hi)
		}
		b.WriteRune(sparks[level])
	}
	return b.String()
}
