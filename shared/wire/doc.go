// Package wire is the coordinator↔agent contract: the NATS subjects (one
// table, Subjects), the messages they carry, the protocol level both sides
// check (ProtocolLevel), the leader lease agents read, and the liveness
// records agents write to Kafka. The REST API's entities and the error type
// that crosses a process boundary are module github.com/sluice-io/sluice/api.
//
// Messages are changed by adding new ones, never by editing an existing
// one; a change that a process of the previous level would misread raises
// ProtocolLevel. Every request type validates itself (Validate), and its
// receiver runs that before anything else.
package wire
