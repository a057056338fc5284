// Package bench holds end-to-end benchmarks of a whole Sluice cluster, run
// with the test kit (sluicetest and sluicetest/procs): on the embedded
// broker by default, on Apache Kafka when SLUICE_TEST_KAFKA names one.
package bench
