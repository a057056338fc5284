package store

import (
	"encoding/json"
	"time"

	"github.com/sluice-io/sluice/shared/records"
)

// The fleet topic's records, as the coordinator keeps them. They are the
// store's own types, not the REST API's: the herder and the controllers
// convert them at the edge, so a field added to, or renamed in, an API
// type never changes what is stored. Their JSON is the one the records had
// when they were api/v1 types (same field names, same tags), so a fleet
// topic written by an earlier version is read as it is; a change of these
// types must keep that, or read the old form once in FleetState.apply.

// Selector names connectors: Names exactly, or Match, a glob on names.
type Selector struct {
	Names []string `json:"names,omitempty"`
	Match string   `json:"match,omitempty"`
}

// Window is an open maintenance window: the connectors it holds in State
// (STOPPED or PAUSED, by their REST names), each with the target state it
// had before (RUNNING, PAUSED or STOPPED).
type Window struct {
	ID         string            `json:"id"`
	Selector   Selector          `json:"selector"`
	State      string            `json:"state"`
	Reason     string            `json:"reason,omitempty"`
	Principal  string            `json:"principal"`
	OpenedAt   time.Time         `json:"opened_at"`
	Connectors []WindowConnector `json:"connectors"`
}

// WindowConnector is one connector of a window. Outcome and State are set
// only in the answer to a close (a closed window is no longer stored);
// they are kept for windows an earlier version recorded mid-close.
type WindowConnector struct {
	Name     string `json:"name"`
	Previous string `json:"previous"`
	Outcome  string `json:"outcome,omitempty"`
	State    string `json:"state,omitempty"`
}

// The states of a rollout.
const (
	RolloutRunning    = "running"
	RolloutPaused     = "paused"
	RolloutDone       = "done"
	RolloutFailed     = "failed"
	RolloutRolledBack = "rolled_back"
	RolloutAborted    = "aborted"
)

// The states of a rollout's batch, and of its connectors (pending,
// applied, rolled back; besides "skipped" and "failed: …").
const (
	BatchPending    = "pending"
	BatchApplying   = "applying"
	BatchVerifying  = "verifying"
	BatchDone       = "done"
	BatchFailed     = "failed"
	BatchRolledBack = "rolled_back"
	// ConnectorApplied and ConnectorSkipped are connectors' states.
	ConnectorApplied = "applied"
	ConnectorSkipped = "skipped"
)

// Rollout is a config rollout and its progress.
type Rollout struct {
	ID        string      `json:"id"`
	State     string      `json:"state"`
	Spec      RolloutSpec `json:"request"`
	Principal string      `json:"principal"`
	CreatedAt time.Time   `json:"created_at"`
	UpdatedAt time.Time   `json:"updated_at"`
	// Batch is the index of the batch in progress (len(Batches) when all
	// are done).
	Batch   int            `json:"batch"`
	Batches []RolloutBatch `json:"batches"`
	// Error says why the rollout failed.
	Error string `json:"error,omitempty"`
}

// RolloutSpec is what a rollout was asked to do.
type RolloutSpec struct {
	Selector
	// Patch is merged into each connector's config: a nil value removes
	// the key.
	Patch map[string]*string `json:"patch"`
	// Batches are the batch specs as asked (kept for the record; the
	// batches themselves are fixed when the rollout is made).
	Batches   []json.RawMessage `json:"batches"`
	Health    RolloutHealth     `json:"health"`
	OnFailure string            `json:"on_failure,omitempty"`
}

// RolloutHealth is a rollout's health gate.
type RolloutHealth struct {
	// RunningFor is a Go duration, as asked.
	RunningFor     string `json:"running_for"`
	MaxFailedTasks int    `json:"max_failed_tasks"`
}

// RollsBack reports whether a failed batch rolls the rollout back (rather
// than pausing it).
func (s RolloutSpec) RollsBack() bool { return s.OnFailure == "rollback" }

// RolloutBatch is one batch of a rollout.
type RolloutBatch struct {
	State          string             `json:"state"`
	Connectors     []RolloutConnector `json:"connectors"`
	HealthySince   time.Time          `json:"healthy_since,omitzero"`
	VerifyingSince time.Time          `json:"verifying_since,omitzero"`
	// StartGeneration is the highest task generation issued when the
	// batch started applying.
	StartGeneration int64 `json:"start_generation,omitempty"`
}

// RolloutConnector is one connector of a batch.
type RolloutConnector struct {
	Name   string            `json:"name"`
	Before map[string]string `json:"before"`
	// BeforePlugin is the plugin version the before config ran, recorded
	// when the patch was applied, so that a rollback runs that version
	// again rather than resolving the before config anew (which, for a
	// range or no connector.plugin.version, may be the version that
	// failed).
	BeforePlugin *records.PluginPin `json:"before_plugin,omitempty"`
	After        map[string]string  `json:"after"`
	WasRunning   bool               `json:"was_running"`
	State        string             `json:"state"`
}

// Final reports whether nothing more happens to the rollout: its
// connectors are free for another.
func (r Rollout) Final() bool {
	switch r.State {
	case RolloutDone, RolloutRolledBack, RolloutAborted:
		return true
	}
	return false
}

// Finished reports whether the rollout takes no further step: final, or
// failed without a rollback to make.
func (r Rollout) Finished() bool {
	return r.Final() || r.State == RolloutFailed && !r.Spec.RollsBack()
}

// Names are the rollout's connectors, batch after batch.
func (r Rollout) Names() []string {
	var out []string
	for _, b := range r.Batches {
		for _, c := range b.Connectors {
			out = append(out, c.Name)
		}
	}
	return out
}

// Rebalance is a rebalance of tasks across agents and its progress.
type Rebalance struct {
	ID       string          `json:"id,omitempty"`
	DryRun   bool            `json:"dry_run"`
	State    string          `json:"state"`
	MaxMoves int             `json:"max_moves"`
	Moves    []RebalanceMove `json:"moves"`
	Before   map[string]int  `json:"before"`
	After    map[string]int  `json:"after"`
}

// RebalanceMove is one task move of a rebalance.
type RebalanceMove struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
	From      string `json:"from"`
	To        string `json:"to"`
	State     string `json:"state"`
}
