// Package procs is the process mode of Sluice's test kit (package
// sluicetest): the same cluster as sluicetest.Start, with the same knobs
// (Agents, Lease, ShutdownTimeout, FlushInterval, SecureNATS), run as
// separate processes of the sluice binary, for tests whose subject is
// processes — crashes, hangs, restarts, flags, several coordinators.
//
//   - BuildBinary, once per test binary from TestMain, builds the binary
//     (test seams included) and pins a leader key every sluice process
//     signs or trusts;
//   - Start(t, Options{Agents, Coordinators, Lease, …}) returns a Cluster:
//     NATS and Kafka in the test process (or the test's own, Options.NATSURL
//     and Brokers), coordinators and agents as processes, each a Proc a test
//     can Kill, Stop, Pause (SIGSTOP), Resume and Restart and whose log it
//     can read (Mark, LogLinesSince, CountLog, TaskStarts);
//   - with several coordinators, the …At methods address coordinator i,
//     Lease reads the leader lease and WaitLeader waits for one leader all
//     agree on;
//   - Generator and Seqs check what a generator source wrote: nothing lost,
//     nothing duplicated.
//
// Proc and FreeAddr take a sluicetest.TB, which testing.TB satisfies and a
// program that is not a test (the benchmark runner) adapts.
package procs
