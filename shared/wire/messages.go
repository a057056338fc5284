package wire

import (
	"fmt"
	"github.com/sluice-io/sluice/api"
	"strings"
	"time"
)

// TaskID names a task; it is the REST API's (api.TaskID).
type TaskID = api.TaskID

// RunningTask is an agent's account of one task it holds.
type RunningTask struct {
	ID         TaskID `json:"id"`
	Generation int64  `json:"generation"`
	State      string `json:"state"`
	Trace      string `json:"trace,omitempty"`
	// ConfigHash echoes the assignment's hash, so a restarted coordinator can
	// tell whether the agent runs the current config.
	ConfigHash string `json:"config_hash,omitempty"`
}

// RegisterRequest announces an agent: its id, placement labels and the tasks
// it already runs (non-empty after a coordinator restart), and what it can
// run: its Sluice version, its plugins and the settings that decide which
// tasks it accepts. A task is placed only on an agent that has its plugin,
// so a rolling upgrade that adds a plugin never sends its tasks to an agent
// still on the old version.
type RegisterRequest struct {
	AgentID string            `json:"agent_id"`
	Labels  map[string]string `json:"labels,omitempty"`
	Tasks   []RunningTask     `json:"tasks"`
	// Version is the agent's Sluice version.
	Version string `json:"version,omitempty"`
	// Plugins are the plugins the agent can run, by full class name.
	Plugins []api.PluginInfo `json:"plugins,omitempty"`
	// HostPlugins are the Java plugins its connector host can run (from
	// --plugin-path, docs/plugins.md), each version of a class once; a
	// class may also be in Plugins, as a built-in Go plugin of another
	// version (Kafka's FileStream connectors). Their code runs only on
	// agents: validation and their connectors' lifecycle go through
	// SubjectAgentConnector.
	HostPlugins []api.PluginInfo `json:"host_plugins,omitempty"`
	// Settings are the agent's settings that decide what it accepts, such
	// as whether it runs exactly-once source tasks; shown, not interpreted,
	// unless a placement rule names one.
	Settings map[string]string `json:"settings,omitempty"`
	// StartedAt is when the agent's transport started: a restarted agent
	// (same id) shows a later one, which is how a rolling upgrade knows it
	// came back. Zero from an agent of a version that does not send it.
	StartedAt time.Time `json:"started_at,omitzero"`
	// An agent of an earlier build of this level also sent "features"
	// (presence, kafka-liveness, connector-offsets-topic): every agent of
	// the level serves them, so the field is gone and a receiver ignores
	// it, as encoding/json does any field it does not know. What an agent
	// can do is stated by its protocol level alone (ProtocolLevel).
}

// Validate checks what the coordinator relies on.
func (r *RegisterRequest) Validate() error {
	if strings.TrimSpace(r.AgentID) == "" {
		return badField("register request", "agent_id", "must not be empty")
	}
	for _, t := range r.Tasks {
		if err := validTaskID("register request", "tasks[].id", t.ID); err != nil {
			return err
		}
	}
	return nil
}

// RegisterReply accepts an agent.
type RegisterReply struct {
	// Level is the leader's protocol level (ProtocolLevel): an agent of
	// another level does not take the registration.
	Level int `json:"level"`
	// Term is the coordinator's leadership term.
	Term int64 `json:"term"`
	// LeaseMillis is how long the agent may go without a heartbeat.
	LeaseMillis int64 `json:"lease_ms"`
	// LivenessTopic is where the agent sends its liveness beats, every
	// LivenessMillis (liveness.go); empty: the leader reads none.
	LivenessTopic  string `json:"liveness_topic,omitempty"`
	LivenessMillis int64  `json:"liveness_ms,omitempty"`
}

// HeartbeatRequest keeps an agent's lease and reports its tasks.
type HeartbeatRequest = RegisterRequest

// HeartbeatReply answers a heartbeat. Unknown asks the agent to register
// again (the coordinator does not know it, for example after losing its lease).
type HeartbeatReply struct {
	// Level is the leader's protocol level, as in RegisterReply.
	Level   int   `json:"level"`
	Term    int64 `json:"term"`
	Unknown bool  `json:"unknown,omitempty"`
}

// StatusReport carries one task's state change, stamped with the generation
// of the assignment it belongs to, so a late report from an older owner loses.
type StatusReport struct {
	AgentID    string   `json:"agent_id"`
	ID         TaskID   `json:"id"`
	Generation int64    `json:"generation"`
	State      string   `json:"state"`
	Trace      string   `json:"trace,omitempty"`
	Topics     []string `json:"topics,omitempty"`
}

// Validate checks the report's shape.
func (r *StatusReport) Validate() error {
	switch r.State {
	case api.StateRunning, api.StatePaused, api.StateFailed, api.StateUnassigned, api.StateRestarting:
	default:
		return badField("status report", "state", fmt.Sprintf("%q is not a task state", r.State))
	}
	if r.AgentID == "" {
		return badField("status report", "agent_id", "must not be empty")
	}
	return validTaskID("status report", "id", r.ID)
}

// StatusReply acknowledges a status report.
type StatusReply struct{}

// TaskAssignment is what an agent needs to run one task.
type TaskAssignment struct {
	ID         TaskID `json:"id"`
	Generation int64  `json:"generation"`
	// ConnectorConfig is the connector's whole config; TaskConfig the task's.
	ConnectorConfig map[string]string `json:"connector_config"`
	TaskConfig      map[string]string `json:"task_config"`
	// ConfigHash identifies the connector and task config of this generation.
	ConfigHash string `json:"config_hash"`
	// Paused asks the agent to hold the task without processing records.
	Paused bool `json:"paused"`
	// ReservedTopics are the cluster's own topics that the task may neither
	// produce to nor consume from, each with what it is (Sluice's config,
	// status, offsets, audit, history and fleet topics, and connectors' own
	// offsets topics). Kafka's internal topics are reserved without being
	// listed. It is the list as of the assignment: it is not part of
	// ConfigHash, so a change of it alone restarts no task.
	ReservedTopics map[string]string `json:"reserved_topics,omitempty"`
	// Tenant is what the connector's tenant lets it touch; nil when the
	// cluster has no tenants configured (or none holds the connector and
	// the tenants are not strict). Unlike ReservedTopics it is part of
	// ConfigHash: a change of the tenant's rules restarts the task under
	// them.
	Tenant *TenantPolicy `json:"tenant,omitempty"`
}

// TenantPolicy is what the tenant of a connector — found by the
// connector's name — lets its tasks touch. Patterns are Go's path.Match
// globs ("team-a.*", "connect-team-a-*"). An empty list allows nothing.
type TenantPolicy struct {
	// Tenant names it; "" for a connector that belongs to no tenant under
	// strict tenancy, which may touch nothing.
	Tenant string `json:"tenant"`
	// Topics are the topics the tasks may produce to and consume from.
	Topics []string `json:"topics"`
	// Groups are the consumer groups a sink may use.
	Groups []string `json:"groups"`
	// SecretPaths are the directories ${file:…} and ${directory:…}
	// placeholders may read under; SecretEnv the patterns of the variables
	// ${env:…} may read.
	SecretPaths []string `json:"secret_paths,omitempty"`
	SecretEnv   []string `json:"secret_env,omitempty"`
	// KafkaPrincipal, when set, is the only SASL user the tasks' clients
	// may authenticate as when the connector overrides their credentials.
	KafkaPrincipal string `json:"kafka_principal,omitempty"`
}

// AssignRequest starts tasks on an agent, or updates ones it runs: a task
// with a newer generation is restarted with its new config; one with the same
// generation only has its paused flag applied — unless its ConfigHash
// differs from the one the agent runs, which makes it another instance (a
// restarted leader may issue a number its predecessor issued but never
// recorded).
type AssignRequest struct {
	Term  int64            `json:"term"`
	Tasks []TaskAssignment `json:"tasks"`
	// Issued is the highest generation the leader has issued (0: not
	// said). An agent running an instance at a generation the leader
	// issued ignores an assignment of the same term older than it — one
	// delayed, or replayed — rather than go back to it; one at a
	// generation beyond what the leader issued is no instance of its.
	Issued int64 `json:"issued,omitempty"`
}

// AssignReply acknowledges an assignment. Refused lists the tasks the agent
// did not start because a revoke voided their generation (see
// RevokeRequest): the coordinator must place them anew, at a new generation.
type AssignReply struct {
	Refused []TaskID `json:"refused,omitempty"`
}

// RevokeRequest stops tasks on an agent. It also voids every assignment of
// those tasks of the same term at generation Generation or older: one still
// in flight when the revoke arrives (sent before it, delivered after) is
// refused, so a task the coordinator was told had stopped never starts
// behind its back — an offsets change relies on that.
type RevokeRequest struct {
	Term       int64    `json:"term"`
	Tasks      []TaskID `json:"tasks"`
	Generation int64    `json:"generation,omitempty"`
}

// RevokeReply is sent after every revoked task stopped, committed its last
// offsets and closed its Kafka clients. Failed lists tasks whose stop
// returned an error; they are stopped all the same.
type RevokeReply struct {
	Stopped []TaskID `json:"stopped"`
	Failed  []string `json:"failed,omitempty"`
}
