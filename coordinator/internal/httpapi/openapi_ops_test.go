package httpapi

// What the OpenAPI document says of each operation beyond the route table:
// its summary, query parameters, body, answers with examples (Go values,
// whose types give the schemas), and the error statuses its decoder and
// service give (routeErrorStatuses adds those every route of its kind
// gives).

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/confighistory"
)

// opDoc documents one operation of routes().
type opDoc struct {
	summary, desc string
	query         []queryParam
	// body is an example request body; its type is the body's schema.
	// nil: the operation reads no body.
	body any
	// bodySchema is a body without a Go type of its own, and without an
	// example; it is optional.
	bodySchema map[string]any
	ok         []okAnswer
	// errs are the error statuses of the operation's own checks and
	// service.
	errs []int
	// reason: the operation records X-Sluice-Reason in the offsets
	// history.
	reason bool
}

// queryParam is one query parameter.
type queryParam struct {
	name, desc string
	schema     map[string]any
}

// okAnswer is one success answer.
type okAnswer struct {
	status int
	desc   string
	// example is the body; its type the schema. nil: no body.
	example any
	// named are examples of a oneOf answer, each of a type of alts.
	named map[string]any
	alts  []any
	// text: the body is text/plain, example a string.
	text bool
	// location: the answer has a Location header.
	location bool
	// raw is a schema for an answer without a Go type (the document).
	raw map[string]any
}

func qBool(name, desc string) queryParam {
	return queryParam{name, desc, map[string]any{"type": "boolean"}}
}

func qString(name, desc string) queryParam {
	return queryParam{name, desc, map[string]any{"type": "string"}}
}

func qInt(name, desc string, lo, hi int) queryParam {
	return queryParam{name, desc, map[string]any{"type": "integer", "minimum": lo, "maximum": hi}}
}

func strp(s string) *string { return &s }

func int64p(n int64) *int64 { return &n }

// exFileSource is the file source connector's class.
const exFileSource = "org.apache.kafka.connect.file.FileStreamSourceConnector"

// The examples' values.
var (
	exTime   = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	exConfig = map[string]string{"connector.class": exFileSource, "file": "/data/orders.txt", "name": "orders-src", "tasks.max": "1", "topic": "orders"}
	exInfo   = api.ConnectorInfo{Name: "orders-src", Config: exConfig, Tasks: []api.ConnectorTaskID{{Connector: "orders-src", Task: 0}}, Type: api.TypeSource}
	exTask   = api.TaskState{ID: 0, State: api.StateRunning, WorkerID: "agent-1"}
	exState  = api.ConnectorStateInfo{Name: "orders-src", Connector: api.ConnectorState{State: api.StateRunning, WorkerID: "agent-1"},
		Tasks: []api.TaskState{exTask}, Type: api.TypeSource}
	exOffsets = api.ConnectorOffsets{Offsets: []api.ConnectorOffset{{
		Partition: map[string]any{"filename": "/data/orders.txt"}, Offset: map[string]any{"position": 30.0}}}}
	exChanges = api.OffsetsChanges{Changes: []api.OffsetChange{{
		Partition: map[string]any{"kafka_topic": "orders", "kafka_partition": 0.0},
		From:      map[string]any{"kafka_offset": 120.0}, To: map[string]any{"kafka_offset": 0.0}}},
		HistoryID: "1796119200123-c98a176d316d2399"}
	exEntry = api.OffsetsHistoryEntry{ID: "1796119200123-c98a176d316d2399", Time: exTime, Connector: "orders-sink", Type: api.TypeSink,
		Group: "connect-orders-sink", Operation: api.HistoryResetTo, Detail: "to=earliest", Principal: "ada",
		State: api.HistoryApplied, Changes: exChanges.Changes}
	exConfigEntry = api.ConfigHistoryEntry{ConfigHistorySummary: api.ConfigHistorySummary{ID: "1796119200123-c98a176d316d2399", Time: exTime,
		Connector: "orders-src", Operation: api.ConfigPatch, Principal: "ada", Diff: api.ConfigDiff{Added: []string{}, Removed: []string{}, Changed: []string{"tasks.max"}}},
		Before: map[string]string{"connector.class": exFileSource, "name": "orders-src", "tasks.max": "1"},
		After:  map[string]string{"connector.class": exFileSource, "name": "orders-src", "tasks.max": "2"}}
	exLagHistory = api.LagHistory{Connector: "orders-sink", IntervalMillis: 15000, Since: exTime, Partitions: []api.PartitionLagHistory{
		{Topic: "orders", Partition: 0, Samples: [][2]int64{{1796119200000, 420}, {1796119215000, 380}}}}}
	exAgent = api.AgentInfo{ID: "agent-1", Labels: map[string]string{"zone": "a"}, Version: "0.4.0",
		Plugins: []string{exFileSource}, State: api.AgentCordoned, Cordon: &api.AgentCordon{Origin: api.CordonOperator, Principal: "otto", Since: exTime}, Registered: true, LeaseExpires: exTime, StartedAt: exTime,
		Tasks: []api.AgentTask{{Connector: "orders-src", Task: 0, State: api.StateRunning}}}
	exDrain = api.DrainStatus{Agent: "agent-1", State: api.DrainRunning, StartedAt: exTime, Origin: api.CordonPreStop,
		Remaining: []api.TaskID{{Connector: "orders-src", Task: 0}}, Moving: []api.TaskID{{Connector: "orders-src", Task: 0}},
		Moved: 2, Blocked: []api.BlockedTask{}}
	exRebalance = api.Rebalance{ID: "r-1", State: "running", MaxMoves: 4,
		Moves:  []api.TaskMove{{Connector: "orders-src", Task: 0, From: "agent-1", To: "agent-2", State: "moving"}},
		Before: map[string]int{"agent-1": 4, "agent-2": 0}, After: map[string]int{"agent-1": 2, "agent-2": 2}}
	exSelector = api.Selector{Match: "orders-*"}
	exWindow   = api.MaintenanceWindow{ID: "w-1", Selector: exSelector, State: api.StateStopped, Reason: "broker upgrade",
		Principal: "otto", OpenedAt: exTime, Connectors: []api.MaintenanceConnector{{Name: "orders-src", Previous: api.StateRunning}}}
	exRolloutReq = api.RolloutRequest{Selector: exSelector, Patch: map[string]*string{"batch.size": strp("500"), "old.key": nil},
		Batches: []json.RawMessage{json.RawMessage("1"), json.RawMessage(`"25%"`), json.RawMessage(`"rest"`)},
		Health:  api.RolloutHealth{RunningFor: "30s", MaxFailedTasks: 0}, OnFailure: "pause"}
	exRollout = api.Rollout{ID: "ro-1", State: api.RolloutRunning, Request: exRolloutReq, Principal: "otto", CreatedAt: exTime, UpdatedAt: exTime,
		Batches: []api.RolloutBatch{{State: api.BatchVerifying, VerifyingSince: exTime, Connectors: []api.RolloutConnector{{
			Name: "orders-src", Before: map[string]string{"batch.size": "100"}, After: map[string]string{"batch.size": "500"},
			WasRunning: true, State: "applied"}}}}}
	exAgentRoll = api.AgentRoll{ID: "ar-1", State: api.AgentRollRunning, Request: api.AgentRollRequest{Agents: []string{"agent-1", "agent-2"}, BatchSize: 1, Timeout: "10m0s"},
		Principal: "ada", CreatedAt: exTime, UpdatedAt: exTime, Batch: 1,
		Progress: api.AgentRollProgress{Done: 1, Total: 2, Current: []api.RollCurrent{{Agent: "agent-2", Step: api.RollWaitingRestart}}},
		Agents: []api.RolledAgent{
			{ID: "agent-1", Batch: 0, Step: api.RollDone, Since: exTime, StartedAt: exTime, RestartedAt: exTime, Version: "0.2.0", Moved: 3, FinishedAt: exTime},
			{ID: "agent-2", Batch: 1, Step: api.RollWaitingRestart, Since: exTime, StartedAt: exTime, Moved: 2}}}
	exMove = api.MoveResult{From: "orders-src", To: "orders-src-v2", Config: exConfig, TargetState: api.StateRunning,
		Offsets: exOffsets.Offsets, Steps: []api.MoveStep{{Step: "stop", State: "done"}, {Step: "create", State: "done"}, {Step: "delete", State: "done"}},
		HistoryID: "1796119200123-c98a176d316d2399"}
	exAudit = api.AuditLog{Records: []api.AuditRecord{{Time: exTime, Principal: "otto", Source: "10.0.0.7:51234", Coordinator: "coordinator-1:8083",
		Operation: "connector.pause", Method: http.MethodPut, Path: "/connectors/orders-src/pause", Connector: "orders-src",
		Before: &api.AuditState{Config: exConfig, TargetState: api.StateRunning}, After: &api.AuditState{Config: exConfig, TargetState: api.StatePaused},
		Status: http.StatusAccepted}}}
)

// exFleet is a page of the fleet listing.
var exFleet = api.FleetConnectors{Total: 2, Limit: api.DefaultFleetLimit, Connectors: []api.FleetConnector{
	{Name: "orders-sink", Type: api.TypeSink, Class: "org.apache.kafka.connect.file.FileStreamSinkConnector", Version: "0.4.0",
		State: api.StateRunning, Health: api.HealthDegraded, Reason: "1 of 2 tasks FAILED: task 1: java.io.IOException: disk full", TasksRunning: 1, TasksTotal: 2,
		Agents: []string{"agent-1"}, Labels: map[string]string{"team": "orders"}, SinkLag: int64p(120000), SinkLagAt: &exTime, Changed: &exTime},
	{Name: "orders-src", Type: api.TypeSource, Class: exFileSource, Version: "0.4.0", State: api.StateRunning, Health: api.HealthHealthy,
		Reason: "1 of 1 tasks RUNNING", TasksRunning: 1, TasksTotal: 1, Agents: []string{"agent-2"}, Labels: map[string]string{"team": "orders"}, Changed: &exTime}},
	Counts: api.FleetCounts{Health: map[string]int{api.HealthDegraded: 1, api.HealthHealthy: 1, api.HealthStopped: 1},
		State: map[string]int{api.StateRunning: 2, api.StateStopped: 1}, Type: map[string]int{api.TypeSink: 1, api.TypeSource: 2}}}

// The dry_run parameter of Sluice's offsets operations, and the body of a
// validate.
var (
	qDryRun    = qBool("dry_run", "true: change nothing, answer what would change (only true or false are taken).")
	exValidate = map[string]string{"connector.class": exFileSource}
)

// opDocs documents every operation of routes(), by op.
var opDocs = map[string]opDoc{
	"server_info": {summary: "Server version and Kafka cluster", desc: "version is the Kafka Connect REST level Sluice implements, in Kafka's X.Y.Z form (clients such as kcctl gate commands on it); Sluice's own release version is in the X-Sluice-Version header (the body keeps exactly Kafka Connect's keys).",
		ok: []okAnswer{{status: 200, desc: "The Kafka Connect version, Sluice's commit, the Kafka cluster id and Sluice's version.",
			example: api.ServerInfo{Version: api.KafkaConnectVersion, Commit: "0e62f1b", KafkaClusterID: "q1Sh-9_ISia_zwGINzRvyQ"}}}},
	"health": {summary: "Health (KIP-1017)", desc: "Answered at once by any coordinator, also while it starts.", ok: []okAnswer{
		{status: 200, desc: "Healthy.", example: api.Health{Status: "healthy", Message: "Worker has completed startup and is ready to handle requests.", Role: "leader", Leader: "coordinator-1:8083"}},
		{status: 500, desc: "Unable to answer in time.", example: api.Health{Status: "unhealthy", Message: "Worker was unable to handle this request and may be unable to handle other requests."}},
		{status: 503, desc: "Still starting.", example: api.Health{Status: "starting", Message: "Worker is still starting up."}}}},
	"readyz": {summary: "Readiness", desc: "200 once the coordinator started, knows the leader and read its topics to their end; 503 with the reason otherwise. Answered at once by any coordinator.",
		ok: []okAnswer{{status: 200, desc: "Ready.", example: api.Readiness{Status: "ready", Role: "follower", Leader: "coordinator-1:8083",
			Checks: []api.HealthCheck{{Name: "started", OK: true, Required: true}, {Name: "kafka", OK: true, Required: true}, {Name: "nats", OK: true}}}}},
		errs: []int{503}},
	"metrics": {summary: "Prometheus metrics", desc: "Every series of the process, in the exposition format the Accept header asks for (text by default).",
		ok: []okAnswer{{status: 200, desc: "The metrics.", text: true, example: "# HELP sluice_connectors Connectors by state.\n# TYPE sluice_connectors gauge\nsluice_connectors{state=\"RUNNING\"} 3\n"}}},
	"openapi": {summary: "This OpenAPI document", desc: "Any coordinator answers it, also while it starts; it is never forwarded to the leader. Open without credentials exactly where the probes are (--rest-auth-open-probes).",
		ok: []okAnswer{{status: 200, desc: "The OpenAPI 3.1 document of the REST API.", raw: map[string]any{"type": "object", "description": "An OpenAPI 3.1 document."}}}},

	"list_connectors": {summary: "List connectors", desc: "Without expand, the names; with any expand parameter, a map by name. A caller sees only the connectors its grants let it view.",
		query: []queryParam{qString("expand", "status and/or info (repeat the parameter for both); other values are ignored.")},
		ok: []okAnswer{{status: 200, desc: "The connectors.", alts: []any{[]string{}, map[string]api.ConnectorExpanded{}},
			named: map[string]any{"names": []string{"orders-src", "orders-sink"},
				"expanded": map[string]api.ConnectorExpanded{"orders-src": {Status: &exState, Info: &exInfo}}}}}},
	"create_connector": {summary: "Create a connector", desc: "initial_state (KIP-980) and initial_offsets (KIP-995) are optional.",
		body: api.CreateConnectorRequest{Name: "orders-src", Config: exConfig, InitialState: api.StateStopped, InitialOffsets: exOffsets.Offsets},
		ok: []okAnswer{{status: 201, desc: "Created.", location: true, example: api.CreatedConnector{ConnectorInfo: exInfo,
			OffsetsStatus: &api.Message{Message: "The offsets for this connector have been altered successfully"}}}},
		errs: []int{409}, reason: true},
	"get_connector":        {summary: "Get a connector's config and tasks", ok: []okAnswer{{status: 200, desc: "The connector.", example: exInfo}}, errs: []int{404}},
	"delete_connector":     {summary: "Delete a connector", query: []queryParam{qBool("reset_offsets", "true: reset its offsets too, with DELETE …/offsets's checks.")}, ok: []okAnswer{{status: 204, desc: "Deleted."}}, errs: []int{404}, reason: true},
	"get_connector_config": {summary: "Get a connector's config", ok: []okAnswer{{status: 200, desc: "The config.", example: exConfig}}, errs: []int{404}},
	"put_connector_config": {summary: "Create or replace a connector's config", body: exConfig,
		ok: []okAnswer{{status: 200, desc: "Replaced.", example: exInfo}, {status: 201, desc: "Created.", location: true, example: exInfo}}},
	"patch_connector_config": {summary: "Merge into a connector's config (KIP-477)", desc: "A null value removes the key.",
		body: map[string]*string{"tasks.max": strp("2"), "old.key": nil}, ok: []okAnswer{{status: 200, desc: "The connector after the change.", example: exInfo}}, errs: []int{404}},
	"connector_status": {summary: "A connector's status", ok: []okAnswer{{status: 200, desc: "The status.", example: exState}}, errs: []int{404}},
	"task_configs": {summary: "A connector's task configs", ok: []okAnswer{{status: 200, desc: "The tasks.",
		example: []api.TaskInfo{{ID: api.ConnectorTaskID{Connector: "orders-src", Task: 0}, Config: map[string]string{"task.class": "org.apache.kafka.connect.file.FileStreamSourceTask", "file": "/data/orders.txt", "topic": "orders"}}}}}, errs: []int{404}},
	"task_status":      {summary: "A task's status", ok: []okAnswer{{status: 200, desc: "The task's status.", example: exTask}}, errs: []int{404}},
	"restart_task":     {summary: "Restart a task", ok: []okAnswer{{status: 204, desc: "Restarted."}}, errs: []int{404}},
	"stop_connector":   {summary: "Stop a connector (KIP-875)", desc: "Its tasks are stopped and its task configs emptied; offsets may then be changed.", ok: []okAnswer{{status: 204, desc: "Stopped."}}, errs: []int{404}},
	"pause_connector":  {summary: "Pause a connector", ok: []okAnswer{{status: 202, desc: "Target state PAUSED written."}}, errs: []int{404}},
	"resume_connector": {summary: "Resume a connector", ok: []okAnswer{{status: 202, desc: "Target state RUNNING written."}}, errs: []int{404}},
	"restart_connector": {summary: "Restart a connector (and its tasks)",
		query: []queryParam{qBool("includeTasks", "Restart its tasks too."), qBool("onlyFailed", "Restart only the failed instances.")},
		ok: []okAnswer{{status: 202, desc: "With either flag: the status shown, instances to restart RESTARTING.", example: exState},
			{status: 204, desc: "Without flags: the connector restarted."}},
		errs: []int{404}},
	"connector_topics": {summary: "A connector's active topics (KIP-558)", desc: "Answered for any name, known or not, as Kafka Connect 4.4 does: a deleted connector's topics may still be recorded.",
		ok: []okAnswer{{status: 200, desc: "The topics, under the connector's name.", example: map[string]api.ActiveTopics{"orders-src": {Topics: []string{"orders"}}}}}},
	"reset_connector_topics": {summary: "Reset a connector's active topics", desc: "For any name, known or not, as Kafka Connect 4.4 does.", ok: []okAnswer{{status: 202, desc: "Reset."}}},

	"get_offsets": {summary: "A connector's offsets (KIP-875)", ok: []okAnswer{{status: 200, desc: "The offsets.", example: exOffsets}}, errs: []int{404}},
	"alter_offsets": {summary: "Alter a stopped connector's offsets", desc: "Only the partitions listed change; \"offset\": null removes one. At most 10000 entries.",
		body: exOffsets, ok: []okAnswer{{status: 200, desc: "Altered.", example: api.Message{Message: "The offsets for this connector have been altered successfully"}}},
		errs: []int{404}, reason: true},
	"reset_offsets": {summary: "Reset a stopped connector's offsets", ok: []okAnswer{{status: 200, desc: "Reset.",
		example: api.Message{Message: "The offsets for this connector have been reset successfully"}}}, errs: []int{404}, reason: true},

	"list_plugins": {summary: "List the plugins the live agents run",
		query: []queryParam{qBool("connectorsOnly", "false: converters and transforms too (default true).")},
		ok:    []okAnswer{{status: 200, desc: "The plugins.", example: []api.PluginInfo{{Class: exFileSource, Type: api.TypeSource, Version: "0.4.0"}}}}},
	"plugin_config": {summary: "A plugin's config keys",
		query: []queryParam{qString("version", "The plugin's version (KIP-891): a version, a Maven version range or latest; default the version a connector config naming no version runs. 400 when no version meets it.")},
		ok: []okAnswer{{status: 200, desc: "The keys.", example: []api.ConfigKeyInfo{{Name: "file", Type: "STRING",
			Required: true, Importance: "HIGH", Documentation: "Source filename.", Width: "NONE", DisplayName: "file", Dependents: []string{}}}}}, errs: []int{404}},
	"validate_config": {summary: "Validate a config", body: exValidate, ok: []okAnswer{{status: 200, desc: "The validation; error_count > 0 for an invalid config.",
		example: api.ConfigInfos{Name: exFileSource, ErrorCount: 1, Groups: []string{"Common"}, Configs: []api.ConfigInfo{{
			Definition: api.ConfigKeyInfo{Name: "file", Type: "STRING", Required: true, Importance: "HIGH", Documentation: "Source filename.", Width: "NONE", DisplayName: "file", Dependents: []string{}},
			Value:      api.ConfigValueInfo{Name: "file", RecommendedValues: []string{}, Errors: []string{`Missing required configuration "file" which has no default value.`}, Visible: true}}}}}}},

	"list_loggers": {summary: "Log levels of this coordinator's loggers (KIP-495)",
		ok: []okAnswer{{status: 200, desc: "Every logger that is not OFF.", example: map[string]api.LoggerLevel{"root": {Level: "INFO"}, "io.sluice.coordinator.rest": {Level: "DEBUG", LastModified: int64p(1796119200123)}}}}},
	"get_logger": {summary: "A logger's level", ok: []okAnswer{{status: 200, desc: "Its level.", example: api.LoggerLevel{Level: "INFO"}}}, errs: []int{404}},
	"set_logger_level": {summary: "Set a logger's level (KIP-976)", desc: "Worker scope (default): this coordinator, answered by it. Cluster scope: every coordinator and agent, forwarded to the leader. Other members of the body are ignored.",
		query: []queryParam{qString("scope", "cluster for the whole cluster; anything else is the worker scope.")},
		body:  map[string]string{"level": "DEBUG"},
		ok: []okAnswer{{status: 200, desc: "Worker scope: the loggers whose level changed, sorted.", example: []string{"io.sluice.coordinator", "io.sluice.coordinator.rest"}},
			{status: 204, desc: "Cluster scope: set everywhere."}},
		errs: []int{404}},

	"audit_log": {summary: "The audit trail of REST writes", desc: "Newest first; a caller sees the records of the connectors its admin grants cover.",
		query: []queryParam{qString("connector", "Only this connector's records."), qString("principal", "Only this caller's records."),
			qString("operation", "Only records of this operation (connector.create), or of those a glob matches (offsets.*)."),
			qString("since", "Only records from this time on: RFC 3339 time, or a duration back from now (90s, 1h, 7d)."),
			qString("until", "Only records from before this time, in the same forms: the oldest record's time pages back."),
			qInt("limit", "How many records at most (default 100).", 1, 10000)},
		ok: []okAnswer{{status: 200, desc: "The records.", example: exAudit}}},
	"fleet_connectors": {summary: "The fleet: every connector with its derived health",
		desc: "The connectors the caller may view, each with its health (healthy, degraded, failed, paused, stopped or unassigned) and the reason (docs/console.md, \"Health\"), built from this coordinator's view without reading Kafka or an agent: any coordinator answers. sink_lag is the last lag this coordinator read of a sink (null until it read one). Filters combine; counts are over every connector the caller may view, before the filters.",
		query: []queryParam{qString("q", "Only names holding this, in any case."),
			qString("state", "Only these states, comma-separated: RUNNING, PAUSED, STOPPED, FAILED, RESTARTING, UNASSIGNED."),
			qString("health", "Only these healths, comma-separated: failed, degraded, unassigned, paused, stopped, healthy."),
			qString("type", "Only these types, comma-separated: source, sink, unknown."),
			qString("agent", "Only connectors with a task on this agent."),
			qString("plugin", "Only this plugin: its class, simple name or alias, in any case."),
			qString("label", "key=value: only connectors whose sluice.labels hold it; repeat for more (all must hold)."),
			qString("sort", "attention (default: failed, degraded, unassigned, paused, stopped, healthy, then name), name, or changed (latest first)."),
			qInt("offset", "Rows to skip.", 0, 1<<31-1), qInt("limit", "Rows at most (default 50).", 1, api.MaxFleetLimit)},
		ok: []okAnswer{{status: 200, desc: "A page of the filtered, sorted rows, their total and the fleet's counts.", example: exFleet}}},
	"migrate": {summary: "Migrate connectors from a Kafka Connect cluster, with their positions",
		desc:  "The coordinator reads the Kafka Connect REST URL itself, only when one of its --migrate-allow-url flags names it (403 otherwise), with the body's credentials (never the caller's) and without following redirects. Each connector the glob matches, by name: checked (a plugin, a free name, a config that validates), stopped on Kafka Connect, its offsets read, created in Sluice at them in its state (POST /connectors's create), and with delete_source deleted there. A failure names its step; earlier steps stay done, and a connector stopped on Kafka Connect is put back as it was. dry_run=true checks and answers the plan with each connector's config and offsets, changing nothing on either side. Each connector's name must be one the caller's admin grants cover. 404: no connector there matches; 502: Kafka Connect did not list its connectors.",
		query: []queryParam{qDryRun},
		body:  api.MigrationRequest{URL: "http://connect-1:8083", Connectors: "orders-*", StopTimeout: "2m"},
		ok: []okAnswer{{status: 200, desc: "What became of each connector (dry run: would become, with its config and offsets).", example: api.MigrationResult{URL: "http://connect-1:8083",
			Connectors: []api.MigratedConnector{
				{Name: "orders-sink", Type: api.TypeSink, Class: "org.apache.kafka.connect.file.FileStreamSinkConnector", State: api.StateRunning, Result: api.MigrationMigrated, OffsetsCount: 3},
				{Name: "orders-src", Type: api.TypeSource, Class: exFileSource, State: api.StateRunning, Result: api.MigrationFailed, Step: "create in Sluice",
					Detail: "create in Sluice: create orders-src: the connector orders-src already exists; put back to RUNNING on Kafka Connect"}}}}},
		errs: []int{403, 404}},
	"bulk_pause":   bulkDoc("pause"),
	"bulk_resume":  bulkDoc("resume"),
	"bulk_stop":    bulkDoc("stop"),
	"bulk_restart": bulkDoc("restart"),
	"open_maintenance": {summary: "Open a maintenance window", desc: "Records each selected connector's target state, then stops or pauses it.",
		body: api.MaintenanceRequest{Selector: exSelector, State: api.StateStopped, Reason: "broker upgrade"},
		ok:   []okAnswer{{status: 201, desc: "Opened.", example: exWindow}}, errs: []int{404, 409}},
	"list_maintenance": {summary: "Open maintenance windows", ok: []okAnswer{{status: 200, desc: "Oldest first; those whose every connector the caller may view.",
		example: api.MaintenanceList{Windows: []api.MaintenanceWindow{exWindow}}}}},
	"get_maintenance": {summary: "A maintenance window", ok: []okAnswer{{status: 200, desc: "The window.", example: exWindow}}, errs: []int{404}},
	"close_maintenance": {summary: "Close a maintenance window", desc: "Puts back each connector's previous state, unless it was changed during the window.",
		ok: []okAnswer{{status: 200, desc: "The window, each connector with its outcome.", example: api.MaintenanceWindow{ID: "w-1", Selector: exSelector,
			State: api.StateStopped, Principal: "otto", OpenedAt: exTime, Connectors: []api.MaintenanceConnector{{Name: "orders-src", Previous: api.StateRunning,
				Outcome: "restored", State: api.StateRunning}}}}}, errs: []int{404}},
	"connector_lag": {summary: "A sink connector's consumer lag", ok: []okAnswer{{status: 200, desc: "The lag per partition.",
		example: api.ConnectorLag{Connector: "orders-sink", TotalLag: 42, Partitions: []api.PartitionLag{{Topic: "orders", Partition: 0, EndOffset: 142, CommittedOffset: 100, Lag: 42}}}}},
		errs: []int{404}},
	"connector_lag_history": {summary: "A sink connector's consumer lag over the last hour",
		desc: "Sampled by the leading coordinator every 15 s (--lag-history-interval), the newest 240 samples of each partition; a failover starts it anew (since). A source connector's series are empty, with a note.",
		ok:   []okAnswer{{status: 200, desc: "Each partition's [unix milliseconds, lag] samples, oldest first.", example: exLagHistory}}, errs: []int{404}},
	"connector_gauges": {summary: "The gauges a connector's tasks report of themselves",
		desc: "A replication slot's lag, a snapshot's progress: what each task reports, read by the leader from the task's agent. The agents' /metrics has the same values as sluice_connector_<name>. A task whose agent did not answer in time has an error instead of gauges.",
		ok: []okAnswer{{status: 200, desc: "Every task of the connector, by id.", example: api.ConnectorGauges{Connector: "orders-cdc", Tasks: []api.TaskGauges{
			{ID: 0, WorkerID: "agent-1", Gauges: []api.Gauge{
				{Name: "postgres_slot_lag_bytes", Help: "WAL between the server's current position and the slot's confirmed one.", Value: 16384},
				{Name: "postgres_snapshot_chunks", Help: "Chunks (page ranges) of a table's snapshot.", Labels: map[string]string{"table": "public.orders"}, Value: 40},
				{Name: "postgres_snapshot_chunks_done", Help: "Chunks of a table's snapshot read and emitted.", Labels: map[string]string{"table": "public.orders"}, Value: 12}}},
			{ID: 1, WorkerID: "agent-2", Gauges: []api.Gauge{}, Error: "agent agent-2: request on sluice.v3.sluice.agent.agent-2.gauges timed out"}}}}},
		errs: []int{404}},
	"send_signal": {summary: "Send a signal to a connector's running task",
		desc: "Debezium's execute-snapshot and stop-snapshot signals for the native PostgreSQL connector, which writes them to its signal table (signal.data.collection): its stream reads them there in order with the changes around them, as a row a user inserts. Handed to task 0 on its agent by the leader; the answer comes once the signal is written. An incremental snapshot it starts shows its progress in …/gauges.",
		body: api.ConnectorSignal{Type: "execute-snapshot", Data: json.RawMessage(`{"data-collections":["public.orders"],"type":"incremental"}`)},
		ok: []okAnswer{{status: 202, desc: "Written: the connector acts on it when its stream reaches it.",
			example: api.SignalSent{Connector: "orders-cdc", ID: "3f1c9a52-7d0e-4b8a-9c61-2a5e0f7b4d13", Type: "execute-snapshot", Task: 0, WorkerID: "agent-1"}}},
		errs: []int{400, 404, 409, 500, 503}},
	"preview_offsets": {summary: "Preview an offsets change", desc: "What PATCH (\"offsets\") or DELETE (\"reset\": true) …/offsets would change, with their checks; writes nothing.",
		body: api.OffsetsPreviewRequest{Reset: true}, ok: []okAnswer{{status: 200, desc: "The changes.", example: api.OffsetsChanges{DryRun: true, Changes: exChanges.Changes}}},
		errs: []int{404}},
	"reset_offsets_to": {summary: "Reset a stopped connector's positions by a rule", query: []queryParam{qDryRun},
		body: api.OffsetsResetRequest{To: api.ResetTimestamp, Timestamp: "2026-12-06T10:00:00Z", Topics: []string{"orders"}},
		ok:   []okAnswer{{status: 200, desc: "The changes made.", example: exChanges}}, errs: []int{404}, reason: true},
	"restore_offsets": {summary: "Write positions another connector's history recorded", query: []queryParam{qDryRun},
		body: api.OffsetsRestoreRequest{From: "orders-src-old", Entry: "1796119200123-c98a176d316d2399", Positions: "before"},
		ok:   []okAnswer{{status: 200, desc: "The changes made.", example: exChanges}}, errs: []int{404}, reason: true},
	"offsets_history": {summary: "A connector's offsets history", desc: "Every applied change of its positions, newest first (a deleted connector's too).",
		query: []queryParam{qInt("limit", "How many entries at most.", 1, maxHistoryLimit), qString("before", "Only entries older than this entry id.")},
		ok:    []okAnswer{{status: 200, desc: "The entries.", example: api.OffsetsHistory{Entries: []api.OffsetsHistoryEntry{exEntry}, More: true}}}},
	"offsets_history_entry": {summary: "One offsets history entry", ok: []okAnswer{{status: 200, desc: "The entry.", example: exEntry}}, errs: []int{404}},
	"undo_offsets": {summary: "Undo an offsets change", desc: "Puts the entry's from positions back on a stopped connector; 409 names the partitions that moved since, unless force.",
		query:      []queryParam{qBool("force", "Undo even where positions moved since (only true or false)."), qDryRun},
		bodySchema: map[string]any{"type": "object", "properties": map[string]any{"dry_run": map[string]any{"type": "boolean"}}, "description": "Optional; dry_run as the query parameter."},
		ok:         []okAnswer{{status: 200, desc: "The changes made.", example: exChanges}}, errs: []int{404, 409}, reason: true},
	"config_history": {summary: "A connector's config history",
		desc:  "Every accepted change of its config (create, put, patch, rollout, rollback, move, restore, delete), newest first, with the keys it added, removed and changed; the newest 100 entries of each connector, a deleted connector's too.",
		query: []queryParam{qInt("limit", "How many entries at most.", 1, confighistory.MaxLimit), qString("before", "Only entries older than this entry id.")},
		ok:    []okAnswer{{status: 200, desc: "The entries.", example: api.ConfigHistory{Entries: []api.ConfigHistorySummary{exConfigEntry.ConfigHistorySummary}, More: true}}}, errs: []int{404}},
	"config_history_entry": {summary: "One config history entry", desc: "The configs before and after the change; the values of PASSWORD keys read [hidden] (hidden names them).",
		ok: []okAnswer{{status: 200, desc: "The entry.", example: exConfigEntry}}, errs: []int{404}},
	"restore_config": {summary: "Restore the config one entry wrote",
		desc: "Writes the entry's after config as PUT /connectors/{name}/config does (validation, tenancy, audit), recorded as a restore; a hidden secret keeps the connector's current value. 409 for an entry that wrote no config or needs a secret the connector no longer has.",
		ok:   []okAnswer{{status: 200, desc: "The connector as restored.", example: api.ConfigRestoreResult{Connector: exInfo, Restored: "1796119200123-c98a176d316d2399", HistoryID: "1796119260456-0b1c2d3e4f5a6b7c"}}},
		errs: []int{404, 409}},
	"move_connector": {summary: "Move a connector to a new name with its positions", query: []queryParam{qDryRun},
		body: api.MoveRequest{To: "orders-src-v2", Config: map[string]string{"tasks.max": "2"}},
		ok:   []okAnswer{{status: 200, desc: "What was done.", example: exMove}}, errs: []int{404}, reason: true},

	"list_agents": {summary: "The agents", desc: "The leader's view; each agent's tasks are those the caller may view.",
		ok: []okAnswer{{status: 200, desc: "The agents.", example: api.AgentList{Agents: []api.AgentInfo{exAgent}}}}},
	"get_agent":      {summary: "An agent", ok: []okAnswer{{status: 200, desc: "The agent.", example: exAgent}}, errs: []int{404}},
	"cordon_agent":   {summary: "Cordon an agent: no new tasks", ok: []okAnswer{{status: 200, desc: "The agent.", example: exAgent}}, errs: []int{404}},
	"uncordon_agent": {summary: "Uncordon an agent", ok: []okAnswer{{status: 200, desc: "The agent.", example: exAgent}}, errs: []int{404}},
	"drain_agent": {summary: "Drain an agent: move its tasks away", query: []queryParam{qBool("force", "Unassign the tasks no other agent may run (only true or false)."),
		qString("origin", "Who drains it: operator (the default), or pre-stop for the agent's own pre-stop hook, whose drain is lifted once the agent registers again as a new process.")},
		ok: []okAnswer{{status: 202, desc: "Draining.", example: exDrain}}, errs: []int{404}},
	"drain_status": {summary: "An agent's drain", ok: []okAnswer{{status: 200, desc: "Its progress.", example: exDrain}}, errs: []int{404}},
	"rebalance": {summary: "Even out the agents' tasks",
		query: []queryParam{qInt("max_moves", "How many tasks move at a time.", 1, 1000), qDryRun},
		ok: []okAnswer{{status: 200, desc: "Dry run: the plan.", example: api.Rebalance{DryRun: true, State: "planned", MaxMoves: 4,
			Moves: []api.TaskMove{{Connector: "orders-src", Task: 0, From: "agent-1", To: "agent-2", State: "planned"}}, Before: exRebalance.Before, After: exRebalance.After}},
			{status: 202, desc: "Started.", example: exRebalance}}},
	"rebalance_status": {summary: "The last rebalance", ok: []okAnswer{{status: 200, desc: "Its progress.", example: exRebalance}}, errs: []int{404}},
	"create_rollout": {summary: "Start a health-gated config rollout", desc: "Merges the patch into each matched connector's config, batch by batch, each batch held to the health gate before the next.",
		body: exRolloutReq, query: []queryParam{qDryRun},
		ok: []okAnswer{{status: 200, desc: "Dry run: the rollout as it would be recorded, every patched config validated (state planned, no id); nothing is recorded.",
			example: api.Rollout{State: api.RolloutPlanned, Request: exRollout.Request, Principal: exRollout.Principal,
				CreatedAt: exRollout.CreatedAt, UpdatedAt: exRollout.CreatedAt, Batches: exRollout.Batches}},
			{status: 201, desc: "Started.", location: true, example: exRollout}}, errs: []int{404, 409}},
	"list_rollouts":  {summary: "Rollouts", ok: []okAnswer{{status: 200, desc: "Oldest first; those whose every connector the caller may view.", example: api.RolloutList{Rollouts: []api.Rollout{exRollout}}}}},
	"get_rollout":    {summary: "A rollout", ok: []okAnswer{{status: 200, desc: "The rollout.", example: exRollout}}, errs: []int{404}},
	"pause_rollout":  {summary: "Pause a rollout", ok: []okAnswer{{status: 200, desc: "The rollout.", example: exRollout}}, errs: []int{404, 409}},
	"resume_rollout": {summary: "Resume a rollout", ok: []okAnswer{{status: 200, desc: "The rollout.", example: exRollout}}, errs: []int{404, 409}},
	"abort_rollout":  {summary: "Abort a rollout", ok: []okAnswer{{status: 200, desc: "The rollout.", example: exRollout}}, errs: []int{404, 409}},

	"create_agent_roll": {summary: "Start a rolling restart of agents",
		desc: "The leader drains each agent in turn, waits until it registers again with a later started_at (someone else restarts it: the coordinator runs no command) and uncordons it, batch by batch.",
		body: exAgentRoll.Request, ok: []okAnswer{{status: 201, desc: "Started.", location: true, example: exAgentRoll}}, errs: []int{404, 409}},
	"list_agent_rolls":  {summary: "Agent rolls", ok: []okAnswer{{status: 200, desc: "Oldest first.", example: api.AgentRollList{Rolls: []api.AgentRoll{exAgentRoll}}}}},
	"get_agent_roll":    {summary: "An agent roll", ok: []okAnswer{{status: 200, desc: "The roll and its progress.", example: exAgentRoll}}, errs: []int{404}},
	"pause_agent_roll":  {summary: "Pause an agent roll", ok: []okAnswer{{status: 200, desc: "The roll.", example: exAgentRoll}}, errs: []int{404, 409}},
	"resume_agent_roll": {summary: "Resume an agent roll", ok: []okAnswer{{status: 200, desc: "The roll.", example: exAgentRoll}}, errs: []int{404, 409}},
	"abort_agent_roll":  {summary: "Abort an agent roll", ok: []okAnswer{{status: 200, desc: "The roll.", example: exAgentRoll}}, errs: []int{404, 409}},
}

// bulkDoc documents POST /sluice/connectors/{action}.
func bulkDoc(action string) opDoc {
	d := opDoc{summary: "Bulk " + action + " of the selected connectors",
		desc: "Each selected connector gets the single-connector call; its result is that call's status or error (a connector the caller's grants do not cover: its own 403, or counted in hidden).",
		body: api.BulkRequest{Selector: exSelector},
		ok: []okAnswer{{status: 200, desc: "Each connector's result.", example: api.BulkResults{Results: []api.BulkResult{
			{Connector: "orders-src", Status: http.StatusAccepted}, {Connector: "orders-x", Status: http.StatusNotFound, Message: "Unknown connector orders-x"}}}}}}
	if action == "restart" {
		d.query = []queryParam{qBool("includeTasks", "As POST /connectors/{name}/restart (only true or false)."), qBool("onlyFailed", "As POST /connectors/{name}/restart (only true or false).")}
	}
	return d
}
