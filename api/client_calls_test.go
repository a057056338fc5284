package api

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestEveryCall: each method's request line, and whether it is sent again
// after an answer that leaves its outcome unknown (a 503 other than
// "starting"): exactly the calls docs/client.md lists as repeatable.
func TestEveryCall(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var lines []string
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lines = append(lines, r.Method+" "+r.URL.RequestURI())
		first := len(lines) == 1
		mu.Unlock()
		if first {
			writeError(w, http.StatusServiceUnavailable, "Request was interrupted: the coordinator lost its Kafka brokers")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	c := newTestClient(t, Config{Address: s.URL}, nil)
	cs, off, pl, fl, ad := c.Connectors(), c.Offsets(), c.Plugins(), c.Fleet(), c.Admin()
	v := "v"
	since := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	sel := Selector{Names: []string{"a"}}
	const id = "1796119200123-c98a176d316d2399"
	for _, tt := range []struct {
		line string
		safe bool
		send func() error
	}{
		{"GET /connectors", true, func() error { _, err := cs.List(ctx); return err }},
		{"GET /connectors?expand=status&expand=info", true, func() error { _, err := cs.ListExpanded(ctx, true, true); return err }},
		{"GET /connectors/a%2Fb", true, func() error { _, err := cs.Get(ctx, "a/b"); return err }},
		{"GET /connectors/a/config", true, func() error { _, err := cs.Config(ctx, "a"); return err }},
		{"POST /connectors", false, func() error { _, err := cs.Create(ctx, CreateConnectorRequest{Name: "a"}); return err }},
		{"PUT /connectors/a/config", true, func() error { _, _, err := cs.PutConfig(ctx, "a", nil); return err }},
		{"PATCH /connectors/a/config", true, func() error { _, err := cs.PatchConfig(ctx, "a", map[string]*string{"k": &v}); return err }},
		{"DELETE /connectors/a", false, func() error { return cs.Delete(ctx, "a") }},
		{"DELETE /connectors/a?reset_offsets=true", false, func() error { return cs.DeleteResettingOffsets(ctx, "a") }},
		{"GET /connectors/a/status", true, func() error { _, err := cs.Status(ctx, "a"); return err }},
		{"PUT /connectors/a/pause", true, func() error { return cs.Pause(ctx, "a") }},
		{"PUT /connectors/a/resume", true, func() error { return cs.Resume(ctx, "a") }},
		{"PUT /connectors/a/stop", true, func() error { return cs.Stop(ctx, "a") }},
		{"POST /connectors/a/restart?includeTasks=true", false, func() error { _, err := cs.Restart(ctx, "a", RestartOptions{IncludeTasks: true}); return err }},
		{"GET /connectors/a/tasks", true, func() error { _, err := cs.Tasks(ctx, "a"); return err }},
		{"GET /connectors/a/tasks/2/status", true, func() error { _, err := cs.TaskStatus(ctx, "a", 2); return err }},
		{"POST /connectors/a/tasks/2/restart", false, func() error { return cs.RestartTask(ctx, "a", 2) }},
		{"GET /connectors/a/topics", true, func() error { _, err := cs.Topics(ctx, "a"); return err }},
		{"PUT /connectors/a/topics/reset", true, func() error { return cs.ResetTopics(ctx, "a") }},
		{"GET /sluice/connectors/a/lag", true, func() error { _, err := cs.Lag(ctx, "a"); return err }},
		{"GET /sluice/connectors/a/gauges", true, func() error { _, err := cs.Gauges(ctx, "a"); return err }},
		{"GET /sluice/connectors/a/lag/history", true, func() error { _, err := cs.LagHistory(ctx, "a"); return err }},
		{"GET /sluice/connectors/a/config/history?before=" + id + "&limit=5", true, func() error {
			_, err := cs.ConfigHistory(ctx, "a", HistoryQuery{Limit: 5, Before: id})
			return err
		}},
		{"GET /sluice/connectors/a/config/history/" + id, true, func() error { _, err := cs.ConfigHistoryEntry(ctx, "a", id); return err }},
		{"POST /sluice/connectors/a/config/history/" + id + "/restore", true, func() error { _, err := cs.RestoreConfig(ctx, "a", id); return err }},
		{"POST /sluice/connectors/a/signals", false, func() error {
			_, err := cs.Signal(ctx, "a", ConnectorSignal{Type: "stop-snapshot"})
			return err
		}},

		{"GET /connectors/a/offsets", true, func() error { _, err := off.Get(ctx, "a"); return err }},
		{"PATCH /connectors/a/offsets", true, func() error { _, err := off.Alter(ctx, "a", []ConnectorOffset{{}}); return err }},
		{"DELETE /connectors/a/offsets", true, func() error { _, err := off.Reset(ctx, "a"); return err }},
		{"POST /sluice/connectors/a/offsets/preview", true, func() error { _, err := off.Preview(ctx, "a", OffsetsPreviewRequest{Reset: true}); return err }},
		{"POST /sluice/connectors/a/offsets/reset", false, func() error { _, err := off.ResetTo(ctx, "a", OffsetsResetRequest{To: ResetLatest}); return err }},
		{"POST /sluice/connectors/a/offsets/reset", true, func() error {
			_, err := off.ResetTo(ctx, "a", OffsetsResetRequest{To: ResetLatest, DryRun: true})
			return err
		}},
		{"POST /sluice/connectors/a/offsets/restore", false, func() error { _, err := off.Restore(ctx, "a", OffsetsRestoreRequest{From: "b"}); return err }},
		{"GET /sluice/connectors/a/offsets/history?before=" + id + "&limit=5", true, func() error {
			_, err := off.History(ctx, "a", HistoryQuery{Limit: 5, Before: id})
			return err
		}},
		{"GET /sluice/connectors/a/offsets/history/" + id, true, func() error { _, err := off.HistoryEntry(ctx, "a", id); return err }},
		{"POST /sluice/connectors/a/offsets/history/" + id + "/undo?force=true", false, func() error {
			_, err := off.Undo(ctx, "a", id, UndoOptions{Force: true})
			return err
		}},
		{"POST /sluice/connectors/a/move", false, func() error { _, err := off.Move(ctx, "a", MoveRequest{To: "b"}); return err }},

		{"GET /connector-plugins", true, func() error { _, err := pl.List(ctx); return err }},
		{"GET /connector-plugins?connectorsOnly=false", true, func() error { _, err := pl.ListAll(ctx); return err }},
		{"GET /connector-plugins/p/config", true, func() error { _, err := pl.Config(ctx, "p"); return err }},
		{"PUT /connector-plugins/p/config/validate", true, func() error { _, err := pl.Validate(ctx, "p", nil); return err }},

		{"GET /sluice/agents", true, func() error { _, err := fl.Agents(ctx); return err }},
		{"GET /sluice/fleet/connectors?health=failed%2Cdegraded&label=team%3Da&limit=10", true, func() error {
			_, err := fl.Connectors(ctx, FleetQuery{Healths: []string{"failed", "degraded"}, Labels: map[string]string{"team": "a"}, Limit: 10})
			return err
		}},
		{"POST /sluice/migrations", false, func() error { _, err := fl.Migrate(ctx, MigrationRequest{URL: "http://c"}, false); return err }},
		{"POST /sluice/migrations?dry_run=true", true, func() error { _, err := fl.Migrate(ctx, MigrationRequest{URL: "http://c"}, true); return err }},
		{"GET /sluice/agents/x", true, func() error { _, err := fl.Agent(ctx, "x"); return err }},
		{"PUT /sluice/agents/x/cordon", true, func() error { _, err := fl.Cordon(ctx, "x"); return err }},
		{"PUT /sluice/agents/x/uncordon", true, func() error { _, err := fl.Uncordon(ctx, "x"); return err }},
		{"PUT /sluice/agents/x/drain?force=true", true, func() error { _, err := fl.Drain(ctx, "x", true); return err }},
		{"PUT /sluice/agents/x/drain?origin=pre-stop", true, func() error {
			_, err := fl.DrainWith(ctx, "x", DrainOptions{Origin: CordonPreStop})
			return err
		}},
		{"GET /sluice/agents/x/drain", true, func() error { _, err := fl.DrainStatus(ctx, "x"); return err }},
		{"POST /sluice/rebalance?max_moves=2", false, func() error { _, err := fl.Rebalance(ctx, RebalanceOptions{MaxMoves: 2}); return err }},
		{"POST /sluice/rebalance?dry_run=true", true, func() error { _, err := fl.Rebalance(ctx, RebalanceOptions{DryRun: true}); return err }},
		{"GET /sluice/rebalance", true, func() error { _, err := fl.RebalanceStatus(ctx); return err }},
		{"POST /sluice/connectors/pause", true, func() error { _, err := fl.PauseConnectors(ctx, sel); return err }},
		{"POST /sluice/connectors/resume", true, func() error { _, err := fl.ResumeConnectors(ctx, sel); return err }},
		{"POST /sluice/connectors/stop", true, func() error { _, err := fl.StopConnectors(ctx, sel); return err }},
		{"POST /sluice/connectors/restart?onlyFailed=true", false, func() error {
			_, err := fl.RestartConnectors(ctx, sel, RestartOptions{OnlyFailed: true})
			return err
		}},
		{"POST /sluice/maintenance", false, func() error { _, err := fl.OpenMaintenance(ctx, MaintenanceRequest{Selector: sel}); return err }},
		{"GET /sluice/maintenance", true, func() error { _, err := fl.MaintenanceWindows(ctx); return err }},
		{"GET /sluice/maintenance/w", true, func() error { _, err := fl.MaintenanceWindow(ctx, "w"); return err }},
		{"DELETE /sluice/maintenance/w", false, func() error { _, err := fl.CloseMaintenance(ctx, "w"); return err }},
		{"POST /sluice/rollouts", false, func() error {
			_, err := fl.CreateRollout(ctx, RolloutRequest{Selector: sel, Batches: []json.RawMessage{json.RawMessage(`1`)}})
			return err
		}},
		{"POST /sluice/rollouts?dry_run=true", true, func() error {
			_, err := fl.PlanRollout(ctx, RolloutRequest{Selector: sel})
			return err
		}},
		{"GET /sluice/rollouts", true, func() error { _, err := fl.Rollouts(ctx); return err }},
		{"GET /sluice/rollouts/r", true, func() error { _, err := fl.Rollout(ctx, "r"); return err }},
		{"PUT /sluice/rollouts/r/pause", false, func() error { _, err := fl.PauseRollout(ctx, "r"); return err }},
		{"PUT /sluice/rollouts/r/resume", false, func() error { _, err := fl.ResumeRollout(ctx, "r"); return err }},
		{"PUT /sluice/rollouts/r/abort", false, func() error { _, err := fl.AbortRollout(ctx, "r"); return err }},

		{"GET /sluice/audit?connector=a&limit=3&since=2026-12-01T10%3A00%3A00Z", true, func() error {
			_, err := c.Audit().Log(ctx, AuditQuery{Connector: "a", Since: since, Limit: 3})
			return err
		}},
		{"GET /sluice/audit?operation=offsets.%2A&principal=ada&until=2026-12-01T10%3A00%3A00Z", true, func() error {
			_, err := c.Audit().Log(ctx, AuditQuery{Principal: "ada", Operation: "offsets.*", Until: since})
			return err
		}},

		{"GET /", true, func() error { _, err := ad.ServerInfo(ctx); return err }},
		{"GET /health", false, func() error { _, err := ad.Health(ctx); return err }},    // a probe: sent once
		{"GET /readyz", false, func() error { _, err := ad.Readiness(ctx); return err }}, // a probe: sent once
		{"GET /metrics", true, func() error { _, err := ad.Metrics(ctx); return err }},
		{"GET /openapi.json", true, func() error { _, err := ad.OpenAPIDocument(ctx); return err }},
		{"GET /admin/loggers", true, func() error { _, err := ad.Loggers(ctx); return err }},
		{"GET /admin/loggers/org.x", true, func() error { _, err := ad.Logger(ctx, "org.x"); return err }},
		{"PUT /admin/loggers/org.x", true, func() error { _, err := ad.SetLoggerLevel(ctx, "org.x", "INFO"); return err }},
		{"PUT /admin/loggers/org.x?scope=cluster", true, func() error { return ad.SetClusterLoggerLevel(ctx, "org.x", "INFO") }},
	} {
		mu.Lock()
		lines = nil
		mu.Unlock()
		err := tt.send()
		mu.Lock()
		got := append([]string(nil), lines...)
		mu.Unlock()
		if len(got) == 0 || got[0] != tt.line {
			t.Errorf("sent %v, want %s", got, tt.line)
			continue
		}
		if want := map[bool]int{true: 2, false: 1}[tt.safe]; len(got) != want {
			t.Errorf("%s: sent %d times after an unknown outcome, want %d", tt.line, len(got), want)
		}
		if tt.safe != (err == nil) {
			t.Errorf("%s: error %v", tt.line, err)
		}
	}
}
