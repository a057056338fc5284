// Package bench holds end-to-end benchmarks of a whole Sluice cluster (see
// tests/harness): on the embedded broker by default, on Apache Kafka when
// SLUICE_TEST_KAFKA names one.
package bench
