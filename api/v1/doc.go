// Package v1 is Sluice's wire contract, version 1: the Kafka Connect REST
// entities the coordinator serves, the NATS subjects and messages the
// coordinator and agents exchange, and the one error type that crosses a
// process boundary.
//
// It imports only the standard library so that clients, the coordinator and
// the agents can all depend on it while none depends on another. Messages are
// changed by adding new ones, never by editing an existing one.
package v1
