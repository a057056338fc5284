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
