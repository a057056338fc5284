package connectors

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

// TestGaugeTable checks the table of `get gauges`: one gauge a line with
// its labels, a table's snapshot progress after its task's gauges, and a
// task that could not be read with its error.
func TestGaugeTable(t *testing.T) {
	var doc api.ConnectorGauges
	if err := json.Unmarshal([]byte(`{"connector":"cdc","tasks":[
		{"id":0,"worker_id":"agent-1","gauges":[
			{"name":"postgres_slot_lag_bytes","value":16384},
			{"name":"postgres_snapshot_chunks","labels":{"table":"public.orders"},"value":40},
			{"name":"postgres_snapshot_chunks_done","labels":{"table":"public.orders"},"value":12},
			{"name":"postgres_snapshot_rows","labels":{"table":"public.orders"},"value":12000},
			{"name":"postgres_snapshot_chunks","labels":{"table":"public.empty"},"value":0},
			{"name":"postgres_snapshot_chunks_done","labels":{"table":"public.empty"},"value":0}]},
		{"id":1,"worker_id":"agent-2","gauges":[],"error":"agent agent-2 did not answer within 5s"}]}`), &doc); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := gaugeTable(gaugeRows("cdc", doc)).Write(&b); err != nil {
		t.Fatal(err)
	}
	want := `CONNECTOR  TASK  AGENT    GAUGE                                                 VALUE
cdc        0     agent-1  postgres_slot_lag_bytes                               16384
cdc        0     agent-1  postgres_snapshot_chunks{table="public.orders"}       40
cdc        0     agent-1  postgres_snapshot_chunks_done{table="public.orders"}  12
cdc        0     agent-1  postgres_snapshot_rows{table="public.orders"}         12000
cdc        0     agent-1  postgres_snapshot_chunks{table="public.empty"}        0
cdc        0     agent-1  postgres_snapshot_chunks_done{table="public.empty"}   0
cdc        0     agent-1  progress{table="public.orders"}                       30% (12/40 chunks, 12000 rows)
cdc        1     agent-2  -                                                     error: agent agent-2 did not answer within 5s
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestIncrementalProgress: a table's incremental snapshot progress line,
// from its rows, the server's estimate and whether it is done.
func TestIncrementalProgress(t *testing.T) {
	v := func(f float64) *float64 { return &f }
	table := func(name string) map[string]string { return map[string]string{"table": name} }
	rows := []GaugeRow{
		{Name: "postgres_signals_refused", Value: v(0)},
		{Name: "postgres_incremental_snapshot_rows", Labels: table("public.orders"), Value: v(1300)},
		{Name: "postgres_incremental_snapshot_rows_estimate", Labels: table("public.orders"), Value: v(3000)},
		{Name: "postgres_incremental_snapshot_done", Labels: table("public.orders"), Value: v(0)},
		{Name: "postgres_incremental_snapshot_rows", Labels: table("public.items"), Value: v(50)},
		{Name: "postgres_incremental_snapshot_done", Labels: table("public.items"), Value: v(1)},
		{Name: "postgres_incremental_snapshot_rows", Labels: table("public.new"), Value: v(7)},
		{Name: "postgres_snapshot_rows", Labels: table("public.other"), Value: v(7)},
	}
	var got []string
	for _, p := range IncrementalProgress(rows) {
		got = append(got, p.Table+": "+p.String())
	}
	want := "public.items: done (50 rows)|public.new: running (7 rows)|public.orders: about 43% (1300 of ~3000 rows)"
	if strings.Join(got, "|") != want {
		t.Fatalf("progress %q, want %q", strings.Join(got, "|"), want)
	}
}
