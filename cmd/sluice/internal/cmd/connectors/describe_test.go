package connectors

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/golden"
)

// TestDescribeSinkGolden: how describe shows a failed sink with its lag
// per partition, from the shape GET /sluice/connectors/{name}/lag answers
// with; and "lag: unavailable" when a coordinator does not serve it.
func TestDescribeSinkGolden(t *testing.T) {
	var lag api.ConnectorLag
	if err := json.Unmarshal([]byte(`{"connector":"s","total_lag":7,"partitions":[`+
		`{"topic":"t","partition":0,"end_offset":10,"committed_offset":5,"lag":5},`+
		`{"topic":"t","partition":1,"end_offset":2,"committed_offset":-1,"lag":2}]}`), &lag); err != nil {
		t.Fatal(err)
	}
	d := description{Name: "s", Type: "sink", Config: map[string]string{"connector.class": "FileStreamSink", "topics": "t"},
		Topics: []string{"t"}, Lag: &lag}
	d.State.State, d.State.WorkerID = "RUNNING", "10.0.0.1:8083"
	d.Tasks = []api.TaskState{{ID: 0, State: "FAILED", WorkerID: "agent-2", Trace: "org.apache.kafka.connect.errors.ConnectException: disk full\n\tat x.y(z)"}}
	var out strings.Builder
	if err := d.write(&out); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "describe-sink", out.String())
	d.Lag = nil
	out.Reset()
	if err := d.write(&out); err != nil || !strings.HasSuffix(out.String(), "\nlag: unavailable\n") {
		t.Fatalf("without lag: %v\n%s", err, out.String())
	}
}

// TestDescribeGauges: describe shows the tasks' gauges, with a snapshot's
// progress, after the offsets; or why they could not be read.
func TestDescribeGauges(t *testing.T) {
	v := 12.0
	total := 40.0
	d := description{Name: "cdc", Type: "source", Config: map[string]string{"connector.class": "PostgresSource"},
		Gauges: []GaugeRow{
			{Connector: "cdc", Task: 0, Agent: "agent-1", Name: "postgres_snapshot_chunks", Labels: map[string]string{"table": "public.t"}, Value: &total},
			{Connector: "cdc", Task: 0, Agent: "agent-1", Name: "postgres_snapshot_chunks_done", Labels: map[string]string{"table": "public.t"}, Value: &v},
		}}
	d.State.State = "RUNNING"
	var out strings.Builder
	if err := d.write(&out); err != nil {
		t.Fatal(err)
	}
	want := "\ngauges:\n" +
		"  CONNECTOR  TASK  AGENT    GAUGE                                            VALUE\n" +
		"  cdc        0     agent-1  postgres_snapshot_chunks{table=\"public.t\"}       40\n" +
		"  cdc        0     agent-1  postgres_snapshot_chunks_done{table=\"public.t\"}  12\n" +
		"  cdc        0     agent-1  progress{table=\"public.t\"}                       30% (12/40 chunks)\n"
	if !strings.HasSuffix(out.String(), want) {
		t.Errorf("describe:\n%s\nwant it to end with:%s", out.String(), want)
	}
	d.Missing = map[string]string{"gauges": "409: no leader"}
	out.Reset()
	if err := d.write(&out); err != nil || !strings.HasSuffix(out.String(), "\ngauges: unavailable (409: no leader)\n") {
		t.Fatalf("gauges unavailable: %v\n%s", err, out.String())
	}
}
