// Command benchrun is `make bench`: it runs the scenarios of issue 9 against
// Sluice and, with BENCH_PEER=connect, against Apache Kafka Connect 4.4
// distributed workers on the same broker, prints a table and writes
// bench/results.json (and bench/results.md).
//
// Scenarios (sizes for BENCH_SCALE=default, full in parentheses):
//
//  1. offsets: PATCH (10 partitions), GET and DELETE offsets of a stopped
//     file source, 200 of each, median and p99.
//  2. lifecycle: create 100 (500) file sources STOPPED, resume all until
//     RUNNING, stop all, resume all: wall time of each step.
//  3. worker loss: 2 agents / 2 workers, 20 running file sources; SIGKILL
//     the node with the most tasks, time until its tasks RUNNING elsewhere;
//     start another node, count the running tasks stopped or moved.
//  4. data plane: file source of 200k (1M) lines of 100 bytes to a topic,
//     file sink of a topic to a file, generator source (Sluice only):
//     records/s.
//  5. footprint: RSS of an agent / a worker idle and with 100 running
//     tasks; coordinator / worker with 1,000 (5,000) connectors.
//  6. rolling upgrade (Sluice only; ≈ 20 s a roll): 3 agents with 20
//     generator tasks each; drain,
//     SIGKILL, start and uncordon each agent in turn: total time, tasks
//     moved, and per moved task the time it wrote nothing (median, p95).
//  7. debezium (not in the default list: it needs PostgreSQL, the built
//     connector host and the Debezium plugin): Debezium's PostgreSQL
//     connector, one agent with --plugin-path / one worker with
//     plugin.path; the snapshot of a table of 200k (1M) rows, then 50k
//     (250k) streamed inserts, updates and deletes: time to the first
//     record, snapshot time and records/s, streaming records/s, peak RSS of
//     the agent and its connector host JVM / of the worker (-Xmx1g, and
//     again with the host's -Xmx512m). Skipped, with
//     what is missing, without SLUICE_TEST_POSTGRES (host:port), the
//     plugin (SLUICE_TEST_PLUGINS, default <repo>/.cache/plugins) or the
//     host (SLUICE_CONNECT_HOST_DIR, default <repo>/connect/javahost/target).
//  8. scale (Sluice only, not in the default list): two coordinators of
//     one HA group (--leader-lease 6s) and one agent; create 1,000 (5,000)
//     file sources STOPPED (wall time until all STOPPED), the latency of
//     GET /connectors?expand=status over 50 requests (median, p99) and the
//     coordinators' RSS; then SIGKILL the leader and time until a
//     PUT …/pause through the other coordinator answers 202, and until
//     that connector is PAUSED. On a second cluster, 10 agents run 200
//     (2,000) generator tasks (10 per connector, one record each, then
//     idle): time until all RUNNING; then SIGKILL the coordinator, start
//     it again with the same flags and time until it leads, every agent is
//     registered with it reporting its tasks RUNNING and the status shows
//     every task RUNNING; the task starts the agents log meanwhile must be
//     0.
//  9. native postgres (not in the default list: it needs PostgreSQL, and
//     for Debezium's runs what scenario 7 needs): Sluice's native
//     PostgreSQL connector against Debezium's through the agent's connector
//     host and (BENCH_PEER=connect) through a worker, on scenario 7's
//     database and table: the snapshot of 200k (1M) rows, then a WAL
//     backlog of as many changes, committed while the connector is stopped
//     and timed from its resume: records/s and peak RSS of each phase (the
//     agent alone — with its defaults, and again with GOMEMLIMIT=64MiB —,
//     the agent and its connector host, the worker), and the ratios
//     native ÷ Debezium.
//  10. postgres transaction (not in the default list; PostgreSQL only): the
//     native connector streams one transaction of 2 GiB (rows of 64 KiB),
//     in an agent with its defaults and again with GOMEMLIMIT=64MiB: peak
//     agent RSS, and MiB/s from the commit.
//
// Every process runs on this machine; the broker is the one on BENCH_KAFKA
// (default 127.0.0.1:9092), which `make bench` starts when none answers.
// Each system gets its own group ids, internal topics, connector and topic
// names (prefix bench-<run id>-<system>-…), deleted at the end.
//
// Environment: BENCH_PEER (connect or empty), BENCH_SCALE (default, full),
// BENCH_SCENARIOS (e.g. 1,3,6, 7 to 10; default 1 to 6), BENCH_RUNS (default 3),
// BENCH_ROLL_RUNS (rolls of scenario 6, default 1), BENCH_DEBEZIUM_ROWS and
// BENCH_DEBEZIUM_CHANGES (scenario 7's sizes, whatever the scale),
// BENCH_PG_ROWS (scenario 9's rows and changes), BENCH_PG_TXN_MIB and
// BENCH_PG_TXN_VALUE_KIB (scenario 10's transaction and its rows' values),
// BENCH_KAFKA, BENCH_OUT (default <repo>/bench/results.json), CONNECT_CACHE
// (default <repo>/.cache/connect-4.4.0, filled by deploy/connect/connect-up.sh),
// BENCH_KEEP=1 keeps the temp dir (logs) and the topics, BENCH_PPROF=1 serves
// Go's profiles on every agent's metrics listener (its address is in the
// agent's log: "metrics listener started").
//
// `benchrun clean bench-<id>` deletes the topics and groups of a run that
// was interrupted or kept (BENCH_KEEP=1) and, with SLUICE_TEST_POSTGRES,
// scenarios 7, 9 and 10's replication slots, publications and tables. A run drops
// those itself at the end, BENCH_KEEP=1 or not: a slot left behind keeps
// PostgreSQL's WAL.
//
// `benchrun render FILE` prints the table of a results.json again.
//
// `benchrun nats ADDR DIR` is internal: the NATS server (with JetStream in
// DIR) that a Sluice cluster of the benchmark uses, as its own process so
// that its memory can be measured.
package main

import (
	"github.com/sluice-io/sluice/sluicetest/procs"

	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-io/sluice/shared/embedded"
)

// defaultScenarios are the scenarios of a run that names none.
const defaultScenarios = "1,2,3,4,5,6"

// bench is one benchmark run.
type bench struct {
	root, tmp, out string
	self           string
	sluiceBin      string
	java           string
	connectCache   string
	brokers        string
	runID          string
	peer           string
	full           bool
	runs           int
	scenarios      map[string]bool
	keep           bool
	// logLevel, when set, is every Sluice process's --log-level: at
	// debug the coordinator and agents log each offsets change's steps.
	logLevel string
	// pprof (BENCH_PPROF=1) serves Go's profiles on every agent's metrics
	// listener, to profile an agent while a scenario runs.
	pprof bool

	sizes    sizes
	kafka    *kafka
	clusters int
	rep      report
	// pg is the PostgreSQL of scenarios 7, 9 and 10, once it has been
	// found answering.
	pg *pg
}

// sizes are the scale-dependent inputs.
type sizes struct {
	lifecycle   int // connectors in scenario 2
	lines       int // records in scenario 4
	coordConns  int // connectors in the coordinator footprint
	footTasks   int // running tasks in the footprint
	lossConns   int // running connectors in scenario 3
	latencyOps  int // operations of each kind in scenario 1
	defaultLoss int // rounds of the Connect-defaults worker loss
	dbzRows     int // rows of the table scenario 7 snapshots
	dbzChanges  int // changes scenario 7 streams after the snapshot
	scaleConns  int // connectors created STOPPED in scenario 8
	scaleTasks  int // running tasks in scenario 8
	pgRows      int // rows scenario 9 snapshots, and changes it drains
	txnMiB      int // the size of scenario 10's transaction
	// txnValueKiB is the value of each row of scenario 10's transaction:
	// large enough that the rows are few and the bytes many, small
	// enough that each record fits Kafka's default 1 MiB message.
	txnValueKiB int
}

func main() {
	if len(os.Args) == 4 && os.Args[1] == "nats" {
		runNATS(os.Args[2], os.Args[3])
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "render" {
		if err := render(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "benchrun render:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "clean" {
		os.Exit(clean(os.Args[2]))
	}
	b, err := setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(2)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "benchrun: %v: stopping every process it started\n", s)
		killAll()
		b.dropPostgres()
		os.Exit(130)
	}()
	code := b.run()
	killAll()
	b.dropPostgres()
	b.cleanup()
	os.Exit(code)
}

// runNATS serves NATS with JetStream until SIGTERM or SIGKILL.
func runNATS(addr, dir string) {
	ns, err := embedded.NATS(addr, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nats:", err)
		os.Exit(1)
	}
	fmt.Println("nats ready on", ns.ClientURL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	ns.Shutdown()
}

// clean deletes the topics and groups of an interrupted or BENCH_KEEP=1
// run: `benchrun clean bench-<run id>`.
func clean(runID string) int {
	if !strings.HasPrefix(runID, "bench-") {
		fmt.Fprintln(os.Stderr, "benchrun clean: the argument is a run id, bench-<number>")
		return 2
	}
	k, err := dialKafka(envOr("BENCH_KAFKA", "127.0.0.1:9092"), runID+"-clean")
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun clean:", err)
		return 1
	}
	defer k.close()
	n, err := k.deletePrefixed(runID)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun clean:", err)
		return 1
	}
	k.deleteGroupsPrefixed(runID, "connect-"+runID)
	fmt.Printf("deleted %d topics %s-* and their groups\n", n, runID)
	p, err := pgFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun clean:", err)
		return 1
	}
	if p != nil {
		if err := p.dropPrefixed(pgPrefix(runID)); err != nil {
			fmt.Fprintln(os.Stderr, "benchrun clean:", err)
			return 1
		}
		fmt.Printf("dropped PostgreSQL slots, publications and tables %s*\n", pgPrefix(runID))
	}
	return 0
}

// setup reads the environment, builds the sluice binary and checks the
// broker and (for the peer) the Connect jars.
func setup() (*bench, error) {
	start := time.Now()
	b := &bench{brokers: envOr("BENCH_KAFKA", "127.0.0.1:9092"), peer: os.Getenv("BENCH_PEER"),
		full: os.Getenv("BENCH_SCALE") == "full", keep: os.Getenv("BENCH_KEEP") == "1",
		logLevel: os.Getenv("BENCH_LOG_LEVEL"), pprof: os.Getenv("BENCH_PPROF") == "1"}
	if b.peer != "" && b.peer != sysConnect {
		return nil, fmt.Errorf("BENCH_PEER=%q: the only peer is connect", b.peer)
	}
	var err error
	if b.runs, err = envInt("BENCH_RUNS", 3); err != nil {
		return nil, err
	}
	b.sizes = sizes{lifecycle: 100, lines: 200_000, coordConns: 1000, footTasks: 100, lossConns: 20, latencyOps: 200, defaultLoss: 1,
		dbzRows: 200_000, dbzChanges: 50_000, scaleConns: 1000, scaleTasks: 200, pgRows: 200_000, txnMiB: 2048}
	b.rep.Scale = "default"
	if b.full {
		b.sizes = sizes{lifecycle: 500, lines: 1_000_000, coordConns: 5000, footTasks: 100, lossConns: 20, latencyOps: 200, defaultLoss: 3,
			dbzRows: 1_000_000, dbzChanges: 250_000, scaleConns: 5000, scaleTasks: 2000, pgRows: 1_000_000, txnMiB: 2048}
		b.rep.Scale = "full"
	}
	// Scenario 7's sizes can be set alone: a quick try, or a larger table.
	if b.sizes.dbzRows, err = envInt("BENCH_DEBEZIUM_ROWS", b.sizes.dbzRows); err != nil {
		return nil, err
	}
	if b.sizes.dbzChanges, err = envInt("BENCH_DEBEZIUM_CHANGES", b.sizes.dbzChanges); err != nil {
		return nil, err
	}
	if b.sizes.pgRows, err = envInt("BENCH_PG_ROWS", b.sizes.pgRows); err != nil {
		return nil, err
	}
	if b.sizes.txnMiB, err = envInt("BENCH_PG_TXN_MIB", b.sizes.txnMiB); err != nil {
		return nil, err
	}
	if b.sizes.txnValueKiB, err = envInt("BENCH_PG_TXN_VALUE_KIB", 64); err != nil {
		return nil, err
	}
	b.scenarios = map[string]bool{}
	for _, s := range strings.Split(envOr("BENCH_SCENARIOS", defaultScenarios), ",") {
		b.scenarios[strings.TrimSpace(s)] = true
	}
	b.rep.Peer = map[bool]string{true: sysConnect, false: "none"}[b.peer == sysConnect]
	b.rep.Started = start.UTC().Format(time.RFC3339)
	b.runID = fmt.Sprintf("bench-%d", start.Unix()%1_000_000)

	if b.root, err = repoRoot(); err != nil {
		return nil, err
	}
	b.out = envOr("BENCH_OUT", filepath.Join(b.root, "bench", "results.json"))
	if b.self, err = os.Executable(); err != nil {
		return nil, err
	}
	if b.tmp, err = os.MkdirTemp("", "sluice-bench-"); err != nil {
		return nil, err
	}
	b.logf("run %s: scale %s, peer %s, %d runs, scenarios %s, broker %s, temp dir %s",
		b.runID, b.rep.Scale, b.rep.Peer, b.runs, envOr("BENCH_SCENARIOS", defaultScenarios), b.brokers, b.tmp)
	if b.kafka, err = dialKafka(b.brokers, b.runID+"-bench"); err != nil {
		return nil, fmt.Errorf("%w (make bench starts one with make kafka-up when none answers on 127.0.0.1:9092)", err)
	}
	tb = &runner{tmp: b.tmp}
	t0 := time.Now()
	// The shipped binary (no test seams), with a leader key pinned on
	// every sluice process as production pins one.
	if b.sluiceBin, err = procs.BuildBinaryWith(b.tmp, ""); err != nil {
		return nil, err
	}
	b.logf("built %s in %v", b.sluiceBin, time.Since(t0).Round(100*time.Millisecond))
	b.java = "java"
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		b.java = filepath.Join(jh, "bin", "java")
	}
	if b.peer == sysConnect {
		b.connectCache = envOr("CONNECT_CACHE", filepath.Join(b.root, ".cache", "connect-4.4.0"))
		if _, err := os.Stat(filepath.Join(b.connectCache, ".complete")); err != nil {
			return nil, fmt.Errorf("no Kafka Connect jars in %s: run CONNECT_JARS_ONLY=1 deploy/connect/connect-up.sh (make bench does)", b.connectCache)
		}
	}
	b.rep.Machine = b.describe()
	return b, nil
}

// run runs the chosen scenarios, prints the table and writes the results;
// it returns the exit code.
func (b *bench) run() int {
	start := time.Now()
	scen := []struct {
		id   string
		name string
		fn   func() error
	}{
		{"1", "offsets latency", b.scenarioOffsets},
		{"2", "lifecycle", b.scenarioLifecycle},
		{"3", "worker loss", b.scenarioLoss},
		{"4", "data plane", b.scenarioData},
		{"5", "footprint", b.scenarioFootprint},
		{"6", "rolling upgrade", b.scenarioRolling},
		{"7", "debezium", b.scenarioDebezium},
		{"8", "scale", b.scenarioScale},
		{"9", "native postgres", b.scenarioNativePG},
		{"10", "postgres transaction", b.scenarioPGTransaction},
	}
	for _, s := range scen {
		if !b.scenarios[s.id] {
			continue
		}
		t0 := time.Now()
		b.logf("scenario %s (%s)", s.id, s.name)
		err := s.fn()
		killAll() // whatever a failed scenario left running
		if err != nil {
			msg := fmt.Sprintf("scenario %s (%s): %v", s.id, s.name, err)
			b.rep.Errors = append(b.rep.Errors, msg)
			b.logf("FAILED %s", msg)
		}
		b.logf("scenario %s took %v", s.id, time.Since(t0).Round(time.Second))
	}
	b.rep.WallSecs = time.Since(start).Seconds()
	b.computeRatios()
	fmt.Println()
	b.writeTable(os.Stdout)
	for _, e := range b.rep.Errors {
		fmt.Println("ERROR:", e)
	}
	if err := b.write(); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun: write results:", err)
		return 1
	}
	b.logf("wrote %s (and .md) after %v", b.out, time.Since(start).Round(time.Second))
	if len(b.rep.Errors) > 0 {
		return 1
	}
	return 0
}

// cleanup deletes the run's topics and groups and the temp dir, unless
// BENCH_KEEP=1 or a scenario failed (then the logs stay for inspection).
func (b *bench) cleanup() {
	if b.keep {
		b.logf("kept %s and the topics %s-*", b.tmp, b.runID)
		return
	}
	if n, err := b.kafka.deletePrefixed(b.runID); err != nil {
		b.logf("deleting topics %s-*: %v", b.runID, err)
	} else {
		b.logf("deleted %d topics %s-*", n, b.runID)
	}
	b.kafka.deleteGroupsPrefixed(b.runID, "connect-"+b.runID)
	b.kafka.close()
	if len(b.rep.Errors) > 0 {
		b.logf("logs kept in %s", b.tmp)
		return
	}
	_ = os.RemoveAll(b.tmp)
}

// describe reads the machine description.
func (b *bench) describe() machine {
	m := machine{Cores: runtime.NumCPU(), Go: runtime.Version(), Broker: b.brokers}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
				m.MemoryGiB = float64(int(kb/(1<<20)*10)) / 10
			}
		}
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if out, err := exec.Command(b.java, "-version").CombinedOutput(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "Runtime Environment") {
				m.Java = strings.TrimSpace(l)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(data))
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.Load = strings.Join(strings.Fields(string(data))[:3], " ")
	}
	return m
}

// systems are the systems this run measures, Sluice first.
func (b *bench) systems() []string {
	if b.peer == sysConnect {
		return []string{sysSluice, sysConnect}
	}
	return []string{sysSluice}
}

// note adds a remark to the report.
func (b *bench) note(format string, args ...any) {
	b.rep.Notes = append(b.rep.Notes, fmt.Sprintf(format, args...))
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s benchrun: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// envInt is the positive integer in environment variable k, def when it
// is unset.
func envInt(k string, def int) (int, error) {
	v := os.Getenv(k)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a positive integer", k, v)
	}
	return n, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// repoRoot is the directory holding go.work, found from the working
// directory upwards.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.work above the working directory: run from the repository")
		}
		dir = parent
	}
}
