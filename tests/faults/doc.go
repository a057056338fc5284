// Package faults is Sluice's fault suite (make faults, make faults-short):
// it runs Sluice as production runs it — a nats-server process (or a
// cluster of three) with a user per role and agent, the broker as a
// process of its own (the embedded one, `sluice dev kafka`, or Apache Kafka
// when SLUICE_TEST_KAFKA is set), coordinators and two agents, all separate
// processes of the built binary — drives a counted workload through one
// infrastructure fault per row, and prints a table of what each fault cost:
// lines lost and duplicated, lines written by an old task instance after
// its successor's first, seconds until data flows and until a REST write
// works again, and task restarts the fault did not call for.
// docs/reliability.md explains every column and holds the last table.
//
// It runs only when SLUICE_FAULTS is "short" (the CI rows) or "full"; make
// test runs the package but skips it. SLUICE_FAULTS_ROWS (a regular
// expression) picks rows by name, SLUICE_FAULTS_REPORT names the Markdown
// file the table is written to.
package faults
