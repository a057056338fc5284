package httpapi

// The typed Go client (github.com/sluice-io/sluice/api) against this
// transport: every route of the table has a client method, and every
// method's request is one the transport's strict decoders take.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/connectors"
)

// clientCalls are one call of every client method, by the op of the route
// it must reach.
var clientCalls = map[string]func(context.Context, *api.Client) error{
	"server_info": func(ctx context.Context, c *api.Client) error { _, err := c.Admin().ServerInfo(ctx); return err },
	"health": func(ctx context.Context, c *api.Client) error {
		// The fake answers 503 "starting", with the health document.
		h, err := c.Admin().Health(ctx)
		if api.IsCode(err, api.CodeUnavailable) && h.Status == "starting" {
			return nil
		}
		return err
	},
	"readyz":          func(ctx context.Context, c *api.Client) error { _, err := c.Admin().Readiness(ctx); return err },
	"metrics":         func(ctx context.Context, c *api.Client) error { _, err := c.Admin().Metrics(ctx); return err },
	"openapi":         func(ctx context.Context, c *api.Client) error { _, err := c.Admin().OpenAPIDocument(ctx); return err },
	"list_connectors": func(ctx context.Context, c *api.Client) error { _, err := c.Connectors().List(ctx); return err },
	"create_connector": func(ctx context.Context, c *api.Client) error {
		_, err := c.Connectors().Create(ctx, createRequest())
		return err
	},
	"get_connector": func(ctx context.Context, c *api.Client) error { _, err := c.Connectors().Get(ctx, "a/b"); return err },
	"delete_connector": func(ctx context.Context, c *api.Client) error {
		if err := c.Connectors().Delete(ctx, "a"); err != nil {
			return err
		}
		return c.Connectors().DeleteResettingOffsets(ctx, "a")
	},
	"get_connector_config": func(ctx context.Context, c *api.Client) error { _, err := c.Connectors().Config(ctx, "a"); return err },
	"put_connector_config": func(ctx context.Context, c *api.Client) error {
		_, _, err := c.Connectors().PutConfig(ctx, "a", map[string]string{"k": "v"})
		return err
	},
	"patch_connector_config": func(ctx context.Context, c *api.Client) error {
		v := "v"
		_, err := c.Connectors().PatchConfig(ctx, "a", map[string]*string{"k": &v, "gone": nil})
		return err
	},
	"connector_status": func(ctx context.Context, c *api.Client) error { _, err := c.Connectors().Status(ctx, "a"); return err },
	"task_configs":     func(ctx context.Context, c *api.Client) error { _, err := c.Connectors().Tasks(ctx, "a"); return err },
	"task_status": func(ctx context.Context, c *api.Client) error {
		_, err := c.Connectors().TaskStatus(ctx, "a", 0)
		return err
	},
	"restart_task":      func(ctx context.Context, c *api.Client) error { return c.Connectors().RestartTask(ctx, "a", 1) },
	"stop_connector":    func(ctx context.Context, c *api.Client) error { return c.Connectors().Stop(ctx, "a") },
	"pause_connector":   func(ctx context.Context, c *api.Client) error { return c.Connectors().Pause(ctx, "a") },
	"resume_connector":  func(ctx context.Context, c *api.Client) error { return c.Connectors().Resume(ctx, "a") },
	"restart_connector": func(ctx context.Context, c *api.Client) error { return restartBoth(ctx, c) },
	"connector_topics":  func(ctx context.Context, c *api.Client) error { _, err := c.Connectors().Topics(ctx, "a"); return err },
	"reset_connector_topics": func(ctx context.Context, c *api.Client) error {
		return c.Connectors().ResetTopics(ctx, "a")
	},
	"get_offsets": func(ctx context.Context, c *api.Client) error { _, err := c.Offsets().Get(ctx, "a"); return err },
	"alter_offsets": func(ctx context.Context, c *api.Client) error {
		_, err := c.Offsets().Alter(ctx, "a", []api.ConnectorOffset{{Partition: map[string]any{"f": "x"}, Offset: nil}})
		return err
	},
	"reset_offsets": func(ctx context.Context, c *api.Client) error { _, err := c.Offsets().Reset(ctx, "a"); return err },
	"list_plugins": func(ctx context.Context, c *api.Client) error {
		if _, err := c.Plugins().List(ctx); err != nil {
			return err
		}
		_, err := c.Plugins().ListAll(ctx)
		return err
	},
	"plugin_config": func(ctx context.Context, c *api.Client) error {
		_, err := c.Plugins().Config(ctx, "FileStreamSource")
		return err
	},
	"validate_config": func(ctx context.Context, c *api.Client) error {
		_, err := c.Plugins().Validate(ctx, "FileStreamSource", map[string]string{"connector.class": "FileStreamSource"})
		return err
	},
	"list_loggers": func(ctx context.Context, c *api.Client) error { _, err := c.Admin().Loggers(ctx); return err },
	"get_logger":   func(ctx context.Context, c *api.Client) error { _, err := c.Admin().Logger(ctx, "root"); return err },
	"set_logger_level": func(ctx context.Context, c *api.Client) error {
		if _, err := c.Admin().SetLoggerLevel(ctx, "org.x", "DEBUG"); err != nil {
			return err
		}
		return c.Admin().SetClusterLoggerLevel(ctx, "org.x", "INFO")
	},
	"audit_log": func(ctx context.Context, c *api.Client) error {
		_, err := c.Audit().Log(ctx, api.AuditQuery{Connector: "a", Since: time.Now().Add(-time.Hour), Limit: 5})
		return err
	},
	"fleet_connectors": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().Connectors(ctx, api.FleetQuery{Q: "ord", States: []string{api.StateRunning, api.StateFailed}, Healths: []string{api.HealthFailed},
			Types: []string{api.TypeSink}, Agent: "agent-1", Plugin: "FileStreamSink", Labels: map[string]string{"team": "orders", "env": "prod"},
			Sort: api.SortChanged, Offset: 50, Limit: 25})
		return err
	},
	"migrate": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().Migrate(ctx, api.MigrationRequest{URL: "http://connect:8083", Connectors: "a", LeaveStopped: true, DeleteSource: true,
			StopTimeout: "1m", User: "u", Password: "p"}, true)
		return err
	},
	"bulk_pause": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().PauseConnectors(ctx, api.Selector{Names: []string{"a"}})
		return err
	},
	"bulk_resume": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().ResumeConnectors(ctx, api.Selector{Match: "a*"})
		return err
	},
	"bulk_stop": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().StopConnectors(ctx, api.Selector{Match: "*"})
		return err
	},
	"bulk_restart": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().RestartConnectors(ctx, api.Selector{Match: "*"}, api.RestartOptions{IncludeTasks: true, OnlyFailed: true})
		return err
	},
	"open_maintenance": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().OpenMaintenance(ctx, api.MaintenanceRequest{Selector: api.Selector{Match: "*"}, State: api.StateStopped, Reason: "db upgrade"})
		return err
	},
	"list_maintenance": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().MaintenanceWindows(ctx)
		return err
	},
	"get_maintenance": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().MaintenanceWindow(ctx, "w1")
		return err
	},
	"close_maintenance": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().CloseMaintenance(ctx, "w1")
		return err
	},
	"connector_lag": func(ctx context.Context, c *api.Client) error { _, err := c.Connectors().Lag(ctx, "a"); return err },
	"connector_lag_history": func(ctx context.Context, c *api.Client) error {
		_, err := c.Connectors().LagHistory(ctx, "a")
		return err
	},
	"config_history": func(ctx context.Context, c *api.Client) error {
		_, err := c.Connectors().ConfigHistory(ctx, "a", api.HistoryQuery{Limit: 2, Before: historyID})
		return err
	},
	"config_history_entry": func(ctx context.Context, c *api.Client) error {
		_, err := c.Connectors().ConfigHistoryEntry(ctx, "a", historyID)
		return err
	},
	"restore_config": func(ctx context.Context, c *api.Client) error {
		_, err := c.Connectors().RestoreConfig(ctx, "a", historyID)
		return err
	},
	"connector_gauges": func(ctx context.Context, c *api.Client) error {
		_, err := c.Connectors().Gauges(ctx, "a")
		return err
	},
	"send_signal": func(ctx context.Context, c *api.Client) error {
		_, err := c.Connectors().Signal(ctx, "a", api.ConnectorSignal{Type: "stop-snapshot"})
		return err
	},
	"preview_offsets": func(ctx context.Context, c *api.Client) error {
		_, err := c.Offsets().Preview(ctx, "a", api.OffsetsPreviewRequest{Reset: true})
		return err
	},
	"reset_offsets_to": func(ctx context.Context, c *api.Client) error {
		n := int64(-5)
		_, err := c.Offsets().ResetTo(ctx, "a", api.OffsetsResetRequest{ShiftBy: &n, Topics: []string{"t"}, Partitions: []int32{0}, DryRun: true})
		return err
	},
	"restore_offsets": func(ctx context.Context, c *api.Client) error {
		_, err := c.Offsets().Restore(ctx, "a", api.OffsetsRestoreRequest{From: "old", Entry: historyID, Positions: "after"})
		return err
	},
	"offsets_history": func(ctx context.Context, c *api.Client) error {
		_, err := c.Offsets().History(ctx, "a", api.HistoryQuery{Limit: 2, Before: historyID})
		return err
	},
	"offsets_history_entry": func(ctx context.Context, c *api.Client) error {
		_, err := c.Offsets().HistoryEntry(ctx, "a", historyID)
		return err
	},
	"undo_offsets": func(ctx context.Context, c *api.Client) error {
		_, err := c.Offsets().Undo(ctx, "a", historyID, api.UndoOptions{Force: true, DryRun: true})
		return err
	},
	"move_connector": func(ctx context.Context, c *api.Client) error {
		_, err := c.Offsets().Move(ctx, "a", api.MoveRequest{To: "b", Config: map[string]string{"k": "v"}, Copy: true})
		return err
	},
	"list_agents":  func(ctx context.Context, c *api.Client) error { _, err := c.Fleet().Agents(ctx); return err },
	"get_agent":    func(ctx context.Context, c *api.Client) error { _, err := c.Fleet().Agent(ctx, "agent-1"); return err },
	"cordon_agent": func(ctx context.Context, c *api.Client) error { _, err := c.Fleet().Cordon(ctx, "agent-1"); return err },
	"uncordon_agent": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().Uncordon(ctx, "agent-1")
		return err
	},
	"drain_agent": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().DrainWith(ctx, "agent-1", api.DrainOptions{Force: true, Origin: api.CordonPreStop})
		return err
	},
	"drain_status": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().DrainStatus(ctx, "agent-1")
		return err
	},
	"rebalance": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().Rebalance(ctx, api.RebalanceOptions{MaxMoves: 3, DryRun: true})
		return err
	},
	"rebalance_status": func(ctx context.Context, c *api.Client) error { _, err := c.Fleet().RebalanceStatus(ctx); return err },
	"create_rollout": func(ctx context.Context, c *api.Client) error {
		v := "2"
		req := api.RolloutRequest{Selector: api.Selector{Match: "*"}, Patch: map[string]*string{"tasks.max": &v, "x": nil},
			Batches: []json.RawMessage{json.RawMessage(`1`), json.RawMessage(`"rest"`)}, Health: api.RolloutHealth{RunningFor: "1s"}, OnFailure: "rollback"}
		if p, err := c.Fleet().PlanRollout(ctx, req); err != nil || p.State != api.RolloutPlanned {
			return fmt.Errorf("plan: %+v, %w", p, err)
		}
		_, err := c.Fleet().CreateRollout(ctx, req)
		return err
	},
	"list_rollouts": func(ctx context.Context, c *api.Client) error { _, err := c.Fleet().Rollouts(ctx); return err },
	"get_rollout":   func(ctx context.Context, c *api.Client) error { _, err := c.Fleet().Rollout(ctx, "r1"); return err },
	"pause_rollout": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().PauseRollout(ctx, "r1")
		return err
	},
	"resume_rollout": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().ResumeRollout(ctx, "r1")
		return err
	},
	"abort_rollout": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().AbortRollout(ctx, "r1")
		return err
	},

	// Agent rolls.
	"create_agent_roll": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().StartAgentRoll(ctx, api.AgentRollRequest{Agents: []string{"a"}, BatchSize: 1, Timeout: "1m"})
		return err
	},
	"list_agent_rolls": func(ctx context.Context, c *api.Client) error { _, err := c.Fleet().AgentRolls(ctx); return err },
	"get_agent_roll":   func(ctx context.Context, c *api.Client) error { _, err := c.Fleet().AgentRoll(ctx, "r1"); return err },
	"pause_agent_roll": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().PauseAgentRoll(ctx, "r1")
		return err
	},
	"resume_agent_roll": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().ResumeAgentRoll(ctx, "r1")
		return err
	},
	"abort_agent_roll": func(ctx context.Context, c *api.Client) error {
		_, err := c.Fleet().AbortAgentRoll(ctx, "r1")
		return err
	},
}

// historyID is an offsets history entry id of the valid shape.
const historyID = "1796119200123-c98a176d316d2399"

func createRequest() api.CreateConnectorRequest {
	return api.CreateConnectorRequest{Name: "a", Config: map[string]string{"connector.class": "FileStreamSource"}, InitialState: api.StateStopped,
		InitialOffsets: []api.ConnectorOffset{{Partition: map[string]any{"filename": "f"}, Offset: map[string]any{"position": json.Number("7")}}}}
}

// restartBoth restarts the connector alone (204) and with its tasks (202).
func restartBoth(ctx context.Context, c *api.Client) error {
	if _, err := c.Connectors().Restart(ctx, "a", api.RestartOptions{}); err != nil {
		return err
	}
	_, err := c.Connectors().Restart(ctx, "a", api.RestartOptions{IncludeTasks: true, OnlyFailed: true})
	return err
}

// TestClientCoversTheRouteTable sends every client method to the real
// transport: each must be taken (no 4xx from a decoder) and reach the
// route it is for, and every route must be reached by one.
func TestClientCoversTheRouteTable(t *testing.T) {
	ops := map[string]string{} // pattern → op
	mux := http.NewServeMux()
	for _, rt := range routes() {
		ops[rt.pattern] = rt.op
		mux.HandleFunc(rt.pattern, func(http.ResponseWriter, *http.Request) {})
	}
	var mu sync.Mutex
	reached := map[string]bool{}
	h := NewHandler(newFake().services())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(dotsAsNames(r)); pattern != "" {
			mu.Lock()
			reached[ops[pattern]] = true
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c, err := api.NewClient(api.Config{Address: srv.URL, Retry: &api.NoRetry})
	if err != nil {
		t.Fatal(err)
	}
	for op, send := range clientCalls {
		if err := send(context.Background(), c); err != nil {
			t.Errorf("%s: %v", op, err)
		}
	}
	for _, rt := range routes() {
		if !reached[rt.op] {
			t.Errorf("route %s (%s) has no client method (or it reached another route)", rt.pattern, rt.op)
		}
		if _, ok := clientCalls[rt.op]; !ok {
			t.Errorf("route %s (%s) is not in clientCalls", rt.pattern, rt.op)
		}
	}
}

// TestClientRetryMessages: the client tells the answers that leave a
// request unapplied by these messages (Kafka Connect's way); they must be
// this transport's words.
func TestClientRetryMessages(t *testing.T) {
	for _, tt := range []struct{ client, server string }{
		{api.MsgStarting, msgStarting},
		{api.MsgNoLeader, msgNoLeader},
		{api.MsgConflicting, msgConflicting},
		{api.MsgStale, connectors.StaleMessage},
	} {
		if tt.client != tt.server {
			t.Errorf("client's %q, server's %q", tt.client, tt.server)
		}
	}
}
