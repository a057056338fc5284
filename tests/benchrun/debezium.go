package main

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
)

// debeziumClass is Debezium's PostgreSQL connector, the same plugin
// directory for both systems.
const debeziumClass = "io.debezium.connector.postgresql.PostgresConnector"

// debeziumPlugin is the Debezium plugin's directory name in a plugin path
// (deploy/plugins, make plugins).
const debeziumPlugin = "debezium-postgres"

// sanitizerShim is the connector host's class that gives Kafka 4.4's
// Sanitizer its pre-4.4 name, which Debezium 3.6 calls.
const sanitizerShim = "org/apache/kafka/common/utils/Sanitizer.class"

// rssInterval is how often scenario 7 samples resident memory.
const rssInterval = 250 * time.Millisecond

// pg is the PostgreSQL of scenario 7, reached with psql as user postgres
// (trust authentication, as make postgres-up sets it up).
type pg struct{ host, port string }

// run feeds script to psql: each statement is its own transaction, the
// first failing one stops it. It returns psql's output (unaligned, tuples
// only).
func (p *pg) run(script string) (string, error) {
	cmd := exec.Command("psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
		"-h", p.host, "-p", p.port, "-U", "postgres", "-d", "postgres", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=5")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("psql on %s:%s: %v: %s", p.host, p.port, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// dropPrefixed drops the replication slots, publications and tables of
// schema public whose names start with prefix: a slot left behind keeps
// PostgreSQL from recycling WAL. A slot's walsender may outlive the
// connector a moment, so it is ended first and the drop retried.
func (p *pg) dropPrefixed(prefix string) error {
	lit := "'" + strings.ReplaceAll(prefix, "'", "''") + "'"
	err := waitFor(30*time.Second, "replication slots "+prefix+"* dropped", func() (bool, string) {
		left, err := p.run(`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots
			WHERE starts_with(slot_name, ` + lit + `) AND active_pid IS NOT NULL;
			SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots
			WHERE starts_with(slot_name, ` + lit + `) AND NOT active;
			SELECT count(*) FROM pg_replication_slots WHERE starts_with(slot_name, ` + lit + `);`)
		if err != nil {
			return false, err.Error()
		}
		lines := strings.Split(left, "\n")
		n := lines[len(lines)-1]
		return n == "0", n + " left"
	})
	if err != nil {
		return err
	}
	_, err = p.run(`DO $$DECLARE r record; BEGIN
		FOR r IN SELECT pubname FROM pg_publication WHERE starts_with(pubname, ` + lit + `) LOOP
			EXECUTE format('DROP PUBLICATION %I', r.pubname);
		END LOOP;
		FOR r IN SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND starts_with(tablename, ` + lit + `) LOOP
			EXECUTE format('DROP TABLE %I', r.tablename);
		END LOOP;
	END$$;`)
	return err
}

// pgFromEnv is the PostgreSQL SLUICE_TEST_POSTGRES names (host:port), nil
// when it is unset.
func pgFromEnv() (*pg, error) {
	addr := os.Getenv("SLUICE_TEST_POSTGRES")
	if addr == "" {
		return nil, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("SLUICE_TEST_POSTGRES=%q: want host:port", addr)
	}
	return &pg{host: host, port: port}, nil
}

// pgPrefix starts the name of every table, slot and publication of a run:
// the run id as a PostgreSQL identifier.
func pgPrefix(runID string) string { return strings.ReplaceAll(runID, "-", "_") + "_" }

// dropPostgres drops what scenario 7 left in PostgreSQL, if it ran.
func (b *bench) dropPostgres() {
	if b.pg == nil {
		return
	}
	if err := b.pg.dropPrefixed(pgPrefix(b.runID)); err != nil {
		b.logf("dropping PostgreSQL slots, publications and tables %s*: %v", pgPrefix(b.runID), err)
	}
}

// debeziumSetup finds what scenario 7 needs besides the broker: the
// Debezium plugin in SLUICE_TEST_PLUGINS (default <repo>/.cache/plugins),
// the built connector host in SLUICE_CONNECT_HOST_DIR (default
// <repo>/connect/javahost/target), psql, and a PostgreSQL with
// wal_level=logical on SLUICE_TEST_POSTGRES. It returns the plugin's
// directory and the host's, or what is missing.
func (b *bench) debeziumSetup() (pluginDir, hostDir string, missing []string) {
	plugins := envOr("SLUICE_TEST_PLUGINS", filepath.Join(b.root, ".cache", "plugins"))
	for _, dir := range strings.Split(plugins, ",") {
		if jars, _ := filepath.Glob(filepath.Join(dir, debeziumPlugin, "debezium-connector-postgres-*.jar")); len(jars) > 0 {
			pluginDir, _ = filepath.Abs(filepath.Join(dir, debeziumPlugin))
			break
		}
	}
	if pluginDir == "" {
		missing = append(missing, fmt.Sprintf("the Debezium plugin: no %s/debezium-connector-postgres-*.jar in SLUICE_TEST_PLUGINS=%s (make plugins lays it out in .cache/plugins)", debeziumPlugin, plugins))
	}
	hostDir, _ = filepath.Abs(envOr("SLUICE_CONNECT_HOST_DIR", filepath.Join(b.root, "connect", "javahost", "target")))
	if _, err := os.Stat(filepath.Join(hostDir, "sluice-connect-host.jar")); err != nil {
		missing = append(missing, fmt.Sprintf("the connector host: no sluice-connect-host.jar in SLUICE_CONNECT_HOST_DIR=%s (make javahost builds it)", hostDir))
	}
	p, err := pgFromEnv()
	switch {
	case err != nil:
		missing = append(missing, err.Error())
	case p == nil:
		missing = append(missing, "PostgreSQL: SLUICE_TEST_POSTGRES (host:port) is not set (make postgres-up starts one on 127.0.0.1:15432)")
	default:
		if _, err := exec.LookPath("psql"); err != nil {
			missing = append(missing, "psql, PostgreSQL's client, is not on PATH")
		} else if level, err := p.run("SHOW wal_level"); err != nil {
			missing = append(missing, "PostgreSQL on SLUICE_TEST_POSTGRES: "+err.Error()+" (make postgres-up starts one on 127.0.0.1:15432)")
		} else if level != "logical" {
			missing = append(missing, fmt.Sprintf("PostgreSQL on %s:%s has wal_level=%s, Debezium needs logical", p.host, p.port, level))
		} else {
			b.pg = p
		}
	}
	return pluginDir, hostDir, missing
}

// dbzResult is one run of scenario 7 on one system.
type dbzResult struct {
	snapSecs  float64 // from the POST until every row is in the topic
	firstSecs float64 // from the POST until the first row is in the topic
	// validateSecs is the first request for the plugin after the node
	// started, a validation of the config: for Sluice it starts the host.
	validateSecs float64
	streamSecs   float64 // from the first change until every change is in the topic
	writeSecs    float64 // PostgreSQL's time to commit the changes
	// peak RSS over the run: the agent and its connector host (the worker),
	// the connector host alone, and every process of the system.
	rss, hostRSS, allRSS float64
	samples              int
}

// Figures of scenario 7.
const (
	figDbzValidate = "first request after start: validate the config"
	figDbzFirst    = "create connector → first snapshot record in topic"
	figDbzRSS      = "agent + connector host / worker RSS, peak"
	figDbzAll      = "all processes RSS, peak"
	figDbzHost     = "connector host JVM RSS, peak"
	figDbzWrite    = "PostgreSQL commits the changes in"
)

// scenarioDebezium is scenario 7: Debezium's PostgreSQL connector, the
// same plugin directory and config on both systems, per run and system on
// a fresh cluster with one agent / one worker and a table of its own. A
// validation of the config comes first, timed on its own (Sluice starts
// its connector host then). (a) Snapshot: dbzRows rows, timed from the
// POST that creates the connector until every row is in the topic. (b)
// Streaming: once it is, dbzChanges inserts, updates and deletes, timed
// from the first statement until every change is in the topic. Resident
// memory is sampled from the validation to the last change. Connect runs
// with the benchmark's -Xmx1g and again with the host's -Xmx512m. Runs
// alternate between the systems and only one runs at a time.
func (b *bench) scenarioDebezium() error {
	const scen = "7 debezium"
	pluginDir, hostDir, missing := b.debeziumSetup()
	if len(missing) > 0 {
		msg := "scenario 7 (debezium) skipped: missing " + strings.Join(missing, "; ")
		b.logf("  %s", msg)
		b.note("%s", msg)
		return nil
	}
	rows, changes := b.sizes.dbzRows, b.sizes.dbzChanges
	if _, err := changeScript("t", rows, changes); err != nil {
		return err
	}
	paths, err := b.debeziumPaths(pluginDir, hostDir)
	if err != nil {
		return err
	}
	defer b.dropPostgres()
	suts := []dbzSUT{{sys: sysSluice, label: "sluice"}}
	if b.peer == sysConnect {
		// Connect twice: with the benchmark's worker heap, and with the
		// connector host's default heap, so that the memory figures can
		// be compared at one heap size too.
		suts = append(suts, dbzSUT{sys: sysConnect, label: "connect"},
			dbzSUT{sys: sysConnect, label: "connect_x512", suffix: " [worker -Xmx512m]", jvmOpts: []string{"-Xmx512m"}})
	}
	res := make([][]dbzResult, len(suts))
	for run := range b.runs {
		for i, sut := range suts {
			r, err := b.debeziumRun(sut, run, paths)
			if err != nil {
				return fmt.Errorf("run %d, %s%s: %w", run+1, sut.sys, sut.suffix, err)
			}
			res[i] = append(res[i], r)
			b.logf("  run %d %s%s: validate %.1fs, first record after %.1fs, snapshot %.1fs (%.0f records/s), %d changes streamed in %.1fs (%.0f records/s; committed in %.1fs), peak RSS %.0f MiB (connector host %.0f MiB, all processes %.0f MiB; %d samples)",
				run+1, sut.sys, sut.suffix, r.validateSecs, r.firstSecs, r.snapSecs, float64(rows)/r.snapSecs, changes, r.streamSecs, float64(changes)/r.streamSecs, r.writeSecs, r.rss, r.hostRSS, r.allRSS, r.samples)
		}
	}
	figSnapTime := fmt.Sprintf("snapshot of %dk rows → topic, wall time", rows/1000)
	figSnap := fmt.Sprintf("snapshot of %dk rows → topic", rows/1000)
	figStream := fmt.Sprintf("%dk streamed changes → topic", changes/1000)
	figs := []struct {
		name, unit, better string
		val                func(dbzResult) float64
	}{
		{figDbzValidate, "s", "lower", func(r dbzResult) float64 { return r.validateSecs }},
		{figDbzFirst, "s", "lower", func(r dbzResult) float64 { return r.firstSecs }},
		{figSnapTime, "s", "lower", func(r dbzResult) float64 { return r.snapSecs }},
		{figSnap, "records/s", "higher", func(r dbzResult) float64 { return float64(rows) / r.snapSecs }},
		{figStream, "records/s", "higher", func(r dbzResult) float64 { return float64(changes) / r.streamSecs }},
		{figDbzRSS, "MiB", "lower", func(r dbzResult) float64 { return r.rss }},
		{figDbzAll, "MiB", "lower", func(r dbzResult) float64 { return r.allRSS }},
		{figDbzWrite, "s", "info", func(r dbzResult) float64 { return r.writeSecs }},
	}
	for _, f := range figs {
		for i, sut := range suts {
			var vals []float64
			for _, r := range res[i] {
				vals = append(vals, f.val(r))
			}
			note := ""
			if sut.sys == sysSluice {
				switch f.name {
				case figDbzValidate:
					note = "starts the connector host JVM, which scans the plugin path"
				case figDbzAll:
					note = "NATS server + coordinator + agent + connector host"
				case figStream:
					note = "60% inserts, 30% updates, 10% deletes, ≤ 1,000 rows a statement, a transaction each; from the first statement"
				case figDbzRSS:
					note = fmt.Sprintf("sampled every %v; connector host -Xmx512m (its default), worker -Xmx1g", rssInterval)
				}
			}
			b.add(scen, sut.sys, f.name+sut.suffix, f.unit, f.better, vals, note)
		}
	}
	var host []float64
	for _, r := range res[0] {
		host = append(host, r.hostRSS)
	}
	b.add(scen, sysSluice, figDbzHost, "MiB", "info", host, "")
	return nil
}

// debeziumPaths lays out what every run with Debezium shares: a plugin
// path holding only the Debezium plugin (the other plugins of
// SLUICE_TEST_PLUGINS would cost both systems a scan and memory) and a
// class path entry with the connector host's Sanitizer for the worker.
func (b *bench) debeziumPaths(pluginDir, hostDir string) (dbzPaths, error) {
	pluginPath := filepath.Join(b.tmp, "debezium-plugin-path")
	if err := os.MkdirAll(pluginPath, 0o755); err != nil {
		return dbzPaths{}, err
	}
	if err := os.Symlink(pluginDir, filepath.Join(pluginPath, debeziumPlugin)); err != nil && !os.IsExist(err) {
		return dbzPaths{}, err
	}
	// Debezium 3.6 needs a class Kafka 4.4 moved (docs/plugins.md): the
	// connector host puts it back, and the worker gets the host's own
	// compiled class on its class path, or its task fails to start.
	shimDir := filepath.Join(b.tmp, "debezium-compat")
	if err := extractClass(filepath.Join(hostDir, "sluice-connect-host.jar"), sanitizerShim, shimDir); err != nil {
		return dbzPaths{}, err
	}
	b.logf("  plugin path %s → %s, connector host %s, PostgreSQL %s:%s", pluginPath, pluginDir, hostDir, b.pg.host, b.pg.port)
	return dbzPaths{pluginPath: pluginPath, hostDir: hostDir, shimDir: shimDir}, nil
}

// dbzSUT is a system scenario 7 measures: Sluice, or Kafka Connect with
// extra JVM options, whose figures get suffix.
type dbzSUT struct {
	sys     string
	native  bool   // the native connector (scenario 9), not Debezium
	label   string // in the table's name: a PostgreSQL identifier
	suffix  string
	jvmOpts []string
	env     []string // the agent's extra environment
}

// dbzPaths are the directories every run of scenario 7 shares.
type dbzPaths struct {
	pluginPath string // a plugin path holding the Debezium plugin alone
	hostDir    string // the built connector host
	shimDir    string // a class path entry with the host's Sanitizer
}

// debeziumRun is one run of scenario 7 on a fresh cluster of sut.
func (b *bench) debeziumRun(sut dbzSUT, run int, paths dbzPaths) (dbzResult, error) {
	sys := sut.sys
	var r dbzResult
	rows, changes := b.sizes.dbzRows, b.sizes.dbzChanges
	// The table, its slot and publication share one name, unique to the
	// run and system, which dropPrefixed finds again.
	table := fmt.Sprintf("%s%s_%d", pgPrefix(b.runID), sut.label, run+1)
	defer func() {
		if err := b.pg.dropPrefixed(table); err != nil {
			b.logf("  dropping %s: %v", table, err)
		}
	}()
	t0 := time.Now()
	if err := b.pg.fillTable(table, rows); err != nil {
		return r, err
	}
	b.logf("  run %d %s%s: table %s of %d rows written in %v", run+1, sys, sut.suffix, table, rows, time.Since(t0).Round(100*time.Millisecond))
	c, err := b.pgCluster(sut, fmt.Sprintf("dbz%d", run), paths)
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
	sampler := sampleSystemRSS(c)
	defer func() { _, _, _ = sampler.stop() }() // on an early return; stopped below otherwise

	// The first request for the plugin starts Sluice's connector host
	// (which scans the plugin path again), while a worker scanned before
	// its REST API answered: a validation first, timed on its own, keeps
	// that start out of the snapshot's time.
	cfg := b.debeziumCfg(table, prefix)
	t0 = time.Now()
	if _, err := c.rest().Plugins().Validate(context.Background(), debeziumClass, cfg); err != nil {
		return r, c.failed("validate", err)
	}
	r.validateSecs = time.Since(t0).Seconds()
	t0 = time.Now()
	if _, err := c.rest().Connectors().Create(context.Background(), api.CreateConnectorRequest{Name: name, Config: cfg}); err != nil {
		return r, c.failed("create "+name, err)
	}
	if err := c.waitRecords(name, rows, pgTimeout, w.count); err != nil {
		return r, fmt.Errorf("snapshot: %w", err)
	}
	r.snapSecs = time.Since(t0).Seconds()
	r.firstSecs = w.first.Sub(t0).Seconds()

	script, err := changeScript(table, rows, changes)
	if err != nil {
		return r, err
	}
	t0 = time.Now()
	if _, err := b.pg.run(script); err != nil {
		return r, err
	}
	r.writeSecs = time.Since(t0).Seconds()
	if err := c.waitRecords(name, rows+changes, pgTimeout, w.count); err != nil {
		return r, fmt.Errorf("streaming: %w", err)
	}
	r.streamSecs = time.Since(t0).Seconds()

	peaks, n, err := sampler.stop()
	if err != nil {
		return r, fmt.Errorf("resident memory: %w", err)
	}
	r.rss, r.hostRSS, r.allRSS, r.samples = peaks[0], peaks[1], peaks[2], n
	if err := c.rest().Connectors().Delete(context.Background(), name); err != nil {
		return r, c.failed("delete "+name, err)
	}
	return r, nil
}

// pgTimeout bounds every wait for a PostgreSQL connector's records.
const pgTimeout = 10 * time.Minute

// fillTable creates table (id int primary key, name, qty, updated_at and an
// 80-character note: ≈ 130 bytes a row) holding ids 1…rows, as scenarios 7
// and 9 snapshot it.
func (p *pg) fillTable(table string, rows int) error {
	_, err := p.run(fmt.Sprintf(`CREATE TABLE %[1]s (id int PRIMARY KEY, name text NOT NULL, qty int NOT NULL,
		updated_at timestamptz NOT NULL, note text NOT NULL);
		INSERT INTO %[1]s SELECT g, 'item ' || g, g %% 1000, now(), repeat('x', 80) FROM generate_series(1, %[2]d) g;
		VACUUM ANALYZE %[1]s;`, table, rows))
	return err
}

// pgCluster starts a cluster of one agent or worker for sut: for Debezium
// with the plugin path holding it (and the worker with the host's
// Sanitizer on its class path), for the native connector a plain agent.
func (b *bench) pgCluster(sut dbzSUT, label string, paths dbzPaths) (*cluster, error) {
	opts := clusterOpts{jvmOpts: sut.jvmOpts, agentEnv: sut.env}
	if !sut.native {
		opts.props = map[string]string{"plugin.path": paths.pluginPath}
		opts.classpath = []string{paths.shimDir}
		opts.agentArgs = []string{"--plugin-path", paths.pluginPath, "--connect-host-dir", paths.hostDir}
	}
	return b.startClusterOpts(sut.sys, label, 1, opts)
}

// topicWatch counts the records of a PostgreSQL connector's topic for
// waitRecords: it gives up when the connector or its task failed (a failed
// task writes nothing more; the status is read once a second), and notes
// when the count first went past above.
type topicWatch struct {
	c           *cluster
	name, topic string
	above       int64
	first       time.Time // when the count first exceeded above
	checked     time.Time
}

// from starts a new phase: first is taken again, once the count exceeds n.
func (w *topicWatch) from(n int64) { w.above, w.first = n, time.Time{} }

// count is the topic's records so far.
func (w *topicWatch) count() (int64, error) {
	if time.Since(w.checked) > time.Second {
		w.checked = time.Now()
		if st, err := w.c.statuses(); err == nil {
			if why := failure(st[w.name]); why != "" {
				return 0, giveUp{fmt.Errorf("%s: %s", w.name, why)}
			}
		}
	}
	n, err := w.c.b.kafka.records(w.topic)
	if err == nil && n > w.above && w.first.IsZero() {
		w.first = time.Now()
	}
	return n, err
}

// sampleSystemRSS samples, every rssInterval, the resident memory of c's
// first node with every process below it (an agent and its connector host
// JVM, or a worker), of the processes below it alone, and of every process
// of the system (adding Sluice's NATS server and coordinator).
func sampleSystemRSS(c *cluster) *peakSampler {
	node := c.nodes[0].p
	return samplePeaks(rssInterval, func() ([]float64, error) {
		tree, self, err := treeRSSMiB(node.Pid())
		if err != nil {
			return nil, err
		}
		all := tree
		for _, p := range c.control() {
			v, err := p.rssMiB()
			if err != nil {
				return nil, err
			}
			all += v
		}
		return []float64{tree, tree - self, all}, nil
	})
}

// debeziumCfg is the connector's config, the same on both systems (as
// tests/plugins configures Debezium): the table's own slot and
// publication, JSON without schemas.
func (b *bench) debeziumCfg(table, prefix string) map[string]string {
	return map[string]string{
		"connector.class": debeziumClass, "tasks.max": "1",
		"database.hostname": b.pg.host, "database.port": b.pg.port,
		"database.user": "postgres", "database.password": "unused", "database.dbname": "postgres",
		"topic.prefix": prefix, "plugin.name": "pgoutput",
		"slot.name": table, "publication.name": table, "publication.autocreate.mode": "filtered",
		"table.include.list": "public." + table,
		// One record per change, so that the topic's end offset counts
		// the changes: no tombstone after a delete's event.
		"tombstones.on.delete": "false",
		"key.converter":        "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "false",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
	}
}

// changeScript is the psql script of the streamed changes of a table of
// rows rows (ids 1…rows): rounds of up to 1,000 changes, each statement its
// own transaction — 60% inserts of new ids, 30% updates of the lowest ids
// not yet updated, the rest deletes of the highest snapshot ids not yet
// deleted. It fails when rows are too few for the updates and deletes.
func changeScript(table string, rows, changes int) (string, error) {
	const round = 1000
	var sb strings.Builder
	nextIns, nextUpd, nextDel := rows+1, 1, rows
	for left := changes; left > 0; {
		size := min(round, left)
		ins, upd := size*6/10, size*3/10
		del := size - ins - upd
		if ins > 0 {
			fmt.Fprintf(&sb, "INSERT INTO %s SELECT g, 'item ' || g, g %% 1000, now(), repeat('y', 80) FROM generate_series(%d, %d) g;\n",
				table, nextIns, nextIns+ins-1)
		}
		if upd > 0 {
			fmt.Fprintf(&sb, "UPDATE %s SET qty = qty + 1, name = 'updated ' || id, updated_at = now() WHERE id BETWEEN %d AND %d;\n",
				table, nextUpd, nextUpd+upd-1)
		}
		if del > 0 {
			fmt.Fprintf(&sb, "DELETE FROM %s WHERE id BETWEEN %d AND %d;\n", table, nextDel-del+1, nextDel)
		}
		nextIns, nextUpd, nextDel = nextIns+ins, nextUpd+upd, nextDel-del
		left -= size
	}
	if nextUpd-1 > nextDel {
		return "", fmt.Errorf("scenario 7: %d changes update and delete more than the %d rows of the snapshot", changes, rows)
	}
	return sb.String(), nil
}

// extractClass copies the class file name (a path in the jar) from jar to
// the same path under dir, a class path entry.
func extractClass(jar, name, dir string) error {
	zr, err := zip.OpenReader(jar)
	if err != nil {
		return err
	}
	defer zr.Close()
	f, err := zr.Open(name)
	if err != nil {
		return fmt.Errorf("%s in %s: %w", name, jar, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	out := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, data, 0o644)
}
