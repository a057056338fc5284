// Package integration tests a whole Sluice cluster in one process — the
// coordinator and agents over embedded NATS, on kfake or (with
// SLUICE_TEST_KAFKA) Apache Kafka — through its REST API, as a user would.
package integration
