package httpapi

import (
	"net/http"
	"strings"

	"github.com/go-kit/kit/endpoint"
	kithttp "github.com/go-kit/kit/transport/http"

	"github.com/sluice-io/sluice/coordinator/internal/auth"
)

// route binds one ServeMux pattern to one endpoint and its transport.
type route struct {
	pattern  string // method and path, Go 1.22 ServeMux syntax
	op       string // operation name, for logs
	endpoint func(Services) endpoint.Endpoint
	decode   kithttp.DecodeRequestFunc
	encode   kithttp.EncodeResponseFunc
	// role is the least role that may call the route (docs/security.md
	// lists them; a test checks it matches): every route declares one.
	role auth.Role
}

// The roles, short for the table below.
const (
	viewer   = auth.RoleViewer
	operator = auth.RoleOperator
	admin    = auth.RoleAdmin
)

// connectorScoped reports whether the route acts on one connector, named in
// its path or (create) its body: a grant limited to connector patterns
// covers it only for a matching name.
func (rt route) connectorScoped() bool {
	return strings.Contains(rt.pattern, "/connectors/{name}") || rt.op == "create_connector"
}

// probeOps are the routes --rest-auth-open-probes leaves open: what
// Kubernetes probes and a Prometheus scrape call, which carry no
// credentials of their own, and the OpenAPI document, which says no more
// than the open-source code does.
var probeOps = map[string]bool{"server_info": true, "health": true, "readyz": true, "metrics": true, "openapi": true}

// The services, each as the route table picks it out of Services: a
// route's endpoint depends on its resource's service alone.
var (
	onConnectors = on(func(s Services) Connectors { return s.Connectors })
	onRuntime    = on(func(s Services) Runtime { return s.Runtime })
	onPlugins    = on(func(s Services) Plugins { return s.Plugins })
	onOffsets    = on(func(s Services) Offsets { return s.Offsets })
	onAgents     = on(func(s Services) Agents { return s.Agents })
	onFleet      = on(func(s Services) Fleet { return s.Fleet })
	onAdmin      = on(func(s Services) Admin { return s.Admin })
)

// on makes the endpoint of one service into a route's endpoint.
func on[S any](pick func(Services) S) func(func(S) endpoint.Endpoint) func(Services) endpoint.Endpoint {
	return func(mk func(S) endpoint.Endpoint) func(Services) endpoint.Endpoint {
		return func(s Services) endpoint.Endpoint { return mk(pick(s)) }
	}
}

// routes is the REST API of spec §3 and §5, /admin/loggers, Sluice's
// own endpoints under /sluice/, and the OpenAPI document of them all. Path
// wildcards arrive URL-decoded (a name "a/b" is sent as a%2Fb and matches
// one segment).
func routes() []route {
	return []route{
		{"GET /{$}", "server_info", onAdmin(makeServerInfo), decodeNone, encodeServerInfo, viewer},
		{"GET /health", "health", onAdmin(makeHealth), decodeNone, encodeHealth, viewer},
		{"GET /readyz", "readyz", onAdmin(makeReadiness), decodeNone, encodeJSON, viewer},
		{"GET /metrics", "metrics", onAdmin(makeMetrics), decodeNone, encodeMetrics, viewer},
		{"GET " + openAPIPath, "openapi", onAdmin(makeOpenAPI), decodeNone, encodeOpenAPI, viewer},

		{"GET /connectors", "list_connectors", onConnectors(makeListConnectors), decodeList, encodeJSON, viewer},
		{"POST /connectors", "create_connector", onConnectors(makeCreateConnector), decodeCreate, encodeCreated, operator},
		{"GET /connectors/{name}", "get_connector", onConnectors(makeGetConnector), decodeName, encodeJSON, viewer},
		{"DELETE /connectors/{name}", "delete_connector", onConnectors(makeDeleteConnector), decodeDelete, encodeNoBody(http.StatusNoContent), admin},
		{"GET /connectors/{name}/config", "get_connector_config", onConnectors(makeGetConnectorConfig), decodeName, encodeJSON, viewer},
		{"PUT /connectors/{name}/config", "put_connector_config", onConnectors(makePutConnectorConfig), decodePutConfig, encodePutConfig, operator},
		{"PATCH /connectors/{name}/config", "patch_connector_config", onConnectors(makePatchConnectorConfig), decodePatchConfig, encodeJSON, operator},
		{"GET /connectors/{name}/status", "connector_status", onRuntime(makeConnectorStatus), decodeName, encodeJSON, viewer},
		{"GET /connectors/{name}/tasks", "task_configs", onRuntime(makeTaskConfigs), decodeName, encodeJSON, viewer},
		{"GET /connectors/{name}/tasks/{task}/status", "task_status", onRuntime(makeTaskStatus), decodeTask, encodeJSON, viewer},
		{"POST /connectors/{name}/tasks/{task}/restart", "restart_task", onConnectors(makeRestartTask), decodeTask, encodeNoBody(http.StatusNoContent), operator},
		{"PUT /connectors/{name}/stop", "stop_connector", onConnectors(makeNameAction(Connectors.StopConnector)), decodeName, encodeNoBody(http.StatusNoContent), operator},
		{"PUT /connectors/{name}/pause", "pause_connector", onConnectors(makeNameAction(Connectors.PauseConnector)), decodeName, encodeNoBody(http.StatusAccepted), operator},
		{"PUT /connectors/{name}/resume", "resume_connector", onConnectors(makeNameAction(Connectors.ResumeConnector)), decodeName, encodeNoBody(http.StatusAccepted), operator},
		{"POST /connectors/{name}/restart", "restart_connector", onConnectors(makeRestartConnector), decodeRestart, encodeRestart, operator},
		{"GET /connectors/{name}/topics", "connector_topics", onRuntime(makeConnectorTopics), decodeName, encodeJSON, viewer},
		{"PUT /connectors/{name}/topics/reset", "reset_connector_topics", onRuntime(makeNameAction(Runtime.ResetConnectorTopics)), decodeName, encodeNoBody(http.StatusAccepted), operator},

		{"GET /connectors/{name}/offsets", "get_offsets", onOffsets(makeGetOffsets), decodeName, encodeJSON, viewer},
		{"PATCH /connectors/{name}/offsets", "alter_offsets", onOffsets(makeAlterOffsets), decodeAlterOffsets, encodeJSON, admin},
		{"DELETE /connectors/{name}/offsets", "reset_offsets", onOffsets(makeResetOffsets), decodeName, encodeJSON, admin},

		{"GET /connector-plugins", "list_plugins", onPlugins(makeListPlugins), decodePlugins, encodeJSON, viewer},
		{"GET /connector-plugins/{plugin}/config", "plugin_config", onPlugins(makePluginConfig), decodePlugin, encodeJSON, viewer},
		{"PUT /connector-plugins/{plugin}/config/validate", "validate_config", onPlugins(makeValidateConfig), decodeValidate, encodeJSON, operator},

		{"GET /admin/loggers", "list_loggers", onAdmin(makeListLoggers), decodeNone, encodeJSON, viewer},
		{"GET /admin/loggers/{name}", "get_logger", onAdmin(makeGetLogger), decodeName, encodeJSON, viewer},
		{"PUT /admin/loggers/{name}", "set_logger_level", onAdmin(makeSetLoggerLevel), decodeSetLoggerLevel, encodeSetLoggerLevel, admin},

		{"GET /sluice/fleet/connectors", "fleet_connectors", onFleet(makeFleetConnectors), decodeFleetQuery, encodeJSON, viewer},
		{"POST /sluice/migrations", "migrate", onFleet(makeMigrate), decodeMigration, encodeJSON, admin},
		{"GET /sluice/audit", "audit_log", onAdmin(makeAuditLog), decodeAuditQuery, encodeJSON, admin},
		{"POST /sluice/connectors/pause", "bulk_pause", onFleet(makeBulkAction), decodeBulk("pause"), encodeJSON, operator},
		{"POST /sluice/connectors/resume", "bulk_resume", onFleet(makeBulkAction), decodeBulk("resume"), encodeJSON, operator},
		{"POST /sluice/connectors/stop", "bulk_stop", onFleet(makeBulkAction), decodeBulk("stop"), encodeJSON, operator},
		{"POST /sluice/connectors/restart", "bulk_restart", onFleet(makeBulkAction), decodeBulk("restart"), encodeJSON, operator},
		{"POST /sluice/maintenance", "open_maintenance", onFleet(makeOpenMaintenance), decodeOpenMaintenance, encodeWindowCreated, operator},
		{"GET /sluice/maintenance", "list_maintenance", onFleet(makeListMaintenance), decodeListMaintenance, encodeJSON, viewer},
		{"GET /sluice/maintenance/{id}", "get_maintenance", onFleet(makeGetMaintenance), decodeWindow, encodeJSON, viewer},
		{"DELETE /sluice/maintenance/{id}", "close_maintenance", onFleet(makeCloseMaintenance), decodeWindow, encodeJSON, operator},
		{"GET /sluice/connectors/{name}/lag", "connector_lag", onRuntime(makeConnectorLag), decodeName, encodeJSON, viewer},
		{"GET /sluice/connectors/{name}/lag/history", "connector_lag_history", onRuntime(makeConnectorLagHistory), decodeName, encodeJSON, viewer},
		{"GET /sluice/connectors/{name}/gauges", "connector_gauges", onRuntime(makeConnectorGauges), decodeName, encodeJSON, viewer},
		{"POST /sluice/connectors/{name}/signals", "send_signal", onRuntime(makeSendSignal), decodeSignal, encodeSignalSent, operator},
		{"POST /sluice/connectors/{name}/offsets/preview", "preview_offsets", onOffsets(makePreviewOffsets), decodePreview, encodeJSON, viewer},
		{"POST /sluice/connectors/{name}/offsets/reset", "reset_offsets_to", onOffsets(makeResetOffsetsTo), decodeResetTo, encodeJSON, admin},
		{"POST /sluice/connectors/{name}/offsets/restore", "restore_offsets", onOffsets(makeRestoreOffsets), decodeRestore, encodeJSON, admin},
		{"GET /sluice/connectors/{name}/offsets/history", "offsets_history", onOffsets(makeOffsetsHistory), decodeHistory, encodeJSON, viewer},
		{"GET /sluice/connectors/{name}/offsets/history/{id}", "offsets_history_entry", onOffsets(makeOffsetsHistoryEntry), decodeHistoryEntry, encodeJSON, viewer},
		{"POST /sluice/connectors/{name}/offsets/history/{id}/undo", "undo_offsets", onOffsets(makeUndoOffsets), decodeUndo, encodeJSON, admin},
		{"POST /sluice/connectors/{name}/move", "move_connector", onOffsets(makeMoveConnector), decodeMove, encodeJSON, admin},
		{"GET /sluice/connectors/{name}/config/history", "config_history", onConfigHistory(makeConfigHistory), decodeConfigHistory, encodeJSON, viewer},
		{"GET /sluice/connectors/{name}/config/history/{id}", "config_history_entry", onConfigHistory(makeConfigHistoryEntry), decodeConfigEntry("GET …/config/history/{id}"), encodeJSON, viewer},
		{"POST /sluice/connectors/{name}/config/history/{id}/restore", "restore_config", onConfigHistory(makeRestoreConfig), decodeConfigEntry("POST …/config/history/{id}/restore"), encodeJSON, operator},

		{"GET /sluice/agents", "list_agents", onAgents(makeListAgents), decodeNone, encodeJSON, viewer},
		{"GET /sluice/agents/{id}", "get_agent", onAgents(makeGetAgent), decodeAgent, encodeJSON, viewer},
		{"PUT /sluice/agents/{id}/cordon", "cordon_agent", onAgents(makeAgentAction(Agents.CordonAgent)), decodeAgent, encodeJSON, admin},
		{"PUT /sluice/agents/{id}/uncordon", "uncordon_agent", onAgents(makeAgentAction(Agents.UncordonAgent)), decodeAgent, encodeJSON, admin},
		{"PUT /sluice/agents/{id}/drain", "drain_agent", onAgents(makeDrainAgent), decodeDrain, encodeAccepted, admin},
		{"GET /sluice/agents/{id}/drain", "drain_status", onAgents(makeAgentAction(Agents.DrainStatus)), decodeAgent, encodeJSON, viewer},
		{"POST /sluice/fleet/rolls", "create_agent_roll", onAgents(makeCreateAgentRoll), decodeAgentRollRequest, encodeAgentRollCreated, admin},
		{"GET /sluice/fleet/rolls", "list_agent_rolls", onAgents(makeListAgentRolls), decodeNone, encodeJSON, viewer},
		{"GET /sluice/fleet/rolls/{id}", "get_agent_roll", onAgents(makeGetAgentRoll), decodeAgentRollID, encodeJSON, viewer},
		{"PUT /sluice/fleet/rolls/{id}/pause", "pause_agent_roll", onAgents(makeAgentRollAction(Agents.PauseAgentRoll)), decodeAgentRollID, encodeJSON, admin},
		{"PUT /sluice/fleet/rolls/{id}/resume", "resume_agent_roll", onAgents(makeAgentRollAction(Agents.ResumeAgentRoll)), decodeAgentRollID, encodeJSON, admin},
		{"PUT /sluice/fleet/rolls/{id}/abort", "abort_agent_roll", onAgents(makeAgentRollAction(Agents.AbortAgentRoll)), decodeAgentRollID, encodeJSON, admin},
		{"POST /sluice/rebalance", "rebalance", onFleet(makeRebalance), decodeRebalance, encodeAccepted, admin},
		{"GET /sluice/rebalance", "rebalance_status", onFleet(makeRebalanceStatus), decodeNone, encodeJSON, viewer},
		{"POST /sluice/rollouts", "create_rollout", onFleet(makeCreateRollout), decodeRolloutRequest, encodeRolloutCreated, operator},
		{"GET /sluice/rollouts", "list_rollouts", onFleet(makeListRollouts), decodeNone, encodeJSON, viewer},
		{"GET /sluice/rollouts/{id}", "get_rollout", onFleet(makeGetRollout), decodeRolloutID, encodeJSON, viewer},
		{"PUT /sluice/rollouts/{id}/pause", "pause_rollout", onFleet(makeRolloutAction(Fleet.PauseRollout)), decodeRolloutID, encodeJSON, operator},
		{"PUT /sluice/rollouts/{id}/resume", "resume_rollout", onFleet(makeRolloutAction(Fleet.ResumeRollout)), decodeRolloutID, encodeJSON, operator},
		{"PUT /sluice/rollouts/{id}/abort", "abort_rollout", onFleet(makeRolloutAction(Fleet.AbortRollout)), decodeRolloutID, encodeJSON, operator},
	}
}
