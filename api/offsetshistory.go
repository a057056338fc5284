package api

import "time"

// OffsetChange is one partition's position before and after an offsets
// change: the partition and offset maps of GET …/offsets. From is nil when
// the partition had no position, To when the change removes it.
type OffsetChange struct {
	Partition map[string]any `json:"partition"`
	From      map[string]any `json:"from"`
	To        map[string]any `json:"to"`
}

// OffsetsChanges answers every Sluice offsets operation (preview, reset by
// rule, undo, restore): the changes it makes, or with DryRun would make.
type OffsetsChanges struct {
	DryRun  bool           `json:"dry_run"`
	Changes []OffsetChange `json:"changes"`
	// HistoryID is the offsets history entry of the change; empty for a
	// dry run.
	HistoryID string `json:"history_id,omitempty"`
}

// The operations of an offsets history entry.
const (
	// HistoryAlter is PATCH /connectors/{name}/offsets.
	HistoryAlter = "alter"
	// HistoryReset is DELETE /connectors/{name}/offsets, and DELETE
	// /connectors/{name}?reset_offsets=true.
	HistoryReset = "reset"
	// HistoryResetTo is POST /sluice/connectors/{name}/offsets/reset.
	HistoryResetTo = "reset-to"
	// HistoryCreate is a create with initial_offsets.
	HistoryCreate = "create"
	// HistoryUndo puts back an entry's before positions.
	HistoryUndo = "undo"
	// HistoryRestore writes another connector's recorded positions.
	HistoryRestore = "restore"
	// HistoryMove is a move or copy: on the new connector, its creation at
	// the old one's positions; on the old one (unless copied), the removal
	// of its positions.
	HistoryMove = "move"
)

// The states of an offsets history entry.
const (
	// HistoryPending is written before the change is made.
	HistoryPending = "pending"
	// HistoryApplied marks a change that was made.
	HistoryApplied = "applied"
	// HistoryFailed marks a change that was not made.
	HistoryFailed = "failed"
)

// OffsetsHistoryEntry is one change of a connector's positions, as the
// offsets history topic keeps it and GET …/offsets/history shows it.
type OffsetsHistoryEntry struct {
	// ID names the entry; ids sort by the time they were made.
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
	// Connector is the connector whose positions changed; Type is
	// TypeSource or TypeSink.
	Connector string `json:"connector"`
	Type      string `json:"type"`
	// Group is a sink connector's consumer group: where its positions
	// were, whatever its config says since (it may be deleted).
	Group string `json:"group,omitempty"`
	// OffsetsTopic is a source connector's own offsets topic
	// (offsets.storage.topic) when it had one: its positions were read
	// from it and the worker's, whatever its config says since.
	OffsetsTopic string `json:"offsets_topic,omitempty"`
	// Operation is one of the History* operations.
	Operation string `json:"operation"`
	// Detail describes the operation beyond its name: the rule of a
	// reset-to ("to=timestamp 2026-11-30T10:00:00Z"), the connector a move
	// came from.
	Detail string `json:"detail,omitempty"`
	// Principal is who asked: the authenticated caller, "anonymous"
	// without authentication.
	Principal string `json:"principal"`
	// Reason is the request's X-Sluice-Reason header, if any.
	Reason string `json:"reason,omitempty"`
	// Undoes is the entry an undo put back; From the connector and entry a
	// restore or move took its positions from.
	Undoes    string `json:"undoes,omitempty"`
	FromEntry string `json:"from_entry,omitempty"`
	// State is HistoryApplied for every entry GET shows; the topic also
	// holds pending entries and failed ones.
	State string `json:"state"`
	// Error is why a failed entry failed.
	Error string `json:"error,omitempty"`
	// Changes is every partition the operation changed.
	Changes []OffsetChange `json:"changes"`
}

// OffsetsHistory is the body of GET /sluice/connectors/{name}/offsets/history.
type OffsetsHistory struct {
	// Entries are applied entries, newest first.
	Entries []OffsetsHistoryEntry `json:"entries"`
	// More reports that older entries exist than those returned: ask again
	// with before set to the last entry's id.
	More bool `json:"more"`
}

// OffsetsResetRequest is the body of POST
// /sluice/connectors/{name}/offsets/reset: one rule, To (one of the Reset*
// rules) or ShiftBy alone, applied to the connector's topics, or to
// those of Topics and Partitions.
type OffsetsResetRequest struct {
	// To is "earliest", "latest", "timestamp" or "offset"; empty with
	// ShiftBy.
	To string `json:"to,omitempty"`
	// Timestamp is an RFC 3339 time or epoch milliseconds, for
	// To "timestamp".
	Timestamp any `json:"timestamp,omitempty"`
	// Offset is the position for To "offset".
	Offset *int64 `json:"offset,omitempty"`
	// ShiftBy moves each position by that many records, clamped to the
	// partition's log start and end.
	ShiftBy *int64 `json:"shift_by,omitempty"`
	// Topics and Partitions narrow the change.
	Topics     []string `json:"topics,omitempty"`
	Partitions []int32  `json:"partitions,omitempty"`
	DryRun     bool     `json:"dry_run,omitempty"`
}

// The rules of OffsetsResetRequest.To.
const (
	ResetEarliest  = "earliest"
	ResetLatest    = "latest"
	ResetTimestamp = "timestamp"
	ResetOffset    = "offset"
)

// OffsetsPreviewRequest is the body of POST
// /sluice/connectors/{name}/offsets/preview: PATCH's body, or Reset for
// what DELETE would do.
type OffsetsPreviewRequest struct {
	Offsets []ConnectorOffset `json:"offsets,omitempty"`
	Reset   bool              `json:"reset,omitempty"`
}

// OffsetsRestoreRequest is the body of POST
// /sluice/connectors/{name}/offsets/restore: write the positions one
// history entry of another connector (a deleted one too) recorded.
type OffsetsRestoreRequest struct {
	// From is the connector whose history holds the entry.
	From string `json:"from"`
	// Entry is the entry's id; empty for From's newest entry.
	Entry string `json:"entry,omitempty"`
	// Positions is "before" (the default) or "after".
	Positions string `json:"positions,omitempty"`
	DryRun    bool   `json:"dry_run,omitempty"`
}

// MoveRequest is the body of POST /sluice/connectors/{name}/move.
type MoveRequest struct {
	// To is the new connector's name.
	To string `json:"to"`
	// Config overrides keys of the old connector's config.
	Config map[string]string `json:"config,omitempty"`
	// Copy keeps the old connector (stopped) and its positions.
	Copy   bool `json:"copy,omitempty"`
	DryRun bool `json:"dry_run,omitempty"`
}

// MoveResult answers a move: what was done, or with DryRun what would be.
type MoveResult struct {
	DryRun bool   `json:"dry_run"`
	From   string `json:"from"`
	To     string `json:"to"`
	Copy   bool   `json:"copy"`
	// Config is the new connector's config; TargetState the state it was
	// created in (the old one's).
	Config      map[string]string `json:"config"`
	TargetState string            `json:"target_state"`
	// Offsets are the positions the new connector starts from.
	Offsets []ConnectorOffset `json:"offsets"`
	// Steps are the steps in order, each "planned", "done" or "skipped".
	Steps []MoveStep `json:"steps"`
	// HistoryID is the new connector's history entry.
	HistoryID string `json:"history_id,omitempty"`
}

// MoveStep is one step of a move.
type MoveStep struct {
	Step  string `json:"step"`
	State string `json:"state"`
}
