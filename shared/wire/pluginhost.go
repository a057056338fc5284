package wire

import (
	"encoding/json"
	"github.com/sluice-io/sluice/api"
)

// Connector operations on an agent's connector host (docs/plugins.md): the
// coordinator runs no code of a Java plugin, so validation and a Java
// connector's lifecycle (Kafka Connect's Connector: start, taskConfigs,
// stop, alterOffsets) run on an agent that has the plugin. The leader sends
// a PluginConnectorRequest to that agent (SubjectAgentConnector); the agent
// tells the leader what a started connector asks for on its own with a
// PluginConnectorEvent (SubjectLeaderConnectorEvent).

// Operations of a PluginConnectorRequest.
const (
	// PluginOpValidate validates Config: the reply's ConfigInfos are Kafka
	// Connect's validate entries for the connector's own keys.
	PluginOpValidate = "validate"
	// PluginOpConfigDef lists the definitions of Class's own keys (the
	// reply's ConfigInfos, definitions only).
	PluginOpConfigDef = "config_def"
	// PluginOpStart starts connector Name with Config.
	PluginOpStart = "start"
	// PluginOpTaskConfigs asks the started connector Name for at most
	// MaxTasks task configs (the reply's TaskConfigs).
	PluginOpTaskConfigs = "task_configs"
	// PluginOpStop stops connector Name; stopping one not started does
	// nothing.
	PluginOpStop = "stop"
	// PluginOpAlterOffsets runs Class's alterOffsets with Config and
	// Offsets; the reply's Definite is its answer, an error rejects.
	PluginOpAlterOffsets = "alter_offsets"
)

// PluginConnectorRequest is one connector operation for an agent's
// connector host.
type PluginConnectorRequest struct {
	Term int64  `json:"term"`
	Op   string `json:"op"`
	// Name is the connector (start, task_configs, stop).
	Name string `json:"name,omitempty"`
	// Class is the connector class (config_def, alter_offsets; validate and
	// start take it from Config's connector.class).
	Class string `json:"class,omitempty"`
	// Version is the plugin version asked for (KIP-891's
	// connector.plugin.version); empty: the one the agent has.
	Version  string                `json:"version,omitempty"`
	Config   map[string]string     `json:"config,omitempty"`
	MaxTasks int                   `json:"max_tasks,omitempty"`
	Offsets  []api.ConnectorOffset `json:"offsets,omitempty"`
}

// PluginConnectorReply answers a PluginConnectorRequest; failures come back
// as an *Error whose message is the plugin's (its stack trace in the
// agent's log).
type PluginConnectorReply struct {
	// ConfigInfos are Kafka Connect's validate entries, as its REST API
	// shows them ({"definition": …, "value": …} each), for validate and
	// config_def.
	ConfigInfos json.RawMessage `json:"config_infos,omitempty"`
	// TaskConfigs answers task_configs.
	TaskConfigs []map[string]string `json:"task_configs,omitempty"`
	// Definite answers alter_offsets.
	Definite bool `json:"definite,omitempty"`
	// Trace is the Java stack trace of a failed start or task_configs,
	// which becomes the connector's trace.
	Trace string `json:"trace,omitempty"`
	// Preflight answers validate for a source connector whose config asks
	// for exactly.once.support=required or transaction.boundary=connector.
	Preflight *SourcePreflight `json:"preflight,omitempty"`
}

// SourcePreflight is what a source connector answered to the exactly-once
// preflight checks its config asks for (KIP-618): exactlyOnceSupport and
// canDefineTransactionBoundaries, each nil when not asked.
type SourcePreflight struct {
	ExactlyOnce           *PreflightAnswer `json:"exactly_once,omitempty"`
	TransactionBoundaries *PreflightAnswer `json:"transaction_boundaries,omitempty"`
}

// PreflightAnswer is one answer: the name of the enum constant the method
// returned ("" for null), or, when it threw, its message.
type PreflightAnswer struct {
	Support string `json:"support,omitempty"`
	Threw   bool   `json:"threw,omitempty"`
	Message string `json:"message,omitempty"`
}

// Kinds of PluginConnectorEvent.
const (
	// PluginEventReconfigure is ConnectorContext.requestTaskReconfiguration.
	PluginEventReconfigure = "reconfigure"
	// PluginEventError is ConnectorContext.raiseError.
	PluginEventError = "error"
	// PluginEventHostLost says the host that ran the connector died: the
	// leader starts the connector again.
	PluginEventHostLost = "host_lost"
)

// PluginConnectorEvent is what a connector started in an agent's host asks
// for on its own.
type PluginConnectorEvent struct {
	AgentID string `json:"agent_id"`
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Message string `json:"message,omitempty"`
	Trace   string `json:"trace,omitempty"`
}
