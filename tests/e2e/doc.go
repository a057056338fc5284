// Package e2e runs Sluice as users run it: the built `sluice` binary as
// separate coordinator and agent processes (or `sluice dev`), talking to
// NATS and Kafka over the network and driven over real HTTP.
//
// NATS and Kafka run inside the test process (embedded nats-server and
// kfake) unless SLUICE_TEST_KAFKA names a real Kafka broker; every test gets
// its own group id and topic names, so runs can share that broker.
//
// The tests use the test kit's process mode (package sluicetest:
// StartProcesses, Proc), built for failure testing: a procs.Proc can
// be killed
// (SIGKILL), stopped gracefully (SIGTERM), paused and resumed
// (SIGSTOP/SIGCONT) and restarted with the same flags, and its log can be
// searched, e.g. to count how often a task started. Every child process is
// killed when its test ends, and its output is dumped into the test log if
// the test failed.
//
// TestMain builds the binary once per run; SLUICE_E2E_BINARY points the
// tests at a prebuilt one instead.
package e2e
