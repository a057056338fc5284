package api

import (
	"encoding/json"
	"time"
)

// The states of an agent (GET /sluice/agents).
const (
	// AgentActive takes new tasks.
	AgentActive = "active"
	// AgentCordoned takes no new tasks and keeps those it runs.
	AgentCordoned = "cordoned"
	// AgentDraining takes no new tasks, and its tasks are moved to other
	// agents, a few at a time, until it runs none.
	AgentDraining = "draining"
)

// Who cordoned or drained an agent (AgentCordon.Origin, DrainStatus.Origin).
// A mark is lifted automatically only when its own pre-stop hook made it;
// an operator's and a rolling restart's stay until they are lifted as they
// were made.
const (
	// CordonOperator: a REST call (sluice agents cordon|drain); also a mark
	// a version before origins were recorded wrote.
	CordonOperator = "operator"
	// CordonPreStop: the agent's own pre-stop hook (sluice agents drain
	// --self --pre-stop, deploy/k8s), lifted once the agent registers again
	// as a new process.
	CordonPreStop = "pre-stop"
	// CordonAgentRoll: a rolling restart (sluice fleet roll), which
	// uncordons the agent itself once it came back.
	CordonAgentRoll = "agent-roll"
)

// AgentCordon is who cordoned or drained an agent, and since when.
type AgentCordon struct {
	// Origin is CordonOperator, CordonPreStop or CordonAgentRoll.
	Origin string `json:"origin"`
	// Principal is the caller who made it, when REST authentication
	// named one.
	Principal string    `json:"principal,omitempty"`
	Since     time.Time `json:"since"`
}

// AgentInfo is one agent, as GET /sluice/agents shows it.
type AgentInfo struct {
	ID      string            `json:"id"`
	Labels  map[string]string `json:"labels"`
	Version string            `json:"version"`
	// Plugins are the classes of the connector plugins it runs, sorted.
	Plugins []string `json:"plugins"`
	// State is AgentActive, AgentCordoned or AgentDraining.
	State string `json:"state"`
	// Cordon says who cordoned or drained the agent; absent when active.
	Cordon *AgentCordon `json:"cordon,omitempty"`
	// Registered is false for an agent the leader only knows from the
	// fleet topic (cordoned or draining while it is away), or only expects
	// back within its lease: one the status topic names as a task's owner,
	// or one that left gracefully as the whole fleet stopped.
	Registered bool `json:"registered"`
	// LeaseExpires is when the agent is lost unless it heartbeats; zero
	// when it is not registered.
	LeaseExpires time.Time `json:"lease_expires,omitzero"`
	// StartedAt is when the agent process started (zero when unknown): a
	// restarted agent shows a later one.
	StartedAt time.Time   `json:"started_at,omitzero"`
	Tasks     []AgentTask `json:"tasks"`
}

// AgentTask is one task an agent runs or is assigned.
type AgentTask struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
	// State is the task's state as the agent last reported it (RUNNING,
	// PAUSED, FAILED), or UNASSIGNED while its assignment is on the way.
	State string `json:"state"`
}

// AgentList is the body of GET /sluice/agents.
type AgentList struct {
	Agents []AgentInfo `json:"agents"`
}

// The states of a drain (GET /sluice/agents/{id}/drain).
const (
	DrainRunning = "running"
	// DrainBlocked: tasks are left that no other agent may run.
	DrainBlocked = "blocked"
	// DrainDone: the agent runs no task.
	DrainDone = "done"
)

// DrainStatus is the progress of an agent's drain.
type DrainStatus struct {
	Agent     string    `json:"agent"`
	State     string    `json:"state"`
	Force     bool      `json:"force"`
	StartedAt time.Time `json:"started_at"`
	// Origin is who started the drain (CordonOperator, CordonPreStop,
	// CordonAgentRoll).
	Origin string `json:"origin"`
	// Remaining are the tasks still on the agent; Moving those being moved
	// now; Moved how many left it since this drain started (on this
	// leader; a drain before it, of the same agent, is not counted).
	Remaining []TaskID `json:"remaining"`
	Moving    []TaskID `json:"moving"`
	Moved     int      `json:"moved"`
	// Blocked are remaining tasks no other agent may run, with why; a
	// forced drain unassigns them instead.
	Blocked []BlockedTask `json:"blocked"`
}

// BlockedTask is a task a drain or a rebalance cannot move.
type BlockedTask struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
	Reason    string `json:"reason"`
}

// TaskMove is one task moved (or to be moved) from one agent to another.
type TaskMove struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
	From      string `json:"from"`
	To        string `json:"to"`
	// State is "planned", "moving" or "done".
	State string `json:"state"`
}

// Rebalance is the body of POST and GET /sluice/rebalance.
type Rebalance struct {
	ID     string `json:"id,omitempty"`
	DryRun bool   `json:"dry_run"`
	// State is "running" or "done" ("planned" for a dry run).
	State    string     `json:"state"`
	MaxMoves int        `json:"max_moves"`
	Moves    []TaskMove `json:"moves"`
	// Before and After are the number of tasks of each eligible agent.
	Before map[string]int `json:"before"`
	After  map[string]int `json:"after"`
}

// Selector chooses connectors by name: Names exactly, or Match, a glob
// (path.Match syntax) on names. Exactly one is given.
type Selector struct {
	Names []string `json:"names,omitempty"`
	Match string   `json:"match,omitempty"`
}

// BulkRequest is the body of POST /sluice/connectors/{pause|resume|stop|restart}.
type BulkRequest struct {
	Selector
}

// BulkResult is one connector's answer in a bulk operation: the status and
// message the single-connector endpoint would have answered.
type BulkResult struct {
	Connector string `json:"connector"`
	Status    int    `json:"status"`
	Message   string `json:"message,omitempty"`
}

// BulkResults is the body of a bulk operation's answer.
type BulkResults struct {
	Results []BulkResult `json:"results"`
	// Hidden counts the connectors a match selector selected that the
	// caller may not even list: they are left alone and left out of
	// Results, so that the answer names no connector the caller could not
	// see otherwise.
	Hidden int `json:"hidden,omitempty"`
}

// MaintenanceRequest is the body of POST /sluice/maintenance.
type MaintenanceRequest struct {
	Selector
	// State is STOPPED or PAUSED.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
}

// MaintenanceWindow is an open maintenance window.
type MaintenanceWindow struct {
	ID        string    `json:"id"`
	Selector  Selector  `json:"selector"`
	State     string    `json:"state"`
	Reason    string    `json:"reason,omitempty"`
	Principal string    `json:"principal"`
	OpenedAt  time.Time `json:"opened_at"`
	// Connectors are the connectors the window matched, each with the
	// target state it had (RUNNING, PAUSED, STOPPED).
	Connectors []MaintenanceConnector `json:"connectors"`
}

// MaintenanceConnector is one connector of a window.
type MaintenanceConnector struct {
	Name     string `json:"name"`
	Previous string `json:"previous"`
	// Outcome is set when the window closes: "restored", "changed by hand"
	// (left as the user set it), "deleted" (skipped) or "failed: …".
	Outcome string `json:"outcome,omitempty"`
	// State is the connector's target state once the window closed.
	State string `json:"state,omitempty"`
}

// MaintenanceList is the body of GET /sluice/maintenance.
type MaintenanceList struct {
	Windows []MaintenanceWindow `json:"windows"`
}

// RolloutRequest is the body of POST /sluice/rollouts.
type RolloutRequest struct {
	Selector
	// Patch is merged into each connector's config as PATCH
	// /connectors/{name}/config does: a null value removes the key.
	Patch map[string]*string `json:"patch"`
	// Batches are batch sizes in order: a number of connectors, a share
	// ("25%") of the matched connectors, or "rest"; the last batch takes
	// whatever is left.
	Batches []json.RawMessage `json:"batches"`
	Health  RolloutHealth     `json:"health"`
	// OnFailure is "pause" (the default) or "rollback".
	OnFailure string `json:"on_failure,omitempty"`
}

// RolloutHealth is a rollout's health gate: after each batch, every
// connector of the batch that was RUNNING, and its tasks, must be RUNNING
// for RunningFor (a Go duration), with at most MaxFailedTasks tasks FAILED.
type RolloutHealth struct {
	RunningFor     string `json:"running_for"`
	MaxFailedTasks int    `json:"max_failed_tasks"`
}

// The states of a rollout.
const (
	// RolloutPlanned is a dry run's (POST /sluice/rollouts?dry_run=true):
	// what would be recorded, recorded nowhere.
	RolloutPlanned    = "planned"
	RolloutRunning    = "running"
	RolloutPaused     = "paused"
	RolloutDone       = "done"
	RolloutFailed     = "failed"
	RolloutRolledBack = "rolled_back"
	RolloutAborted    = "aborted"
)

// The states of a rollout's batch.
const (
	BatchPending   = "pending"
	BatchApplying  = "applying"
	BatchVerifying = "verifying"
	BatchDone      = "done"
	BatchFailed    = "failed"
	// BatchRolledBack: its connectors have their configs from before.
	BatchRolledBack = "rolled_back"
)

// Rollout is a config rollout and its progress (GET /sluice/rollouts/{id}).
type Rollout struct {
	ID        string         `json:"id"`
	State     string         `json:"state"`
	Request   RolloutRequest `json:"request"`
	Principal string         `json:"principal"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	// Batch is the index of the batch in progress (len(Batches) when all
	// are done).
	Batch   int            `json:"batch"`
	Batches []RolloutBatch `json:"batches"`
	// Error says why a failed rollout failed.
	Error string `json:"error,omitempty"`
}

// RolloutBatch is one batch of a rollout.
type RolloutBatch struct {
	State      string             `json:"state"`
	Connectors []RolloutConnector `json:"connectors"`
	// HealthySince is when the batch was first seen healthy while it
	// verifies.
	HealthySince time.Time `json:"healthy_since,omitzero"`
	// VerifyingSince is when the batch started verifying (again, after a
	// resume): its verification is bounded from then.
	VerifyingSince time.Time `json:"verifying_since,omitzero"`
	// StartGeneration is the highest task generation the cluster had
	// issued when the batch started applying: only tasks started after it
	// (a higher generation) show the patched config's health.
	StartGeneration int64 `json:"start_generation,omitempty"`
}

// RolloutConnector is one connector of a batch: its config before and
// after the patch, and whether it was RUNNING when its batch started (only
// those are held to the health gate).
type RolloutConnector struct {
	Name       string            `json:"name"`
	Before     map[string]string `json:"before"`
	After      map[string]string `json:"after"`
	WasRunning bool              `json:"was_running"`
	// State is "pending", "applied", "rolled_back", "skipped" (deleted
	// meanwhile) or "failed: …".
	State string `json:"state"`
}

// RolloutList is the body of GET /sluice/rollouts.
type RolloutList struct {
	Rollouts []Rollout `json:"rollouts"`
}
