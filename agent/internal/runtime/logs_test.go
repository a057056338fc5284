package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/shared/logging"
	"github.com/sluice-io/sluice/shared/logging/logtest"
	"github.com/sluice-io/sluice/shared/wire"
)

// TestTaskErrorsNameConnectorAndTask: a task's error lines carry its
// connector and its task id, so that a failure is found by either.
func TestTaskErrorsNameConnectorAndTask(t *testing.T) {
	var out logtest.Buffer
	lg := logging.NewJSON(&out, logging.LevelAll)
	reports := make(chan wire.StatusReport, 8)
	w := NewWorker(Config{Registry: plugins.Builtin(), Logger: lg.Logger(logging.AgentTasks),
		Report: func(r wire.StatusReport) { reports <- r }})
	ctx := context.Background()
	defer w.StopAll(ctx)
	id := api.TaskID{Connector: "orders-sink", Task: 3}
	w.Assign(ctx, 1, []wire.TaskAssignment{{ID: id, Generation: 1, ConnectorConfig: map[string]string{"connector.class": "not.installed"}}})
	deadline := time.After(10 * time.Second)
	for failed := false; !failed; {
		select {
		case r := <-reports:
			failed = r.State == api.StateFailed
		case <-deadline:
			t.Fatal("the task with a class not installed did not fail")
		}
	}
	recs := out.Records(t, "task failed")
	if len(recs) != 1 {
		t.Fatalf("%d task failed lines, want 1", len(recs))
	}
	r := recs[0]
	if r["level"] != "ERROR" || r["connector"] != "orders-sink" || r["task"] != "orders-sink-3" || r["err"] == nil {
		t.Fatalf("task failed line %v: want ERROR with connector orders-sink, task orders-sink-3 and the error", r)
	}
}
