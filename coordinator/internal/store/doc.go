// Package store keeps the coordinator's view of the config and status
// topics. ConfigState and StatusState are deterministic state machines fed
// one decoded record at a time through Apply (the only write path); reads
// return copies. ConfigStore and StatusStore pair a state with the Kafka log
// it follows and the producer that appends to it, and wait after each write
// until the write has been applied, which gives read-your-writes.
//
// Config records are built only by the typed commands of commands.go
// (CreateConnector, StopConnector, …) and written only by ConfigStore.Apply,
// one transaction per call, so Kafka Connect's ordering rules are kept in one
// place:
//
//	caller ─► Apply(cmds...) ─► validate ─► encode, in order ─► one transaction
//	       ─► follower applies each record to ConfigState ─► Apply returns
package store
