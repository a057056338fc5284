// Package store is everything the coordinator persists, and the one write
// path of what the leader writes. This comment is the list; each command's
// records are pinned in commands.go, statuscommands.go, fleet.go and
// fleetcommands.go.
//
// # The leader's logs: config, status, fleet
//
// Every coordinator follows three compacted topics into deterministic
// states fed one decoded record at a time (ConfigState, StatusState,
// FleetState; reads return copies). Only the leader writes them, only
// through sealed commands (Command: the interface's methods are unexported,
// so no other package can make a record), and only through one call:
//
//	caller ─► Stores.Apply(ctx, cmds...) ─► each command validates itself against
//	   the state (and the commands before it) and encodes its records ─► sizes checked
//	   ─► ONE transaction across the topics (the leader's writer, <group>-leader)
//	   ─► each topic's follower applies its records ─► Apply returns
//
// so what belongs together is all or nothing, for the leader and for every
// follower reading read_committed: opening a maintenance window holds its
// connectors and records the window in one transaction, a rollout step
// writes a connector's config and the rollout's progress in one. Every
// input that varies — a time, an id — is a field of a command: encoding
// reads no clock. ConfigStore.Apply and FleetStore.Apply are the same path
// for one topic; the status queue (package statusqueue) coalesces status
// commands' records (Record) and writes them through StatusStore.Write. Memory is the path without
// Kafka, for the controllers' tests.
//
//	config topic (Kafka Connect's format; config commands, commands.go)
//	  CreateConnector     [target-state-<name>], connector-<name>
//	  PutConnectorConfig  connector-<name>
//	  SetTargetState      target-state-<name>
//	  PutTaskConfigs      task-<name>-<i>…, commit-<name>
//	  StopConnector       commit-<name> {"tasks":0}, target-state-<name> STOPPED
//	  DeleteConnector     connector-<name> (null), target-state-<name> (null)
//	  PutFencingCount     tasks-fencing-<name>
//	  SetLoggerLevel      logger-cluster-<namespace>
//	  MarkSigning         sluice-signing-since
//
//	status topic (Kafka Connect's format; statuscommands.go)
//	  PutConnectorStatus     status-connector-<name>
//	  DeleteConnectorStatus  status-connector-<name> (null)
//	  PutTaskStatus          status-task-<name>-<i> (with the assignment's generation)
//	  MarkTopicUse           status-topic-<topic>:connector-<name> (KIP-558)
//
//	fleet topic (Sluice's; JSON of the store's own types, fleetmodel.go)
//	  MarkAgent           agent-<id>: cordoned or draining (active: null)
//	  MarkTopic/ForgetTopic  topic-<name>: a topic Sluice relies on
//	  PutRebalance        rebalance: the rebalance and its moves (nil: null)
//	  OpenWindow/CloseWindow  maintenance-<id>: an open window (closed: null)
//	  StartRollout, PauseRollout, ResumeRollout, AbortRollout, StartBatch,
//	  ApplyConnector, BeginVerify, MarkHealthy, SkipConnectors, AdvanceBatch,
//	  FailBatch, RollBackConnector, RollBackBatch, FinishRollout,
//	  FinishRollBack, DeleteRollout
//	                      rollout-<id>: a rollout and its progress, each
//	                      transition checking the state it starts from
//	                      (ErrStale otherwise)
//	  StartAgentRoll, PauseAgentRoll, ResumeAgentRoll, AbortAgentRoll,
//	  DrainRollBatch, RollAgentDrained, RollAgentGone, RollAgentRestarted,
//	  RollAgentDone, FailAgentRoll, DeleteAgentRoll
//	                      agentroll-<id>: a rolling restart of agents and
//	                      each agent's step (agentrollcommands.go), a step
//	                      that drains or uncordons written with MarkAgent
//
// Fleet records are the store's types, not the REST API's: the herder and
// the controllers convert them at the edge, so a REST field never changes
// a stored record. Their JSON is the one earlier versions wrote (api/v1's
// field names), so an existing fleet topic is read as it is.
//
// # Logs written outside the leader's path
//
// Two logs are written by whichever coordinator takes a request, leader or
// not, and must keep working without a leader; they are appends, not
// states, each in a package of its own:
//
//	offsets history topic (offsethistory): one entry per change of a
//	  connector's positions — pending record(s) before the change, then an
//	  applied or failed marker (key: the connector); a pending entry is
//	  resolved by the leader at start-up.
//	audit topic (audit): one record per REST write (key: the connector,
//	  or empty), produced without holding the answer back for long.
//
// A third is the leader's, but outside this path too:
//
//	config history topic (confighistory): one entry per change of a
//	  connector's config (key: the connector), appended once the config
//	  transaction committed, not in it.
//
// The offsets topics themselves (the cluster's and connectors' own) are
// Kafka Connect's: the tasks write them, under their own transactional
// ids, and an offsets operation has an agent write them (the leader sends
// it the records);
// no coordinator state follows them through this package.
//
// Records of every log are signed by the writing coordinator when record
// signing is on (recordsig), and a follower applies no record no
// coordinator wrote.
package store
