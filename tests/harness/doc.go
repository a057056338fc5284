// Package harness runs a Sluice cluster inside a test: an embedded NATS
// server, a Kafka broker (an embedded kfake, or the Apache Kafka broker named
// by SLUICE_TEST_KAFKA), one coordinator and agents — real processes' worth
// of code talking real protocols, with no mocks. Every cluster gets its own
// topic names and, unless Options.GroupID names one, its own group id, so
// tests can share one real broker; Options.Backends lets several clusters of
// one test share a NATS server and a broker too.
//
// Tests call harness.Start, drive the REST API with the helpers here, and
// poll with Eventually rather than sleeping.
package harness
