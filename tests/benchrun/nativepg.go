package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
)

// nativeClass is Sluice's own PostgreSQL source connector, which runs in
// the agent and writes Debezium's records (docs/cdc-postgres.md).
const nativeClass = "io.sluice.connect.postgres.PostgresSourceConnector"

// nativeMemLimit is the soft memory limit of scenario 9's second native
// system.
const nativeMemLimit = "GOMEMLIMIT=64MiB"

// pgResult is one run of scenario 9 on one system.
type pgResult struct {
	validateSecs float64 // the first request after the node started
	snapSecs     float64 // from the POST until every row is in the topic
	writeSecs    float64 // PostgreSQL's time to commit the backlog
	firstSecs    float64 // from the resume until the first change is in the topic
	drainSecs    float64 // from the resume until every change is in the topic
	// peak RSS of the node (agent and what runs below it, or worker) while
	// the snapshot is taken and while the backlog is drained, and of every
	// process of the system over both.
	snapRSS, drainRSS, allRSS float64
}

// pgSystems are the systems scenario 9 compares: the native connector in
// an agent (with its defaults, and with a soft memory limit), then Debezium in the agent's connector host and in a Connect
// worker (with BENCH_PEER=connect) when their parts are there. Figures of
// the Debezium systems get the SUT's suffix: the Connect one pairs with the
// native figure in the run's ratios.
func (b *bench) pgSystems(withDebezium bool) []dbzSUT {
	suts := []dbzSUT{{sys: sysSluice, label: "native", native: true},
		// The agent with a soft memory limit, as it gets one of its own in
		// a container or a systemd unit with a memory limit (shared/memlimit):
		// the garbage collector then keeps the heap's slack down.
		{sys: sysSluice, label: "native_lim", native: true, suffix: " [" + nativeMemLimit + "]", env: []string{nativeMemLimit}}}
	if !withDebezium {
		return suts
	}
	suts = append(suts, dbzSUT{sys: sysSluice, label: "dbz", suffix: " [Debezium, connector host]"})
	if b.peer == sysConnect {
		suts = append(suts, dbzSUT{sys: sysConnect, label: "connect", suffix: " [Debezium, worker -Xmx1g]"})
	}
	return suts
}

// scenarioNativePG is scenario 9: Sluice's native PostgreSQL connector
// against Debezium's, through the agent's connector host and through a
// Kafka Connect worker, on scenario 7's database and table, per run and
// system on a fresh cluster with one agent / one worker and a table of its
// own. (a) Snapshot: pgRows rows, timed from the POST that creates the
// connector until every row is in the topic. (b) Backlog: the connector is
// stopped, PostgreSQL commits pgRows changes (scenario 7's mix), which wait
// in the slot; the connector is resumed and timed until every change is in
// the topic, so that neither PostgreSQL nor the load generator limits the
// rate. Resident memory is sampled in both phases. Runs alternate between
// the systems and only one runs at a time.
func (b *bench) scenarioNativePG() error {
	const scen = "9 native postgres"
	pluginDir, hostDir, missing := b.debeziumSetup()
	if b.pg == nil {
		msg := "scenario 9 (native postgres) skipped: missing " + strings.Join(missing, "; ")
		b.logf("  %s", msg)
		b.note("%s", msg)
		return nil
	}
	n := b.sizes.pgRows
	if _, err := changeScript("t", n, n); err != nil {
		return err
	}
	var paths dbzPaths
	if len(missing) > 0 {
		msg := "scenario 9 (native postgres): the native connector alone, Debezium's runs skipped: missing " + strings.Join(missing, "; ")
		b.logf("  %s", msg)
		b.note("%s", msg)
	} else {
		var err error
		if paths, err = b.debeziumPaths(pluginDir, hostDir); err != nil {
			return err
		}
	}
	defer b.dropPostgres()
	suts := b.pgSystems(len(missing) == 0)
	res := make([][]pgResult, len(suts))
	for run := range b.runs {
		for i, sut := range suts {
			r, err := b.nativePGRun(sut, run, paths)
			if err != nil {
				return fmt.Errorf("run %d, %s%s: %w", run+1, sut.label, sut.suffix, err)
			}
			res[i] = append(res[i], r)
			b.logf("  run %d %s%s: validate %.1fs, snapshot %.1fs (%.0f records/s, peak RSS %.0f MiB), backlog committed in %.1fs, first change after %.1fs, drained in %.1fs (%.0f records/s, peak RSS %.0f MiB), all processes %.0f MiB",
				run+1, sut.label, sut.suffix, r.validateSecs, r.snapSecs, float64(n)/r.snapSecs, r.snapRSS, r.writeSecs,
				r.firstSecs, r.drainSecs, float64(n)/r.drainSecs, r.drainRSS, r.allRSS)
		}
	}
	figSnap := fmt.Sprintf("snapshot of %dk rows → topic", n/1000)
	figDrain := fmt.Sprintf("WAL backlog of %dk changes → topic, from resume", n/1000)
	figSnapRSS := "agent (+ connector host) / worker RSS, peak, snapshot"
	figDrainRSS := "agent (+ connector host) / worker RSS, peak, backlog"
	figs := []struct {
		name, unit, better string
		val                func(pgResult) float64
	}{
		{figDbzValidate, "s", "lower", func(r pgResult) float64 { return r.validateSecs }},
		{figSnap, "records/s", "higher", func(r pgResult) float64 { return float64(n) / r.snapSecs }},
		{figSnapRSS, "MiB", "lower", func(r pgResult) float64 { return r.snapRSS }},
		{"resume → first backlog change in topic", "s", "lower", func(r pgResult) float64 { return r.firstSecs }},
		{figDrain, "records/s", "higher", func(r pgResult) float64 { return float64(n) / r.drainSecs }},
		{figDrainRSS, "MiB", "lower", func(r pgResult) float64 { return r.drainRSS }},
		{figDbzAll, "MiB", "lower", func(r pgResult) float64 { return r.allRSS }},
		{"PostgreSQL commits the backlog in", "s", "info", func(r pgResult) float64 { return r.writeSecs }},
	}
	for _, f := range figs {
		for i, sut := range suts {
			vals := make([]float64, len(res[i]))
			for j, r := range res[i] {
				vals[j] = f.val(r)
			}
			note := ""
			if sut.native {
				switch f.name {
				case figDrain:
					note = "committed while the connector was STOPPED: 60% inserts, 30% updates, 10% deletes, ≤ 1,000 rows a statement, a transaction each"
				case figSnapRSS:
					note = fmt.Sprintf("sampled every %v: the agent alone; with Debezium the agent and its connector host JVM (-Xmx512m); the worker -Xmx1g", rssInterval)
				case figDbzAll:
					note = "NATS server + coordinator + agent (+ connector host)"
				}
			}
			b.add(scen, sut.sys, f.name+sut.suffix, f.unit, f.better, vals, note)
		}
	}
	// Each native system over Debezium in the connector host, paired per
	// run (the default one over Connect's worker is the run's own ratio,
	// computeRatios).
	host := slices.IndexFunc(suts, func(s dbzSUT) bool { return !s.native && s.sys == sysSluice })
	if host < 0 {
		return nil
	}
	for _, f := range []struct {
		name string
		val  func(pgResult) float64
	}{
		{figSnap, func(r pgResult) float64 { return float64(n) / r.snapSecs }},
		{figDrain, func(r pgResult) float64 { return float64(n) / r.drainSecs }},
		{figSnapRSS, func(r pgResult) float64 { return r.snapRSS }},
		{figDrainRSS, func(r pgResult) float64 { return r.drainRSS }},
	} {
		for i, sut := range suts {
			if !sut.native {
				continue
			}
			var ratios []float64
			for j := range min(len(res[i]), len(res[host])) {
				if d := f.val(res[host][j]); d != 0 {
					ratios = append(ratios, f.val(res[i][j])/d)
				}
			}
			b.add(scen, sysSluice, f.name+": native"+sut.suffix+" ÷ Debezium in the connector host", "×", "info", ratios, "")
		}
	}
	return nil
}

// nativePGRun is one run of scenario 9 on a fresh cluster of sut.
func (b *bench) nativePGRun(sut dbzSUT, run int, paths dbzPaths) (pgResult, error) {
	var r pgResult
	n := b.sizes.pgRows
	// The table, its slot and publication share one name, unique to the
	// run and system, which dropPrefixed finds again.
	table := fmt.Sprintf("%ss9_%s_%d", pgPrefix(b.runID), sut.label, run+1)
	defer func() {
		if err := b.pg.dropPrefixed(table); err != nil {
			b.logf("  dropping %s: %v", table, err)
		}
	}()
	t0 := time.Now()
	if err := b.pg.fillTable(table, n); err != nil {
		return r, err
	}
	b.logf("  run %d %s%s: table %s of %d rows written in %v", run+1, sut.label, sut.suffix, table, n, time.Since(t0).Round(100*time.Millisecond))
	c, err := b.pgCluster(sut, fmt.Sprintf("pg%d", run), paths)
	if err != nil {
		return r, err
	}
	defer c.close()
	// Stopped, not killed, first: an agent killed leaves its connector
	// host JVM running until the JVM notices, into the next run.
	defer c.nodes[0].p.stop(30 * time.Second)
	prefix := c.name("db")
	topic := prefix + ".public." + table
	if err := b.kafka.createTopic(topic, 1); err != nil {
		return r, err
	}
	name := c.name("pg")
	w := &topicWatch{c: c, name: name, topic: topic}
	cfg := b.debeziumCfg(table, prefix)
	if sut.native {
		cfg["connector.class"] = nativeClass
	}

	// (a) The snapshot, after a validation timed on its own: for Debezium
	// in Sluice it starts the connector host.
	sampler := sampleSystemRSS(c)
	defer func() { _, _, _ = sampler.stop() }() // on an early return; stopped below otherwise
	t0 = time.Now()
	if _, err := c.rest().Plugins().Validate(context.Background(), cfg["connector.class"], cfg); err != nil {
		return r, c.failed("validate", err)
	}
	r.validateSecs = time.Since(t0).Seconds()
	t0 = time.Now()
	if _, err := c.rest().Connectors().Create(context.Background(), api.CreateConnectorRequest{Name: name, Config: cfg}); err != nil {
		return r, c.failed("create "+name, err)
	}
	if err := c.waitRecords(name, n, pgTimeout, w.count); err != nil {
		return r, fmt.Errorf("snapshot: %w", err)
	}
	r.snapSecs = time.Since(t0).Seconds()
	peaks, _, err := sampler.stop()
	if err != nil {
		return r, fmt.Errorf("resident memory: %w", err)
	}
	r.snapRSS, r.allRSS = peaks[0], peaks[2]

	// (b) The backlog: committed while the connector is stopped (its
	// offsets flushed, its slot idle), drained once it is resumed.
	if err := c.putAll([]string{name}, "stop"); err != nil {
		return r, err
	}
	if _, err := c.waitAll([]string{name}, 2*time.Minute, "connector STOPPED", isStopped); err != nil {
		return r, err
	}
	script, err := changeScript(table, n, n)
	if err != nil {
		return r, err
	}
	t0 = time.Now()
	if _, err := b.pg.run(script); err != nil {
		return r, err
	}
	r.writeSecs = time.Since(t0).Seconds()
	sampler = sampleSystemRSS(c)
	w.from(int64(n))
	t0 = time.Now()
	if err := c.putAll([]string{name}, "resume"); err != nil {
		return r, err
	}
	if err := c.waitRecords(name, 2*n, pgTimeout, w.count); err != nil {
		return r, fmt.Errorf("backlog: %w", err)
	}
	r.drainSecs = time.Since(t0).Seconds()
	r.firstSecs = w.first.Sub(t0).Seconds()
	if peaks, _, err = sampler.stop(); err != nil {
		return r, fmt.Errorf("resident memory: %w", err)
	}
	r.drainRSS, r.allRSS = peaks[0], max(r.allRSS, peaks[2])
	if err := c.rest().Connectors().Delete(context.Background(), name); err != nil {
		return r, c.failed("delete "+name, err)
	}
	return r, nil
}
