// Package sluicetest is Sluice's test kit, as net/http/httptest is
// net/http's: it runs a whole Sluice cluster inside a test — an embedded
// NATS server, a Kafka broker (an embedded kfake, or the Apache Kafka broker
// named by SLUICE_TEST_KAFKA), a coordinator and agents, real code talking
// real protocols with no mocks — and gives a test what it needs to drive
// one:
//
//   - Start(t, Options{Agents, Lease, …}) returns a Cluster in the test's
//     process, stopped at the test's cleanup; StartBackends,
//     StartSecuredBackends and StartOutage give several clusters one NATS
//     server and broker, or a test backends it can take away and bring back;
//   - its process mode, package procs (sluicetest/procs): procs.Start(t,
//     procs.Options{Agents, Lease, …}) runs the same knobs as separate
//     processes of the sluice binary (procs.BuildBinary, once per test
//     binary from TestMain), one or several coordinators, each a procs.Proc
//     a test can Kill, Stop, Pause (SIGSTOP), Resume and Restart, and whose
//     log it can read; Proc and FreeAddr take a TB, so that a program that
//     is not a test (the benchmark runner) runs its processes with them;
//   - the REST API: Cluster.Client, the typed client (package api);
//     Cluster.Do, Must, Status, WaitState, Do and DoWith for any base URL,
//     Raw for raw HTTP;
//   - data: Cluster.Produce, ProduceRecords, ReadTopic, CreateTopic, Admin;
//   - members in process: StopCoordinator, StartCoordinator,
//     StartExtraCoordinator, StopAgent, StartAgent, StopAgents and
//     StartAgents (several at once, as a fleet restarting together),
//     WaitAgents;
//   - waiting: Eventually, the one polling helper, and Consistently; Hold,
//     the only sleep, keeps a fault in place for a given time.
//
// Every cluster gets its own topic names and, unless Options.GroupID names
// one, its own group id, so tests can share one real broker and run in
// parallel (t.Parallel).
//
// The package lives in the root module so that the root module's tests
// (cmd/sluice's) and the tests module's suites use the same kit.
package sluicetest
