package api

import (
	"fmt"
	"strings"
)

// Connector types as the REST API spells them.
const (
	TypeSource  = "source"
	TypeSink    = "sink"
	TypeUnknown = "unknown"
)

// Instance states shown by the status endpoints.
const (
	StateUnassigned = "UNASSIGNED"
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateFailed     = "FAILED"
	StateRestarting = "RESTARTING"
	StateStopped    = "STOPPED"
)

// KafkaConnectVersion is the Kafka Connect REST level Sluice implements,
// which GET / answers as its version. Clients gate commands on it (kcctl:
// stop and offsets from 3.5, altering offsets from 3.6), parsing the first
// two dot-separated parts as integers, so it has Kafka's own X.Y.Z form.
const KafkaConnectVersion = "4.4.0"

// VersionHeader carries Sluice's own release version on GET /'s answer.
// It is a header, not a body field, so that GET /'s body keeps exactly
// Kafka Connect's keys.
const VersionHeader = "X-Sluice-Version"

// ServerInfo is the body of GET /.
type ServerInfo struct {
	// Version is the Kafka Connect REST level the server implements:
	// KafkaConnectVersion for Sluice, Kafka's version for Kafka Connect.
	Version string `json:"version"`
	// Commit is the source commit the server was built from (Sluice's,
	// for Sluice).
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id"`
	// SluiceVersion is Sluice's own release version, read from the
	// X-Sluice-Version header (never in the body): empty when the server
	// is Kafka Connect.
	SluiceVersion string `json:"-"`
}

// Health is the body of GET /health (KIP-1017). Role and Leader are Sluice
// additions; the first two fields are Kafka Connect's.
type Health struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	Role    string `json:"role,omitempty"`
	Leader  string `json:"leader,omitempty"`
}

// ConnectorTaskID names one task of a connector.
type ConnectorTaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

// ConnectorInfo is a connector's config and tasks (GET /connectors/{name}).
type ConnectorInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []ConnectorTaskID `json:"tasks"`
	Type   string            `json:"type"`
}

// CreatedConnector is the body of POST /connectors: the ConnectorInfo, plus
// the outcome of writing initial offsets when the request carried them.
type CreatedConnector struct {
	ConnectorInfo
	OffsetsStatus *Message `json:"offsets_status,omitempty"`
}

// ConnectorState is the connector part of a status. Version is the
// connector plugin's version (KIP-891).
type ConnectorState struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
	Version  string `json:"version,omitempty"`
}

// TaskState is one task's status. Version is the plugin's version (KIP-891).
type TaskState struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
	Version  string `json:"version,omitempty"`
}

// ConnectorStateInfo is the body of GET /connectors/{name}/status.
type ConnectorStateInfo struct {
	Name      string         `json:"name"`
	Connector ConnectorState `json:"connector"`
	Tasks     []TaskState    `json:"tasks"`
	Type      string         `json:"type"`
}

// TaskInfo is one entry of GET /connectors/{name}/tasks.
type TaskInfo struct {
	ID     ConnectorTaskID   `json:"id"`
	Config map[string]string `json:"config"`
}

// ConnectorExpanded is one value of GET /connectors?expand=...; a part that
// was not asked for is left out.
type ConnectorExpanded struct {
	Status *ConnectorStateInfo `json:"status,omitempty"`
	Info   *ConnectorInfo      `json:"info,omitempty"`
}

// CreateConnectorRequest is the body of POST /connectors. InitialOffsets is
// nil when the field was absent or null, and a non-nil empty slice for [].
type CreateConnectorRequest struct {
	Name           string            `json:"name"`
	Config         map[string]string `json:"config"`
	InitialState   string            `json:"initial_state,omitempty"`
	InitialOffsets []ConnectorOffset `json:"initial_offsets,omitempty"`
}

// ConnectorOffset is one partition's offset. Numbers keep their JSON form.
type ConnectorOffset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// ConnectorOffsets is the body of GET /connectors/{name}/offsets and of PATCH.
type ConnectorOffsets struct {
	Offsets []ConnectorOffset `json:"offsets"`
}

// Message is a success body with only a message.
type Message struct {
	Message string `json:"message"`
}

// ActiveTopics is one connector's entry in GET /connectors/{name}/topics.
type ActiveTopics struct {
	Topics []string `json:"topics"`
}

// PluginInfo is one entry of GET /connector-plugins.
type PluginInfo struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version,omitempty"`
}

// PluginNamed reports whether name names the plugin class: in full, by
// its simple name, or by its simple name without "Connector" (the
// aliases connector.class takes), in any case.
func PluginNamed(class, name string) bool {
	if strings.EqualFold(class, name) {
		return true
	}
	simple := class[strings.LastIndex(class, ".")+1:]
	return strings.EqualFold(simple, name) || strings.EqualFold(simple, name+"Connector")
}

// ConfigKeyInfo describes one config key of a plugin.
type ConfigKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         *string  `json:"group"`
	Order         int      `json:"order_in_group"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
}

// ConfigValueInfo is the validation result for one config key.
type ConfigValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// ConfigInfo pairs a key's definition with its validation result.
type ConfigInfo struct {
	Definition ConfigKeyInfo   `json:"definition"`
	Value      ConfigValueInfo `json:"value"`
}

// ConfigInfos is the body of PUT /connector-plugins/{plugin}/config/validate.
type ConfigInfos struct {
	Name       string       `json:"name"`
	ErrorCount int          `json:"error_count"`
	Groups     []string     `json:"groups"`
	Configs    []ConfigInfo `json:"configs"`
}

// ErrorBody is the body of every non-2xx REST answer.
type ErrorBody struct {
	ErrorCode int     `json:"error_code"`
	Message   *string `json:"message"`
}

// TrimName trims a connector name as Kafka Connect does (Java's
// String.trim): every code point up to U+0020 at either end — spaces and
// control characters alike — and nothing else. Go's strings.TrimSpace
// follows another rule: it keeps a leading U+0001 and cuts U+00A0.
func TrimName(name string) string {
	return strings.TrimFunc(name, func(r rune) bool { return r <= ' ' })
}

// TaskID names a task: a connector and the task's number.
type TaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

// String renders the id as Kafka Connect does: <connector>-<task>.
func (t TaskID) String() string { return fmt.Sprintf("%s-%d", t.Connector, t.Task) }
