package store

import (
	"slices"
	"time"
)

// An agent roll is a rolling restart of agents that the leader drives
// (fleet/agentroll): batch by batch, each agent is drained, waited for
// until it comes back restarted (a later started_at in its registration),
// and uncordoned. Something else restarts it — an operator, systemd,
// Kubernetes, the CLI's --restart-cmd: the coordinator runs no command.
// Its record, agentroll-<id> in the fleet topic, holds every agent's step,
// so that a new leader carries the roll on where the last one stopped.

// The states of an agent roll.
const (
	AgentRollRunning = "running"
	AgentRollPaused  = "paused"
	AgentRollDone    = "done"
	AgentRollFailed  = "failed"
	AgentRollAborted = "aborted"
)

// The steps of one agent of a roll, in order (failed: the roll failed at
// this agent).
const (
	RollPending        = "pending"
	RollDraining       = "draining"
	RollWaitingRestart = "waiting_restart"
	RollUncordoning    = "uncordoning"
	RollDone           = "done"
	RollFailed         = "failed"
)

// AgentRoll is a rolling restart of agents and its progress.
type AgentRoll struct {
	ID        string        `json:"id"`
	State     string        `json:"state"`
	Spec      AgentRollSpec `json:"request"`
	Principal string        `json:"principal"`
	CreatedAt time.Time     `json:"created_at"`
	UpdatedAt time.Time     `json:"updated_at"`
	// Batch is the index of the batch in progress (Batches() when all are
	// done); batch i is Agents[i*BatchSize:(i+1)*BatchSize].
	Batch  int           `json:"batch"`
	Agents []RolledAgent `json:"agents"`
	// Error says why a failed roll failed.
	Error string `json:"error,omitempty"`
}

// AgentRollSpec is what a roll was asked to do, with its defaults filled
// in.
type AgentRollSpec struct {
	// Agents are the agents asked for, in order (empty: every registered
	// agent, by id).
	Agents    []string `json:"agents,omitempty"`
	BatchSize int      `json:"batch_size"`
	// Timeout bounds each step of each agent that waits (its drain, its
	// restart); a Go duration.
	Timeout string `json:"timeout"`
}

// RolledAgent is one agent of a roll and where it is.
type RolledAgent struct {
	ID   string `json:"id"`
	Step string `json:"step"`
	// Since is when the agent entered its step.
	Since time.Time `json:"since,omitzero"`
	// StartedAt is the agent's started_at as its drain began (zero when it
	// was not registered then, or its version does not send one);
	// SeenGone records that it was seen unregistered since, which is how
	// such an agent's restart shows.
	StartedAt time.Time `json:"started_at,omitzero"`
	SeenGone  bool      `json:"seen_gone,omitempty"`
	// Moved is how many tasks its drain moved off it.
	Moved int `json:"moved"`
	// RestartedAt and Version are its started_at and version once back.
	RestartedAt time.Time `json:"restarted_at,omitzero"`
	Version     string    `json:"version,omitempty"`
	// FinishedAt is when it was uncordoned (done) or failed.
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Error says why it failed.
	Error string `json:"error,omitempty"`
}

// Final reports whether nothing more happens to the roll: its agents are
// free for another.
func (r AgentRoll) Final() bool {
	switch r.State {
	case AgentRollDone, AgentRollFailed, AgentRollAborted:
		return true
	}
	return false
}

// Batches is how many batches the roll has.
func (r AgentRoll) Batches() int {
	if r.BatchSizeOrOne() == 0 {
		return 0
	}
	return (len(r.Agents) + r.BatchSizeOrOne() - 1) / r.BatchSizeOrOne()
}

// BatchSizeOrOne is the roll's batch size, at least 1.
func (r AgentRoll) BatchSizeOrOne() int { return max(r.Spec.BatchSize, 1) }

// BatchRange is the index range [from, to) of batch i's agents.
func (r AgentRoll) BatchRange(i int) (from, to int) {
	size := r.BatchSizeOrOne()
	from = min(i*size, len(r.Agents))
	return from, min(from+size, len(r.Agents))
}

// Names are the roll's agents, in order.
func (r AgentRoll) Names() []string {
	out := make([]string, len(r.Agents))
	for i, a := range r.Agents {
		out[i] = a.ID
	}
	return out
}

// Done counts the agents rolled.
func (r AgentRoll) Done() int {
	n := 0
	for _, a := range r.Agents {
		if a.Step == RollDone {
			n++
		}
	}
	return n
}

// agent is the agent id of the batch in progress.
func (r *AgentRoll) agent(id string) (*RolledAgent, bool) {
	from, to := r.BatchRange(r.Batch)
	i := slices.IndexFunc(r.Agents[from:to], func(a RolledAgent) bool { return a.ID == id })
	if i < 0 {
		return nil, false
	}
	return &r.Agents[from+i], true
}
