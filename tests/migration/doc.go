// Package migration tests `sluice migrate` against a real Apache Kafka
// Connect 4.4 worker: connectors created there, half-way through their
// work, are migrated into a Sluice on the same broker, which must go on
// exactly where Kafka Connect stopped. `make conformance`
// (tests/conformance/run.sh, step 5) starts both and runs these tests
// with MIGRATION_CONNECT_URL, MIGRATION_SLUICE_URL, MIGRATION_KAFKA and
// MIGRATION_SLUICE_BIN set; without them the tests skip.
package migration
