// Package store keeps the coordinator's view of the config and status
// topics. ConfigState and StatusState are deterministic state machines fed
// one decoded record at a time through Apply (the only write path); reads
// return copies. ConfigStore and StatusStore pair a state with the Kafka log
// it follows and the producer that appends to it, and wait after each write
// until the write has been applied, which gives read-your-writes.
package store
