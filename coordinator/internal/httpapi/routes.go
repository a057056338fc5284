package httpapi

import (
	"net/http"

	"github.com/go-kit/kit/endpoint"
	kithttp "github.com/go-kit/kit/transport/http"
)

// route binds one ServeMux pattern to one endpoint and its transport.
type route struct {
	pattern  string // method and path, Go 1.22 ServeMux syntax
	op       string // operation name, for logs
	endpoint func(Service) endpoint.Endpoint
	decode   kithttp.DecodeRequestFunc
	encode   kithttp.EncodeResponseFunc
}

// routes is the REST API of spec §3 and §5, /admin/loggers, and Sluice's
// own endpoints under /sluice/. Path
// wildcards arrive URL-decoded (a name "a/b" is sent as a%2Fb and matches
// one segment).
func routes() []route {
	return []route{
		{"GET /{$}", "server_info", makeServerInfo, decodeNone, encodeJSON},
		{"GET /health", "health", makeHealth, decodeNone, encodeHealth},

		{"GET /connectors", "list_connectors", makeListConnectors, decodeList, encodeJSON},
		{"POST /connectors", "create_connector", makeCreateConnector, decodeCreate, encodeCreated},
		{"GET /connectors/{name}", "get_connector", makeGetConnector, decodeName, encodeJSON},
		{"DELETE /connectors/{name}", "delete_connector", makeDeleteConnector, decodeDelete, encodeNoBody(http.StatusNoContent)},
		{"GET /connectors/{name}/config", "get_connector_config", makeGetConnectorConfig, decodeName, encodeJSON},
		{"PUT /connectors/{name}/config", "put_connector_config", makePutConnectorConfig, decodePutConfig, encodePutConfig},
		{"PATCH /connectors/{name}/config", "patch_connector_config", makePatchConnectorConfig, decodePatchConfig, encodeJSON},
		{"GET /connectors/{name}/status", "connector_status", makeConnectorStatus, decodeName, encodeJSON},
		{"GET /connectors/{name}/tasks", "task_configs", makeTaskConfigs, decodeName, encodeJSON},
		{"GET /connectors/{name}/tasks/{task}/status", "task_status", makeTaskStatus, decodeTask, encodeJSON},
		{"POST /connectors/{name}/tasks/{task}/restart", "restart_task", makeRestartTask, decodeTask, encodeNoBody(http.StatusNoContent)},
		{"PUT /connectors/{name}/stop", "stop_connector", makeNameAction(Service.StopConnector), decodeName, encodeNoBody(http.StatusNoContent)},
		{"PUT /connectors/{name}/pause", "pause_connector", makeNameAction(Service.PauseConnector), decodeName, encodeNoBody(http.StatusAccepted)},
		{"PUT /connectors/{name}/resume", "resume_connector", makeNameAction(Service.ResumeConnector), decodeName, encodeNoBody(http.StatusAccepted)},
		{"POST /connectors/{name}/restart", "restart_connector", makeRestartConnector, decodeRestart, encodeRestart},
		{"GET /connectors/{name}/topics", "connector_topics", makeConnectorTopics, decodeName, encodeJSON},
		{"PUT /connectors/{name}/topics/reset", "reset_connector_topics", makeNameAction(Service.ResetConnectorTopics), decodeName, encodeNoBody(http.StatusAccepted)},

		{"GET /connectors/{name}/offsets", "get_offsets", makeGetOffsets, decodeName, encodeJSON},
		{"PATCH /connectors/{name}/offsets", "alter_offsets", makeAlterOffsets, decodeAlterOffsets, encodeJSON},
		{"DELETE /connectors/{name}/offsets", "reset_offsets", makeResetOffsets, decodeName, encodeJSON},

		{"GET /connector-plugins", "list_plugins", makeListPlugins, decodePlugins, encodeJSON},
		{"GET /connector-plugins/{plugin}/config", "plugin_config", makePluginConfig, decodePlugin, encodeJSON},
		{"PUT /connector-plugins/{plugin}/config/validate", "validate_config", makeValidateConfig, decodeValidate, encodeJSON},

		{"GET /admin/loggers", "list_loggers", makeListLoggers, decodeNone, encodeJSON},
		{"GET /admin/loggers/{name}", "get_logger", makeGetLogger, decodeName, encodeJSON},
		{"PUT /admin/loggers/{name}", "set_logger_level", makeSetLoggerLevel, decodeSetLoggerLevel, encodeSetLoggerLevel},

		{"GET /sluice/audit", "audit_log", makeAuditLog, decodeAuditQuery, encodeJSON},
	}
}
