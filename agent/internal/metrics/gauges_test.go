package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/connect"
)

// TestTaskGauges: a task's own gauges are served, under Sluice's prefix
// with the agent, connector and task labels and the task's own, while the
// task is the agent's; a name or label Prometheus would refuse is left
// out, and Delete ends them.
func TestTaskGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := newAgent(t, reg, "agent-1", Session{})
	task := a.Task("pg", 0)
	lag := 1024.0
	task.ReportGauges(func() []connect.Gauge {
		return []connect.Gauge{
			{Name: "postgres_slot_lag_bytes", Help: "WAL the slot holds.", Value: lag},
			{Name: "postgres_snapshot_rows", Help: "Rows read.", Labels: map[string]string{"table": "public.items"}, Value: 7},
			{Name: "bad-name", Value: 1},
			{Name: "postgres_x", Labels: map[string]string{"task": "shadowed"}, Value: 1},
		}
	})
	got := series(t, reg)
	if m := got[GaugePrefix+"postgres_slot_lag_bytes"]["agent-1/pg/0"]; m == nil || m.GetGauge().GetValue() != 1024 {
		t.Fatalf("slot lag: %v (all: %v)", m, got)
	}
	rows := got[GaugePrefix+"postgres_snapshot_rows"]["agent-1/pg/0"]
	if rows == nil || rows.GetGauge().GetValue() != 7 || len(rows.GetLabel()) != 4 {
		t.Fatalf("snapshot rows: %v", rows)
	}
	if _, ok := got[GaugePrefix+"postgres_x"]; ok {
		t.Fatal("a gauge whose label shadows the task's was served")
	}
	lag = 2048
	if m := series(t, reg)[GaugePrefix+"postgres_slot_lag_bytes"]["agent-1/pg/0"]; m.GetGauge().GetValue() != 2048 {
		t.Fatalf("the value is read at each scrape: %v", m)
	}
	task.Delete()
	if _, ok := series(t, reg)[GaugePrefix+"postgres_slot_lag_bytes"]; ok {
		t.Fatal("gauges served after Delete")
	}
}
