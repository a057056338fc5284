// Package v1 is Sluice's wire contract, version 1: the Kafka Connect REST
// entities the coordinator serves, the NATS subjects and messages the
// coordinator and agents exchange, and the one error type that crosses a
// process boundary. The NATS subjects are of protocol version 2
// (SubjectPrefix), which added the group id to every subject; the messages
// did not change, and keep this package and their Type names.
//
// It imports only the standard library so that clients, the coordinator and
// the agents can all depend on it while none depends on another. Messages are
// changed by adding new ones, never by editing an existing one.
package wire
