package api

// MigrationRequest is the body of POST /sluice/migrations: connectors of
// a Kafka Connect cluster that the coordinator reads and moves into
// Sluice with their positions (docs/operations.md, "Migrating from Kafka
// Connect").
type MigrationRequest struct {
	// URL is the Kafka Connect REST URL; the coordinator reads it only
	// when one of its --migrate-allow-url flags names it.
	URL string `json:"url"`
	// Connectors is a glob (path.Match: * ? [a-z]) of the Kafka Connect
	// connectors to migrate; empty: "*", every one.
	Connectors string `json:"connectors,omitempty"`
	// LeaveStopped creates the connectors STOPPED in Sluice, whatever
	// their state was on Kafka Connect.
	LeaveStopped bool `json:"leave_stopped,omitempty"`
	// DeleteSource deletes each connector on Kafka Connect once Sluice has
	// created it.
	DeleteSource bool `json:"delete_source,omitempty"`
	// StopTimeout is how long each connector may take to stop on Kafka
	// Connect, a Go duration (empty: 2m; at most 10m).
	StopTimeout string `json:"stop_timeout,omitempty"`
	// User and Password are HTTP Basic credentials for Kafka Connect,
	// when it asks for some. The caller's own credentials are never sent
	// there.
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
	// DryRun checks and answers the plan, changing nothing on either
	// side, as the dry_run query parameter does.
	DryRun bool `json:"dry_run,omitempty"`
}

// MigrationResult is the answer of POST /sluice/migrations.
type MigrationResult struct {
	// DryRun: nothing was changed on either side; Connectors is the plan.
	DryRun bool   `json:"dry_run"`
	URL    string `json:"url"`
	// Connectors are the connectors the glob matched, by name, each with
	// what became (or, in a dry run, would become) of it.
	Connectors []MigratedConnector `json:"connectors"`
}

// The results of a connector's migration (MigratedConnector.Result).
const (
	MigrationMigrated      = "migrated"
	MigrationDeletedSource = "migrated, deleted on the source"
	MigrationWouldMigrate  = "would migrate"
	MigrationNotMigrated   = "not migrated"
	MigrationFailed        = "failed"
)

// MigratedConnector is one connector of a migration.
type MigratedConnector struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Class string `json:"class"`
	// State is the state it is (or would be) created in, in Sluice.
	State string `json:"state"`
	// Result is one of the Migration… constants.
	Result string `json:"result"`
	// Step is the step that failed, for a failure; every step before it
	// stayed done, and a connector stopped on Kafka Connect was put back
	// as it was (Detail says so).
	Step   string `json:"step,omitempty"`
	Detail string `json:"detail,omitempty"`
	// OffsetsCount counts the positions carried (or that would be).
	OffsetsCount int `json:"offsets_count"`
	// Config and Offsets are, in a dry run, the config and the positions
	// the migration would carry (the positions as they are while the
	// connector runs there); left out otherwise.
	Config  map[string]string `json:"config,omitempty"`
	Offsets []ConnectorOffset `json:"offsets,omitempty"`
}
