// Package httpapi is the coordinator's REST transport: it serves the Kafka
// Connect REST API over go-kit endpoints, decoding requests strictly and
// encoding every error as {"error_code","message"}. It holds no state; every
// call goes to one of the Services, one per resource.
package httpapi

import (
	"context"

	dto "github.com/prometheus/client_model/go"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/audit"
	"github.com/sluice-io/sluice/shared/wire"
)

// Services are what the REST API asks of the coordinator, one interface per
// resource, so that an endpoint depends on the one service it calls and a
// service can move out of the coordinator's core on its own. Errors should
// be *api.Error; any other error is answered as a 500 with its text.
//
// Authorization stays here, in the transport: the route's role and the
// connector a path names are checked by endpoint middleware (security.go)
// before a service is called. A call over many connectors (a selector, a
// rollout, a window) takes an allow function built from its route: the
// service resolves the connectors, and asks allow about each; allow's
// error is that connector's refusal (a *auth.DeniedError whose message is
// the 403's). What a change's content may touch (tenant isolation of an
// effective config) is the service's own admission.
type Services struct {
	Connectors Connectors
	Runtime    Runtime
	Plugins    Plugins
	Offsets    Offsets
	// ConfigHistory is connectors' config history (confighistory.go).
	ConfigHistory ConfigHistory
	Agents        Agents
	Fleet         Fleet
	Admin         Admin
}

// Connectors is the lifecycle and config of connectors: /connectors,
// /connectors/{name}, …/config, …/stop|pause|resume|restart and a task's
// restart.
type Connectors interface {
	ListConnectors(ctx context.Context) ([]string, error)
	// ExpandConnectors answers GET /connectors with any expand parameter;
	// both flags are false when only unknown values were given.
	ExpandConnectors(ctx context.Context, status, info bool) (map[string]api.ConnectorExpanded, error)
	// CreateConnector creates a connector; the request was decoded but not
	// validated beyond JSON types: Name is as sent (not trimmed), Config is
	// never nil, InitialState is not checked, and InitialOffsets holds no
	// null entry (the transport answers 400 for those two cases).
	CreateConnector(ctx context.Context, req api.CreateConnectorRequest) (api.CreatedConnector, error)
	GetConnector(ctx context.Context, name string) (api.ConnectorInfo, error)
	GetConnectorConfig(ctx context.Context, name string) (map[string]string, error)
	// PutConnectorConfig creates or replaces; created tells which.
	PutConnectorConfig(ctx context.Context, name string, config map[string]string) (info api.ConnectorInfo, created bool, err error)
	// PatchConnectorConfig merges patch into the config; a nil value removes the key.
	PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (api.ConnectorInfo, error)
	DeleteConnector(ctx context.Context, name string, resetOffsets bool) error
	StopConnector(ctx context.Context, name string) error
	PauseConnector(ctx context.Context, name string) error
	ResumeConnector(ctx context.Context, name string) error
	// RestartConnector with both flags false restarts the connector only and
	// returns nil state (204); otherwise the state shown is returned (202).
	RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*api.ConnectorStateInfo, error)
	// RestartTask gets any int32 task id, negative included.
	RestartTask(ctx context.Context, name string, task int) error
}

// Runtime is what a connector runs and does: its status, its tasks'
// configs and states, the topics it used, a sink's lag and the tasks' own
// gauges.
type Runtime interface {
	ConnectorStatus(ctx context.Context, name string) (api.ConnectorStateInfo, error)
	TaskConfigs(ctx context.Context, name string) ([]api.TaskInfo, error)
	// TaskStatus gets any int32 task id, negative included.
	TaskStatus(ctx context.Context, name string, task int) (api.TaskState, error)
	ConnectorTopics(ctx context.Context, name string) (map[string]api.ActiveTopics, error)
	ResetConnectorTopics(ctx context.Context, name string) error
	// ConnectorLag answers GET /sluice/connectors/{name}/lag: a sink
	// connector's consumer lag.
	ConnectorLag(ctx context.Context, name string) (api.ConnectorLag, error)
	// ConnectorLagHistory answers GET
	// /sluice/connectors/{name}/lag/history: a sink's lag per partition
	// over the last hour, as the leader sampled it.
	ConnectorLagHistory(ctx context.Context, name string) (api.LagHistory, error)
	// ConnectorGauges answers GET /sluice/connectors/{name}/gauges: the
	// gauges the connector's tasks report of themselves, read from their
	// agents by the leader.
	ConnectorGauges(ctx context.Context, name string) (api.ConnectorGauges, error)
	// SignalConnector answers POST /sluice/connectors/{name}/signals: a
	// signal handed to the connector's running task, which makes it
	// durable (the native PostgreSQL connector: a row of its signal
	// table).
	SignalConnector(ctx context.Context, name string, sig api.ConnectorSignal) (api.SignalSent, error)
}

// Plugins is /connector-plugins: the plugins, their config keys, and the
// validation of a config.
type Plugins interface {
	ListPlugins(ctx context.Context, connectorsOnly bool) ([]api.PluginInfo, error)
	// PluginConfig lists a plugin's config keys; version, when not empty,
	// names the version (KIP-891: a version, a range or latest).
	PluginConfig(ctx context.Context, plugin, version string) ([]api.ConfigKeyInfo, error)
	ValidateConfig(ctx context.Context, plugin string, config map[string]string) (api.ConfigInfos, error)
}

// Offsets is a connector's offsets: Kafka Connect's GET/PATCH/DELETE
// …/offsets, and Sluice's preview, reset-to, history, undo, restore and
// move (a move carries a connector's positions to a new name).
type Offsets interface {
	GetOffsets(ctx context.Context, name string) (api.ConnectorOffsets, error)
	// AlterOffsets receives the offsets list as decoded (entries may hold nil
	// maps, numbers are json.Number). It is never empty and has no null
	// entry: the transport answers those with spec §5.2's 400s first.
	AlterOffsets(ctx context.Context, name string, offsets []api.ConnectorOffset) (api.Message, error)
	ResetOffsets(ctx context.Context, name string) (api.Message, error)
	// PreviewOffsets answers POST /sluice/connectors/{name}/offsets/preview:
	// PATCH's (or, with Reset, DELETE's) checks, and the changes it would
	// make. req holds offsets, non-empty and without null entries, or Reset.
	PreviewOffsets(ctx context.Context, name string, req api.OffsetsPreviewRequest) (api.OffsetsChanges, error)
	// ResetOffsetsTo answers POST /sluice/connectors/{name}/offsets/reset;
	// req is as decoded, its rule not yet checked.
	ResetOffsetsTo(ctx context.Context, name string, req api.OffsetsResetRequest) (api.OffsetsChanges, error)
	// OffsetsHistory answers GET /sluice/connectors/{name}/offsets/history;
	// limit is within the route's bounds.
	OffsetsHistory(ctx context.Context, name string, limit int, before string) (api.OffsetsHistory, error)
	// OffsetsHistoryEntry answers GET …/offsets/history/{id}.
	OffsetsHistoryEntry(ctx context.Context, name, id string) (api.OffsetsHistoryEntry, error)
	// UndoOffsets answers POST …/offsets/history/{id}/undo.
	UndoOffsets(ctx context.Context, name, id string, force, dryRun bool) (api.OffsetsChanges, error)
	// RestoreOffsets answers POST /sluice/connectors/{name}/offsets/restore.
	RestoreOffsets(ctx context.Context, name string, req api.OffsetsRestoreRequest) (api.OffsetsChanges, error)
	// MoveConnector answers POST /sluice/connectors/{name}/move.
	MoveConnector(ctx context.Context, name string, req api.MoveRequest) (api.MoveResult, error)
}

// Agents is /sluice/agents: the leader's agents, their cordons and drains
// (a 404 for an unknown id), and /sluice/fleet/rolls, their rolling
// restarts.
type Agents interface {
	ListAgents(ctx context.Context) (api.AgentList, error)
	GetAgent(ctx context.Context, id string) (api.AgentInfo, error)
	CordonAgent(ctx context.Context, id string) (api.AgentInfo, error)
	UncordonAgent(ctx context.Context, id string) (api.AgentInfo, error)
	// DrainAgent's origin is api.CordonOperator or api.CordonPreStop.
	DrainAgent(ctx context.Context, id string, force bool, origin string) (api.DrainStatus, error)
	DrainStatus(ctx context.Context, id string) (api.DrainStatus, error)
	// CreateAgentRoll answers POST /sluice/fleet/rolls: a rolling restart
	// of agents; req is as decoded, its agents, batch size and timeout not
	// yet checked.
	CreateAgentRoll(ctx context.Context, req api.AgentRollRequest) (api.AgentRoll, error)
	// AgentRolls answers GET /sluice/fleet/rolls.
	AgentRolls(ctx context.Context) (api.AgentRollList, error)
	// AgentRoll answers GET /sluice/fleet/rolls/{id}.
	AgentRoll(ctx context.Context, id string) (api.AgentRoll, error)
	// PauseAgentRoll, ResumeAgentRoll and AbortAgentRoll answer PUT
	// /sluice/fleet/rolls/{id}/pause, …/resume and …/abort.
	PauseAgentRoll(ctx context.Context, id string) (api.AgentRoll, error)
	ResumeAgentRoll(ctx context.Context, id string) (api.AgentRoll, error)
	AbortAgentRoll(ctx context.Context, id string) (api.AgentRoll, error)
}

// Fleet is the operations over many connectors or agents: bulk lifecycle
// actions, maintenance windows, rebalancing and rollouts. allow is the
// caller's grant check for one connector (see Services).
type Fleet interface {
	// FleetConnectors answers GET /sluice/fleet/connectors: the
	// connectors visible reports true of (nil: every one), as q, whose
	// values are checked, filters, sorts and pages them.
	FleetConnectors(ctx context.Context, q api.FleetQuery, visible func(connector string) bool) (api.FleetConnectors, error)
	// Migrate answers POST /sluice/migrations: the connectors of a Kafka
	// Connect cluster moved into Sluice with their positions (dryRun:
	// the plan, nothing changed); a connector allow refuses is not
	// migrated, its refusal said.
	Migrate(ctx context.Context, req api.MigrationRequest, dryRun bool, allow func(connector string) error) (api.MigrationResult, error)
	// BulkAction answers POST /sluice/connectors/{action}: action on each
	// connector sel selects, each result what the single-connector
	// endpoint answers; a connector allow refuses gets that 403 as its
	// result.
	BulkAction(ctx context.Context, action string, sel api.Selector, includeTasks, onlyFailed bool, allow func(connector string) error) (api.BulkResults, error)
	// OpenMaintenance answers POST /sluice/maintenance; a connector allow
	// refuses refuses the whole window.
	OpenMaintenance(ctx context.Context, req api.MaintenanceRequest, allow func(connector string) error) (api.MaintenanceWindow, error)
	// MaintenanceWindows answers GET /sluice/maintenance.
	MaintenanceWindows(ctx context.Context) (api.MaintenanceList, error)
	// MaintenanceWindow answers GET /sluice/maintenance/{id}.
	MaintenanceWindow(ctx context.Context, id string) (api.MaintenanceWindow, error)
	// CloseMaintenance answers DELETE /sluice/maintenance/{id}; allow as
	// OpenMaintenance's.
	CloseMaintenance(ctx context.Context, id string, allow func(connector string) error) (api.MaintenanceWindow, error)
	// Rebalance answers POST /sluice/rebalance (maxMoves 0: the default)
	// and RebalanceStatus GET /sluice/rebalance.
	Rebalance(ctx context.Context, maxMoves int, dryRun bool) (api.Rebalance, error)
	RebalanceStatus(ctx context.Context) (api.Rebalance, error)
	// CreateRollout answers POST /sluice/rollouts; req is as decoded, its
	// selector, batches, health and on_failure not yet checked. A
	// connector allow refuses refuses the rollout.
	CreateRollout(ctx context.Context, req api.RolloutRequest, allow func(connector string) error) (api.Rollout, error)
	// PlanRollout answers POST /sluice/rollouts?dry_run=true: the
	// rollout CreateRollout would record, with its refusals, recorded
	// nowhere (state api.RolloutPlanned, no id).
	PlanRollout(ctx context.Context, req api.RolloutRequest, allow func(connector string) error) (api.Rollout, error)
	// Rollouts answers GET /sluice/rollouts.
	Rollouts(ctx context.Context) (api.RolloutList, error)
	// Rollout answers GET /sluice/rollouts/{id}.
	Rollout(ctx context.Context, id string) (api.Rollout, error)
	// PauseRollout, ResumeRollout and AbortRollout answer PUT
	// /sluice/rollouts/{id}/pause, …/resume and …/abort; allow must
	// allow every connector of the rollout.
	PauseRollout(ctx context.Context, id string, allow func(connector string) error) (api.Rollout, error)
	ResumeRollout(ctx context.Context, id string, allow func(connector string) error) (api.Rollout, error)
	AbortRollout(ctx context.Context, id string, allow func(connector string) error) (api.Rollout, error)
}

// Admin is the coordinator itself: GET /, /health, /readyz, /metrics,
// /admin/loggers and the audit trail.
type Admin interface {
	// ServerInfo is the body of GET /.
	ServerInfo(ctx context.Context) (api.ServerInfo, error)
	// Health returns the health body and the HTTP status to answer with.
	Health(ctx context.Context) (api.Health, int)
	// Readiness answers GET /readyz: the coordinator's readiness, or a
	// 503 *api.Error saying why it is not ready.
	Readiness(ctx context.Context) (api.Readiness, error)
	// Metrics answers GET /metrics: every metric of the process's
	// registry.
	Metrics(ctx context.Context) ([]*dto.MetricFamily, error)
	// LoggerLevels answers GET /admin/loggers: this process's loggers that
	// are not OFF, by name.
	LoggerLevels(ctx context.Context) (map[string]wire.LoggerLevel, error)
	// LoggerLevel answers GET /admin/loggers/{name}; an unknown logger is a
	// 404 "Logger <name> not found.".
	LoggerLevel(ctx context.Context, name string) (wire.LoggerLevel, error)
	// SetWorkerLoggerLevel sets level on namespace (and what is below it)
	// in this process only, and returns the names of the loggers whose
	// level changed. level is valid (logging.ParseLevel), in any case.
	SetWorkerLoggerLevel(ctx context.Context, namespace, level string) ([]string, error)
	// SetClusterLoggerLevel sets level on namespace in every coordinator
	// and agent of the cluster; level is valid, as above.
	SetClusterLoggerLevel(ctx context.Context, namespace, level string) error
	// AuditLog answers GET /sluice/audit: the audit records q selects,
	// newest first.
	AuditLog(ctx context.Context, q audit.Query) (api.AuditLog, error)
}
