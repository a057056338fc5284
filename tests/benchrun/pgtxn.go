package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
)

// scenarioPGTransaction is scenario 10: the native PostgreSQL connector's
// memory while one transaction of txnMiB MiB streams through it. The table
// (id, v text stored uncompressed, so that the WAL carries every byte) is
// captured from empty; once the task streams, one INSERT commits txnMiB MiB
// in rows of txnValueKiB (64 KiB by default), and the agent's resident
// memory is sampled from before the INSERT until every row is in the
// topic. One run each of the native connector in an agent with its
// defaults and in one with a soft memory limit (as scenario 9's systems).
func (b *bench) scenarioPGTransaction() error {
	const scen = "10 postgres transaction"
	if _, _, missing := b.debeziumSetup(); b.pg == nil {
		msg := "scenario 10 (postgres transaction) skipped: missing " + strings.Join(missing, "; ")
		b.logf("  %s", msg)
		b.note("%s", msg)
		return nil
	}
	defer b.dropPostgres()
	for _, sut := range b.pgSystems(false) {
		if err := b.pgTransaction(scen, sut); err != nil {
			return err
		}
	}
	return nil
}

// pgTransaction is one run of scenario 10 on an agent of sut.
func (b *bench) pgTransaction(scen string, sut dbzSUT) error {
	mib, txnValueKiB := b.sizes.txnMiB, b.sizes.txnValueKiB
	rows := mib * 1024 / txnValueKiB
	table := pgPrefix(b.runID) + "s10_" + sut.label
	defer func() {
		if err := b.pg.dropPrefixed(table); err != nil {
			b.logf("  dropping %s: %v", table, err)
		}
	}()
	if _, err := b.pg.run(fmt.Sprintf(`CREATE TABLE %[1]s (id int PRIMARY KEY, v text NOT NULL);
		ALTER TABLE %[1]s ALTER COLUMN v SET STORAGE EXTERNAL;`, table)); err != nil {
		return err
	}
	c, err := b.pgCluster(sut, "txn-"+strings.ReplaceAll(sut.label, "_", "-"), dbzPaths{})
	if err != nil {
		return err
	}
	defer c.close()
	prefix := c.name("db")
	topic := prefix + ".public." + table
	if err := b.kafka.createTopic(topic, 1); err != nil {
		return err
	}
	name := c.name("pg")
	cfg := b.debeziumCfg(table, prefix)
	cfg["connector.class"] = nativeClass
	if _, err := c.rest().Connectors().Create(context.Background(), api.CreateConnectorRequest{Name: name, Config: cfg}); err != nil {
		return c.failed("create "+name, err)
	}
	// Streaming once the task holds its slot (the empty table's snapshot
	// is over by then or a moment later: it writes nothing).
	if err := waitFor(2*time.Minute, "slot "+table+" active", func() (bool, string) {
		out, err := b.pg.run(fmt.Sprintf("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '%s' AND active", table))
		if err != nil {
			return false, err.Error()
		}
		return out == "1", "not active yet"
	}); err != nil {
		return err
	}
	idle, err := c.nodes[0].p.rssMiB()
	if err != nil {
		return err
	}
	w := &topicWatch{c: c, name: name, topic: topic}
	sampler := sampleSystemRSS(c)
	defer func() { _, _, _ = sampler.stop() }() // on an early return; stopped below otherwise
	t0 := time.Now()
	if _, err := b.pg.run(fmt.Sprintf("INSERT INTO %s SELECT g, repeat(md5(g::text), %d) FROM generate_series(1, %d) g",
		table, max(txnValueKiB*1024/32, 1), rows)); err != nil {
		return err
	}
	commitSecs := time.Since(t0).Seconds()
	b.logf("  one transaction of %d rows × %d KiB (%d MiB) committed in %.1fs", rows, txnValueKiB, mib, commitSecs)
	t1 := time.Now()
	if err := c.waitRecords(name, rows, 30*time.Minute, w.count); err != nil {
		return fmt.Errorf("transaction: %w", err)
	}
	drainSecs := time.Since(t1).Seconds()
	firstSecs := w.first.Sub(t1).Seconds()
	peaks, samples, err := sampler.stop()
	if err != nil {
		return fmt.Errorf("resident memory: %w", err)
	}
	size, err := b.pg.run(fmt.Sprintf("SELECT pg_size_pretty(pg_total_relation_size('%s'))", table))
	if err != nil {
		return err
	}
	b.logf("  %s%s: %d records in %.1fs after the commit (first after %.1fs), table %s, peak agent RSS %.0f MiB (idle %.0f MiB, %d samples)",
		sut.label, sut.suffix, rows, drainSecs, firstSecs, size, peaks[0], idle, samples)
	fig := fmt.Sprintf("one transaction of %d MiB (%d rows × %d KiB)", mib, rows, txnValueKiB)
	b.add(scen, sysSluice, "agent RSS before the transaction"+sut.suffix, "MiB", "info", []float64{idle}, "the native connector streaming an idle table")
	b.add(scen, sysSluice, "agent RSS, peak, "+fig+sut.suffix, "MiB", "lower", []float64{peaks[0]},
		fmt.Sprintf("sampled every %v from the INSERT until every row is in the topic", rssInterval))
	b.add(scen, sysSluice, "PostgreSQL commits "+fig+sut.suffix, "s", "info", []float64{commitSecs}, "")
	b.add(scen, sysSluice, "commit → first record of the transaction in topic"+sut.suffix, "s", "info", []float64{firstSecs}, "")
	b.add(scen, sysSluice, fig+" → topic, from the commit"+sut.suffix, "MiB/s", "higher", []float64{float64(mib) / drainSecs}, "")
	if err := c.rest().Connectors().Delete(context.Background(), name); err != nil {
		return c.failed("delete "+name, err)
	}
	return nil
}
