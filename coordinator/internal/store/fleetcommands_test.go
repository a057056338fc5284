package store

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/shared/records"
)

var at = time.Date(2026, 5, 4, 3, 2, 1, 0, time.FixedZone("X", 7200))

// twoBatches is a running rollout of batches [a] [b], rolling back on
// failure when rollback.
func twoBatches(rollback bool) Rollout {
	r := Rollout{ID: "r", State: RolloutRunning, Batches: []RolloutBatch{
		{State: BatchPending, Connectors: []RolloutConnector{{Name: "a", State: BatchPending}}},
		{State: BatchPending, Connectors: []RolloutConnector{{Name: "b", State: BatchPending}}}}}
	if rollback {
		r.Spec.OnFailure = "rollback"
	}
	return r
}

// TestRolloutTransitions is the table of the rollout commands: each takes
// a rollout from the state it starts from to the next, stamped with its
// At, and refuses (ErrStale, nothing written) any other state.
func TestRolloutTransitions(t *testing.T) {
	type change func(r *Rollout)
	set := func(state string, batch int, batchState string, conns ...string) change {
		return func(r *Rollout) {
			r.State, r.Batch = state, batch
			if batch < len(r.Batches) {
				r.Batches[batch].State = batchState
				for i, c := range conns {
					r.Batches[batch].Connectors[i].State = c
				}
			}
		}
	}
	for _, tt := range []struct {
		name     string
		rollback bool
		from     change
		cmd      Command
		want     change // nil: refused as stale
	}{
		{"start batch", false, nil, StartBatch{ID: "r", Generation: 7, Running: map[string]bool{"a": true}, At: at},
			func(r *Rollout) {
				r.Batches[0].State, r.Batches[0].StartGeneration, r.Batches[0].Connectors[0].WasRunning = BatchApplying, 7, true
			}},
		{"start a batch not pending", false, set(RolloutRunning, 0, BatchApplying), StartBatch{ID: "r", At: at}, nil},
		{"start another batch than the current", false, nil, StartBatch{ID: "r", Batch: 1, At: at}, nil},
		{"apply a connector", false, set(RolloutRunning, 0, BatchApplying),
			ApplyConnector{ID: "r", Connector: "a", Before: map[string]string{"v": "1"}, After: map[string]string{"v": "2"}, State: ConnectorApplied, At: at},
			func(r *Rollout) {
				c := &r.Batches[0].Connectors[0]
				c.State, c.Before, c.After = ConnectorApplied, map[string]string{"v": "1"}, map[string]string{"v": "2"}
			}},
		{"apply a connector twice", false, set(RolloutRunning, 0, BatchApplying, ConnectorApplied), ApplyConnector{ID: "r", Connector: "a", State: ConnectorApplied, At: at}, nil},
		{"apply a connector of a paused rollout", false, set(RolloutPaused, 0, BatchApplying), ApplyConnector{ID: "r", Connector: "a", State: ConnectorApplied, At: at}, nil},
		{"begin verifying", false, set(RolloutRunning, 0, BatchApplying, ConnectorApplied), BeginVerify{ID: "r", At: at},
			func(r *Rollout) { r.Batches[0].State, r.Batches[0].VerifyingSince = BatchVerifying, at.UTC() }},
		{"begin verifying again after a resume", false, set(RolloutRunning, 0, BatchVerifying, ConnectorApplied), BeginVerify{ID: "r", At: at},
			func(r *Rollout) { r.Batches[0].VerifyingSince = at.UTC() }},
		{"mark healthy", false, set(RolloutRunning, 0, BatchVerifying, ConnectorApplied), MarkHealthy{ID: "r", Since: at, At: at},
			func(r *Rollout) { r.Batches[0].HealthySince = at.UTC() }},
		{"mark healthy a batch not verifying", false, set(RolloutRunning, 0, BatchApplying), MarkHealthy{ID: "r", Since: at, At: at}, nil},
		{"skip deleted connectors", false, set(RolloutRunning, 0, BatchVerifying, ConnectorApplied), SkipConnectors{ID: "r", Connectors: []string{"a"}, At: at},
			func(r *Rollout) { r.Batches[0].Connectors[0].State = ConnectorSkipped }},
		{"advance", false, set(RolloutRunning, 0, BatchVerifying, ConnectorApplied), AdvanceBatch{ID: "r", At: at},
			func(r *Rollout) { r.Batches[0].State, r.Batch = BatchDone, 1 }},
		{"advance a batch not verifying", false, set(RolloutRunning, 0, BatchApplying), AdvanceBatch{ID: "r", At: at}, nil},
		{"advance a paused rollout", false, set(RolloutPaused, 0, BatchVerifying), AdvanceBatch{ID: "r", At: at}, nil},
		{"fail: pause", false, set(RolloutRunning, 0, BatchVerifying), FailBatch{ID: "r", Why: "boom", At: at},
			func(r *Rollout) { r.Batches[0].State, r.Error, r.State = BatchFailed, "boom", RolloutPaused }},
		{"fail: roll back", true, set(RolloutRunning, 0, BatchVerifying), FailBatch{ID: "r", Why: "boom", At: at},
			func(r *Rollout) { r.Batches[0].State, r.Error, r.State = BatchFailed, "boom", RolloutFailed }},
		{"pause", false, nil, PauseRollout{ID: "r", At: at}, func(r *Rollout) { r.State = RolloutPaused }},
		{"pause a paused rollout", false, set(RolloutPaused, 0, BatchPending), PauseRollout{ID: "r", At: at}, nil},
		{"resume a failed batch: verifies afresh", false, func(r *Rollout) {
			set(RolloutPaused, 0, BatchFailed)(r)
			r.Error, r.Batches[0].HealthySince, r.Batches[0].VerifyingSince = "boom", at, at
		}, ResumeRollout{ID: "r", At: at}, func(r *Rollout) {
			r.State, r.Error, r.Batches[0].State = RolloutRunning, "", BatchVerifying
			r.Batches[0].HealthySince, r.Batches[0].VerifyingSince = time.Time{}, time.Time{}
		}},
		{"resume a running rollout", false, nil, ResumeRollout{ID: "r", At: at}, nil},
		{"abort", false, nil, AbortRollout{ID: "r", At: at}, func(r *Rollout) { r.State = RolloutAborted }},
		{"abort a done rollout", false, set(RolloutDone, 2, ""), AbortRollout{ID: "r", At: at}, nil},
		{"roll back a connector", true, set(RolloutFailed, 0, BatchFailed, ConnectorApplied), RollBackConnector{ID: "r", Connector: "a", State: BatchRolledBack, At: at},
			func(r *Rollout) { r.Batches[0].Connectors[0].State = BatchRolledBack }},
		{"roll back a connector not applied", true, set(RolloutFailed, 0, BatchFailed), RollBackConnector{ID: "r", Connector: "a", State: BatchRolledBack, At: at}, nil},
		{"roll back a batch", true, set(RolloutFailed, 0, BatchFailed), RollBackBatch{ID: "r", At: at},
			func(r *Rollout) { r.Batches[0].State = BatchRolledBack }},
		{"finish a rollback", true, set(RolloutFailed, 0, BatchRolledBack), FinishRollBack{ID: "r", At: at}, func(r *Rollout) { r.State = RolloutRolledBack }},
		{"finish a rollback of a running rollout", true, nil, FinishRollBack{ID: "r", At: at}, nil},
		{"finish", false, set(RolloutRunning, 2, ""), FinishRollout{ID: "r", At: at}, func(r *Rollout) { r.State = RolloutDone }},
		{"finish with a batch left", false, set(RolloutRunning, 1, BatchPending), FinishRollout{ID: "r", At: at}, nil},
		{"a rollout that is gone", false, nil, PauseRollout{ID: "nope", At: at}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMemory()
			r := twoBatches(tt.rollback)
			if tt.from != nil {
				tt.from(&r)
			}
			m.Fleet.rollouts["r"] = deepCopy(r)
			err := m.Apply(context.Background(), tt.cmd)
			got, _ := m.Fleet.Rollout("r")
			if tt.want == nil {
				if !errors.Is(err, ErrStale) || len(m.Txns) != 0 || !reflect.DeepEqual(got, deepCopy(r)) {
					t.Fatalf("err %v, %d writes, rollout %+v; want refused as stale, unchanged", err, len(m.Txns), got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := deepCopy(r)
			tt.want(&want)
			want.UpdatedAt = at.UTC()
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("rollout\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestTransitionsComposeInOneCall: the commands of one call see each
// other's changes, so a rollout can move two steps in one transaction,
// and a refusal of the second writes neither.
func TestTransitionsComposeInOneCall(t *testing.T) {
	m := NewMemory()
	ctx := context.Background()
	if err := m.Apply(ctx, StartRollout{Rollout: twoBatches(false)}, StartBatch{ID: "r", At: at},
		ApplyConnector{ID: "r", Connector: "a", State: ConnectorApplied, At: at}, BeginVerify{ID: "r", At: at}); err != nil {
		t.Fatal(err)
	}
	if r, _ := m.Fleet.Rollout("r"); r.Batches[0].State != BatchVerifying || len(m.Txns) != 1 || len(m.Txns[0]) != 4 {
		t.Fatalf("%+v, %d txns", r, len(m.Txns))
	}
	err := m.Apply(ctx, AdvanceBatch{ID: "r", At: at}, AdvanceBatch{ID: "r", At: at})
	if !errors.Is(err, ErrStale) {
		t.Fatalf("second advance: %v", err)
	}
	if r, _ := m.Fleet.Rollout("r"); r.Batch != 0 || len(m.Txns) != 1 {
		t.Fatalf("a refused call wrote: batch %d, %d txns", r.Batch, len(m.Txns))
	}
	if err := m.Apply(ctx, DeleteRollout{ID: "r"}, StartRollout{Rollout: twoBatches(false)}); err != nil {
		t.Fatalf("delete and re-create in one call: %v", err)
	}
}

// TestInvalidFleetCommands: records no reader should keep are refused.
func TestInvalidFleetCommands(t *testing.T) {
	m := NewMemory()
	for _, tt := range []struct {
		cmd  Command
		want string
	}{
		{OpenWindow{Window: Window{State: "STOPPED"}}, "needs an id"},
		{OpenWindow{Window: Window{ID: "w", State: "RUNNING", Connectors: []WindowConnector{{Name: "c"}}}}, `not "RUNNING"`},
		{OpenWindow{Window: Window{ID: "w", State: "PAUSED"}}, "holds no connector"},
		{CloseWindow{}, "needs its id"},
		{StartRollout{Rollout: Rollout{State: RolloutRunning}}, "needs an id"},
		{StartRollout{Rollout: Rollout{ID: "r", State: RolloutPaused}}, "must start running"},
		{StartRollout{Rollout: Rollout{ID: "r", State: RolloutRunning, Batches: []RolloutBatch{{State: BatchPending}}}}, "non-empty pending batches"},
		{ApplyConnector{ID: "r", Connector: "a"}, "no outcome"},
		{DeleteRollout{}, "needs its id"},
		{MarkAgent{ID: "a"}, "unknown agent state"},
		{PutTaskStatus{Connector: "c", Task: -1, State: "RUNNING"}, "invalid task status"},
		{PutConnectorStatus{Name: "c"}, "needs the connector's name and a state"},
		{MarkTopicUse{Connector: "c", Topic: strings.Repeat("t", MaxTopicName+1)}, "invalid topic use"},
		{MarkTopicUse{Connector: "c"}, "invalid topic use"},
	} {
		if err := m.Apply(context.Background(), tt.cmd); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%T %+v: %v, want %q", tt.cmd, tt.cmd, err, tt.want)
		}
	}
	w := Window{ID: "w", State: "PAUSED", Connectors: []WindowConnector{{Name: "c"}}}
	if err := m.Apply(context.Background(), OpenWindow{Window: w}, OpenWindow{Window: w}); !errors.Is(err, ErrStale) {
		t.Errorf("a window opened twice: %v", err)
	}
	if len(m.Txns) != 0 {
		t.Fatalf("invalid commands wrote %d transactions", len(m.Txns))
	}
}

// TestStatusCommandRecords pins the status records, byte for byte as Kafka
// Connect writes them.
func TestStatusCommandRecords(t *testing.T) {
	recs, err := encode([]Command{
		PutConnectorStatus{Name: "c", State: "RUNNING", Worker: "h:8083"},
		PutTaskStatus{Connector: "c", Task: 2, State: "FAILED", Trace: "boom", Worker: "a1", Generation: 9},
		MarkTopicUse{Connector: "c", Task: 2, Topic: "t", At: time.UnixMilli(1700000000123)},
		DeleteConnectorStatus{Name: "c"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []rec{
		{"status-connector-c", val(`{"state":"RUNNING","trace":null,"worker_id":"h:8083","generation":0}`)},
		{"status-task-c-2", val(`{"state":"FAILED","trace":"boom","worker_id":"a1","generation":9}`)},
		{records.TopicStatusKey("c", "t"), val(string(records.EncodeTopicUse(records.TopicUse{Name: "t", Connector: "c", Task: 2, DiscoverTimestamp: 1700000000123})))},
		{"status-connector-c", nil},
	}
	if got := gotRecords(recs); !reflect.DeepEqual(got, want) {
		t.Fatalf("records:\n got %v\nwant %v", got, want)
	}
}

// TestOldFleetRecordsRead: the records an earlier version wrote (api/v1's
// JSON) are read as they are.
func TestOldFleetRecordsRead(t *testing.T) {
	s := NewFleetState()
	for key, value := range map[string]string{
		"maintenance-w": `{"id":"w","selector":{"match":"db-*"},"state":"PAUSED","principal":"ann","opened_at":"2026-01-02T03:04:05Z","connectors":[{"name":"db-1","previous":"RUNNING"}]}`,
		"rollout-r": `{"id":"r","state":"running","request":{"names":["a"],"patch":{"k":"v","x":null},"batches":[1,"rest"],"health":{"running_for":"30s","max_failed_tasks":1},"on_failure":"rollback"},"principal":"ann","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z","batch":0,` +
			`"batches":[{"state":"verifying","connectors":[{"name":"a","before":{"k":"u"},"after":{"k":"v"},"was_running":true,"state":"applied"}],"verifying_since":"2026-01-02T03:04:06Z","start_generation":4}]}`,
		"rebalance": `{"id":"b","dry_run":false,"state":"running","max_moves":2,"moves":[{"connector":"c","task":1,"from":"a1","to":"a2","state":"moving"}],"before":{"a1":2},"after":{"a1":1}}`,
	} {
		if err := s.apply(key, []byte(value)); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
	}
	w, _ := s.Window("w")
	r, _ := s.Rollout("r")
	b := s.Rebalance()
	if w.Selector.Match != "db-*" || w.Connectors[0].Previous != "RUNNING" || !w.OpenedAt.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("window %+v", w)
	}
	if r.Spec.Names[0] != "a" || *r.Spec.Patch["k"] != "v" || r.Spec.Patch["x"] != nil || len(r.Spec.Batches) != 2 || !r.Spec.RollsBack() ||
		r.Spec.Health.MaxFailedTasks != 1 || r.Batches[0].StartGeneration != 4 || !r.Batches[0].Connectors[0].WasRunning || r.Batches[0].VerifyingSince.IsZero() {
		t.Fatalf("rollout %+v", r)
	}
	if b == nil || b.Moves[0].To != "a2" || b.MaxMoves != 2 || b.Before["a1"] != 2 {
		t.Fatalf("rebalance %+v", b)
	}
}
