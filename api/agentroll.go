package api

import "time"

// AgentRollRequest is the body of POST /sluice/fleet/rolls: a rolling
// restart of agents that the leader drives. Each agent is drained, waited
// for until it comes back restarted (a later started_at), and uncordoned;
// something else restarts it: the coordinator runs no command.
type AgentRollRequest struct {
	// Agents are the agents to roll, in this order (empty: every
	// registered agent, by id).
	Agents []string `json:"agents,omitempty"`
	// BatchSize is how many agents roll at a time (default 1).
	BatchSize int `json:"batch_size,omitempty"`
	// Timeout bounds each agent's drain, and then its restart: a Go
	// duration (default 10m).
	Timeout string `json:"timeout,omitempty"`
}

// The states of an agent roll.
const (
	AgentRollRunning = "running"
	AgentRollPaused  = "paused"
	AgentRollDone    = "done"
	AgentRollFailed  = "failed"
	AgentRollAborted = "aborted"
)

// The steps of one agent of a roll, in order; RollFailed: the roll failed
// at this agent, which is left as it was (draining or cordoned).
const (
	RollPending        = "pending"
	RollDraining       = "draining"
	RollWaitingRestart = "waiting_restart"
	RollUncordoning    = "uncordoning"
	RollDone           = "done"
	RollFailed         = "failed"
)

// AgentRoll is a rolling restart of agents and its progress (GET
// /sluice/fleet/rolls/{id}).
type AgentRoll struct {
	ID        string           `json:"id"`
	State     string           `json:"state"`
	Request   AgentRollRequest `json:"request"`
	Principal string           `json:"principal"`
	CreatedAt time.Time        `json:"created_at"`
	UpdatedAt time.Time        `json:"updated_at"`
	// Batch is the index of the batch in progress (the number of batches
	// once all are done).
	Batch    int               `json:"batch"`
	Progress AgentRollProgress `json:"progress"`
	Agents   []RolledAgent     `json:"agents"`
	// Error says why a failed roll failed, naming the agent and its step.
	Error string `json:"error,omitempty"`
}

// AgentRollProgress sums a roll up: how many agents are done of how many,
// and where the agents of the batch in progress are.
type AgentRollProgress struct {
	Done    int           `json:"done"`
	Total   int           `json:"total"`
	Current []RollCurrent `json:"current"`
}

// RollCurrent is an agent of the batch in progress and its step.
type RollCurrent struct {
	Agent string `json:"agent"`
	Step  string `json:"step"`
}

// RolledAgent is one agent of a roll.
type RolledAgent struct {
	ID string `json:"id"`
	// Batch is the index of the agent's batch.
	Batch int    `json:"batch"`
	Step  string `json:"step"`
	// Since is when it entered its step.
	Since time.Time `json:"since,omitzero"`
	// StartedAt is its started_at as its drain began; RestartedAt and
	// Version are its started_at and version once it came back.
	StartedAt   time.Time `json:"started_at,omitzero"`
	RestartedAt time.Time `json:"restarted_at,omitzero"`
	Version     string    `json:"version,omitempty"`
	// Moved is how many tasks its drain moved off it.
	Moved int `json:"moved"`
	// FinishedAt is when it was uncordoned, or failed.
	FinishedAt time.Time `json:"finished_at,omitzero"`
	Error      string    `json:"error,omitempty"`
}

// AgentRollList is the body of GET /sluice/fleet/rolls.
type AgentRollList struct {
	Rolls []AgentRoll `json:"rolls"`
}
