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
	endpoint func(Service) endpoint.Endpoint
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
// credentials of their own.
var probeOps = map[string]bool{"server_info": true, "health": true, "readyz": true, "metrics": true}

// routes is the REST API of spec §3 and §5, /admin/loggers, and Sluice's
// own endpoints under /sluice/. Path
// wildcards arrive URL-decoded (a name "a/b" is sent as a%2Fb and matches
// one segment).
func routes() []route {
	return []route{
		{"GET /{$}", "server_info", makeServerInfo, decodeNone, encodeJSON, viewer},
		{"GET /health", "health", makeHealth, decodeNone, encodeHealth, viewer},
		{"GET /readyz", "readyz", makeReadiness, decodeNone, encodeJSON, viewer},
		{"GET /metrics", "metrics", makeMetrics, decodeNone, encodeMetrics, viewer},

		{"GET /connectors", "list_connectors", makeListConnectors, decodeList, encodeJSON, viewer},
		{"POST /connectors", "create_connector", makeCreateConnector, decodeCreate, encodeCreated, operator},
		{"GET /connectors/{name}", "get_connector", makeGetConnector, decodeName, encodeJSON, viewer},
		{"DELETE /connectors/{name}", "delete_connector", makeDeleteConnector, decodeDelete, encodeNoBody(http.StatusNoContent), admin},
		{"GET /connectors/{name}/config", "get_connector_config", makeGetConnectorConfig, decodeName, encodeJSON, viewer},
		{"PUT /connectors/{name}/config", "put_connector_config", makePutConnectorConfig, decodePutConfig, encodePutConfig, operator},
		{"PATCH /connectors/{name}/config", "patch_connector_config", makePatchConnectorConfig, decodePatchConfig, encodeJSON, operator},
		{"GET /connectors/{name}/status", "connector_status", makeConnectorStatus, decodeName, encodeJSON, viewer},
		{"GET /connectors/{name}/tasks", "task_configs", makeTaskConfigs, decodeName, encodeJSON, viewer},
		{"GET /connectors/{name}/tasks/{task}/status", "task_status", makeTaskStatus, decodeTask, encodeJSON, viewer},
		{"POST /connectors/{name}/tasks/{task}/restart", "restart_task", makeRestartTask, decodeTask, encodeNoBody(http.StatusNoContent), operator},
		{"PUT /connectors/{name}/stop", "stop_connector", makeNameAction(Service.StopConnector), decodeName, encodeNoBody(http.StatusNoContent), operator},
		{"PUT /connectors/{name}/pause", "pause_connector", makeNameAction(Service.PauseConnector), decodeName, encodeNoBody(http.StatusAccepted), operator},
		{"PUT /connectors/{name}/resume", "resume_connector", makeNameAction(Service.ResumeConnector), decodeName, encodeNoBody(http.StatusAccepted), operator},
		{"POST /connectors/{name}/restart", "restart_connector", makeRestartConnector, decodeRestart, encodeRestart, operator},
		{"GET /connectors/{name}/topics", "connector_topics", makeConnectorTopics, decodeName, encodeJSON, viewer},
		{"PUT /connectors/{name}/topics/reset", "reset_connector_topics", makeNameAction(Service.ResetConnectorTopics), decodeName, encodeNoBody(http.StatusAccepted), operator},

		{"GET /connectors/{name}/offsets", "get_offsets", makeGetOffsets, decodeName, encodeJSON, viewer},
		{"PATCH /connectors/{name}/offsets", "alter_offsets", makeAlterOffsets, decodeAlterOffsets, encodeJSON, admin},
		{"DELETE /connectors/{name}/offsets", "reset_offsets", makeResetOffsets, decodeName, encodeJSON, admin},

		{"GET /connector-plugins", "list_plugins", makeListPlugins, decodePlugins, encodeJSON, viewer},
		{"GET /connector-plugins/{plugin}/config", "plugin_config", makePluginConfig, decodePlugin, encodeJSON, viewer},
		{"PUT /connector-plugins/{plugin}/config/validate", "validate_config", makeValidateConfig, decodeValidate, encodeJSON, operator},

		{"GET /admin/loggers", "list_loggers", makeListLoggers, decodeNone, encodeJSON, viewer},
		{"GET /admin/loggers/{name}", "get_logger", makeGetLogger, decodeName, encodeJSON, viewer},
		{"PUT /admin/loggers/{name}", "set_logger_level", makeSetLoggerLevel, decodeSetLoggerLevel, encodeSetLoggerLevel, admin},

		{"GET /sluice/audit", "audit_log", makeAuditLog, decodeAuditQuery, encodeJSON, admin},
		{"POST /sluice/connectors/pause", "bulk_pause", makeBulkAction, decodeBulk("pause"), encodeJSON, operator},
		{"POST /sluice/connectors/resume", "bulk_resume", makeBulkAction, decodeBulk("resume"), encodeJSON, operator},
		{"POST /sluice/connectors/stop", "bulk_stop", makeBulkAction, decodeBulk("stop"), encodeJSON, operator},
		{"POST /sluice/connectors/restart", "bulk_restart", makeBulkAction, decodeBulk("restart"), encodeJSON, operator},
		{"POST /sluice/maintenance", "open_maintenance", makeOpenMaintenance, decodeOpenMaintenance, encodeWindowCreated, operator},
		{"GET /sluice/maintenance", "list_maintenance", makeListMaintenance, decodeListMaintenance, encodeJSON, viewer},
		{"GET /sluice/maintenance/{id}", "get_maintenance", makeGetMaintenance, decodeWindow, encodeJSON, viewer},
		{"DELETE /sluice/maintenance/{id}", "close_maintenance", makeCloseMaintenance, decodeWindow, encodeJSON, operator},
		{"GET /sluice/connectors/{name}/lag", "connector_lag", makeConnectorLag, decodeName, encodeJSON, viewer},
		{"POST /sluice/connectors/{name}/offsets/preview", "preview_offsets", makePreviewOffsets, decodePreview, encodeJSON, viewer},
		{"POST /sluice/connectors/{name}/offsets/reset", "reset_offsets_to", makeResetOffsetsTo, decodeResetTo, encodeJSON, admin},
		{"POST /sluice/connectors/{name}/offsets/restore", "restore_offsets", makeRestoreOffsets, decodeRestore, encodeJSON, admin},
		{"GET /sluice/connectors/{name}/offsets/history", "offsets_history", makeOffsetsHistory, decodeHistory, encodeJSON, viewer},
		{"GET /sluice/connectors/{name}/offsets/history/{id}", "offsets_history_entry", makeOffsetsHistoryEntry, decodeHistoryEntry, encodeJSON, viewer},
		{"POST /sluice/connectors/{name}/offsets/history/{id}/undo", "undo_offsets", makeUndoOffsets, decodeUndo, encodeJSON, admin},
		{"POST /sluice/connectors/{name}/move", "move_connector", makeMoveConnector, decodeMove, encodeJSON, admin},

		{"GET /sluice/agents", "list_agents", makeListAgents, decodeNone, encodeJSON, viewer},
		{"GET /sluice/agents/{id}", "get_agent", makeGetAgent, decodeAgent, encodeJSON, viewer},
		{"PUT /sluice/agents/{id}/cordon", "cordon_agent", makeAgentAction(Service.CordonAgent), decodeAgent, encodeJSON, admin},
		{"PUT /sluice/agents/{id}/uncordon", "uncordon_agent", makeAgentAction(Service.UncordonAgent), decodeAgent, encodeJSON, admin},
		{"PUT /sluice/agents/{id}/drain", "drain_agent", makeDrainAgent, decodeDrain, encodeAccepted, admin},
		{"GET /sluice/agents/{id}/drain", "drain_status", makeAgentAction(Service.DrainStatus), decodeAgent, encodeJSON, viewer},
		{"POST /sluice/rebalance", "rebalance", makeRebalance, decodeRebalance, encodeAccepted, admin},
		{"GET /sluice/rebalance", "rebalance_status", makeRebalanceStatus, decodeNone, encodeJSON, viewer},
		{"POST /sluice/rollouts", "create_rollout", makeCreateRollout, decodeRolloutRequest, encodeRolloutCreated, operator},
		{"GET /sluice/rollouts", "list_rollouts", makeListRollouts, decodeNone, encodeJSON, viewer},
		{"GET /sluice/rollouts/{id}", "get_rollout", makeGetRollout, decodeRolloutID, encodeJSON, viewer},
		{"PUT /sluice/rollouts/{id}/pause", "pause_rollout", makeRolloutAction(Service.PauseRollout), decodeRolloutID, encodeJSON, operator},
		{"PUT /sluice/rollouts/{id}/resume", "resume_rollout", makeRolloutAction(Service.ResumeRollout), decodeRolloutID, encodeJSON, operator},
		{"PUT /sluice/rollouts/{id}/abort", "abort_rollout", makeRolloutAction(Service.AbortRollout), decodeRolloutID, encodeJSON, operator},
	}
}
