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
