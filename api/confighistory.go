package api

import "time"

// The operations of a config history entry: what changed a connector's
// config.
const (
	// ConfigCreate is POST /connectors, or PUT …/config of a connector
	// that did not exist.
	ConfigCreate = "create"
	// ConfigPut is PUT /connectors/{name}/config of an existing connector.
	ConfigPut = "put"
	// ConfigPatch is PATCH /connectors/{name}/config.
	ConfigPatch = "patch"
	// ConfigRollout is a rollout writing its patch (Detail names the
	// rollout and batch); ConfigRollback is a failed rollout putting the
	// config from before it back.
	ConfigRollout  = "rollout"
	ConfigRollback = "rollback"
	// ConfigMove is a move, rename or copy: on the new connector its
	// creation, on the old one (unless copied) its removal.
	ConfigMove = "move"
	// ConfigRestore is POST …/config/history/{id}/restore.
	ConfigRestore = "restore"
	// ConfigDelete is DELETE /connectors/{name}.
	ConfigDelete = "delete"
)

// ConfigDiff names the keys one change added, removed and changed, each
// list sorted. A key whose value is a secret the history does not keep is
// named too: the diff was made from the values as written.
type ConfigDiff struct {
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	Changed []string `json:"changed"`
}

// ConfigHistorySummary is one change of a connector's config as GET
// /sluice/connectors/{name}/config/history lists it: who, when, how, and
// which keys.
type ConfigHistorySummary struct {
	// ID names the entry; ids sort by the time they were made.
	ID        string    `json:"id"`
	Time      time.Time `json:"time"`
	Connector string    `json:"connector"`
	// Operation is one of the Config* operations.
	Operation string `json:"operation"`
	// Detail says more of the operation: the rollout and batch, the
	// connectors of a move, the entry a restore put back.
	Detail string `json:"detail,omitempty"`
	// Principal is who asked: the authenticated caller ("anonymous"
	// without authentication), or a rollout's creator.
	Principal string     `json:"principal"`
	Diff      ConfigDiff `json:"diff"`
}

// ConfigHistoryEntry is one entry of the config history in full: GET
// /sluice/connectors/{name}/config/history/{id}.
type ConfigHistoryEntry struct {
	ConfigHistorySummary
	// Before is the config before the change, null for a create; After
	// the config it wrote, null for a delete. Both are as the user wrote
	// them (config provider references such as ${file:/s.properties:pw}
	// are kept), except the values of keys the connector's plugin declares
	// PASSWORD, which read "[hidden]" (Hidden lists them).
	Before map[string]string `json:"before"`
	After  map[string]string `json:"after"`
	// Hidden are the keys of Before or After whose values the history does
	// not keep: a restore keeps the connector's current value of each.
	Hidden []string `json:"hidden,omitempty"`
	// Omitted: the configs were too large for one record of the history
	// topic, and Before (or both) are null for that reason, not for a
	// create. The diff is whole.
	Omitted bool `json:"omitted,omitempty"`
}

// ConfigHistory is the body of GET /sluice/connectors/{name}/config/history.
type ConfigHistory struct {
	// Entries are newest first.
	Entries []ConfigHistorySummary `json:"entries"`
	// More reports that older entries exist than those returned: ask again
	// with before set to the last entry's id.
	More bool `json:"more"`
}

// ConfigRestoreResult answers POST
// /sluice/connectors/{name}/config/history/{id}/restore.
type ConfigRestoreResult struct {
	// Connector is the connector as the restore left it (its config is
	// what was written).
	Connector ConnectorInfo `json:"connector"`
	// Restored is the entry whose After config was put back.
	Restored string `json:"restored"`
	// HistoryID is the entry the restore recorded: empty when the config
	// was already the entry's (nothing was written).
	HistoryID string `json:"history_id,omitempty"`
	// KeptCurrent are the secret keys whose values the history does not
	// keep: each kept the connector's current value.
	KeptCurrent []string `json:"kept_current,omitempty"`
}

// LagHistory is the body of GET /sluice/connectors/{name}/lag/history: a
// sink connector's consumer lag per partition over its last 240 samples
// (the last hour at the default interval), as the leading coordinator
// sampled it.
type LagHistory struct {
	Connector string `json:"connector"`
	// IntervalMillis is how often the leader samples, in milliseconds
	// (15000 by default: 240 samples are an hour).
	IntervalMillis int64 `json:"interval_ms"`
	// Since is when the leader began sampling: a failover starts the
	// history anew.
	Since time.Time `json:"since"`
	// Partitions are sorted by topic and partition.
	Partitions []PartitionLagHistory `json:"partitions"`
	// Note says why the series are empty when they are for a reason (a
	// source connector has no consumer lag).
	Note string `json:"note,omitempty"`
}

// PartitionLagHistory is one partition's lag over time.
type PartitionLagHistory struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Samples are [unix milliseconds, lag] pairs, oldest first: at most
	// 240.
	Samples [][2]int64 `json:"samples"`
}
