package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
)

// lineBytes is the length of every input line, without its newline.
const lineBytes = 100

// line is input line i: its number and padding, lineBytes long.
func line(i int) string {
	s := fmt.Sprintf("%010d ", i)
	return s + strings.Repeat("x", lineBytes-len(s))
}

// scenarioData is scenario 4: records per second of a file source (a file
// of b.sizes.lines lines → a new topic), a file sink (a topic of as many
// records → a new file) and, for Sluice only, the generator source. Each
// measurement runs from the POST that creates the connector until the last
// record is in the topic or the file; one cluster per system with one agent
// / worker, runs alternating between the systems.
func (b *bench) scenarioData() error {
	const scen = "4 data plane"
	n := b.sizes.lines
	input := filepath.Join(b.tmp, "data-input.txt")
	if err := writeLines(input, n); err != nil {
		return err
	}
	sinkTopic := b.runID + "-data-sink-input"
	if err := b.kafka.createTopic(sinkTopic, 1); err != nil {
		return err
	}
	t0 := time.Now()
	if err := b.kafka.produce(sinkTopic, n, line); err != nil {
		return err
	}
	b.logf("  inputs: %s (%d lines of %d bytes) and topic %s, produced in %v", input, n, lineBytes, sinkTopic, time.Since(t0).Round(100*time.Millisecond))
	var cs []*cluster
	for _, sys := range b.systems() {
		c, err := b.startCluster(sys, "data", 1, nil)
		if err != nil {
			return err
		}
		defer c.close()
		cs = append(cs, c)
	}
	figSrc := fmt.Sprintf("file source, %dk lines → topic", n/1000)
	figSink := fmt.Sprintf("file sink, topic → file, %dk records", n/1000)
	figGen := fmt.Sprintf("generator source, %dk records → topic", n/1000)
	figProdFloor := fmt.Sprintf("bare franz-go producer, %dk records → topic (source floor)", n/1000)
	figConsFloor := fmt.Sprintf("bare franz-go consumer, topic → file, %dk records (sink floor)", n/1000)
	vals := map[string]map[string][]float64{sysKafka: {}}
	timeout := 10 * time.Minute
	for run := range b.runs {
		// The floors first in every run, so that they alternate with the
		// systems' runs as those do with each other (datafloor.go).
		ftopic := fmt.Sprintf("%s-floor-gen-%d", b.runID, run)
		if err := b.kafka.createTopic(ftopic, 1); err != nil {
			return err
		}
		rate, err := b.producerFloor(ftopic, n)
		if err != nil {
			return fmt.Errorf("run %d: %w", run+1, err)
		}
		vals[sysKafka][figProdFloor] = append(vals[sysKafka][figProdFloor], rate)
		rate, err = b.consumerFloor(sinkTopic, fmt.Sprintf("%s-floor-sink-%d", b.runID, run),
			filepath.Join(b.tmp, fmt.Sprintf("floor-sink-%d.txt", run)), n)
		if err != nil {
			return fmt.Errorf("run %d: %w", run+1, err)
		}
		vals[sysKafka][figConsFloor] = append(vals[sysKafka][figConsFloor], rate)
		b.logf("  run %d floors: producer %.0f records/s, consumer → file %.0f records/s", run+1,
			vals[sysKafka][figProdFloor][run], vals[sysKafka][figConsFloor][run])
		for _, c := range cs {
			if vals[c.sys] == nil {
				vals[c.sys] = map[string][]float64{}
			}
			// File source.
			topic := c.name(fmt.Sprintf("src-%d", run))
			if err := b.kafka.createTopic(topic, 1); err != nil {
				return err
			}
			rate, err = c.timeConnector(c.name(fmt.Sprintf("src-%d", run)), sourceCfg(input, topic), n, timeout,
				func() (int64, error) { return b.kafka.records(topic) })
			if err != nil {
				return fmt.Errorf("run %d, file source: %w", run+1, err)
			}
			vals[c.sys][figSrc] = append(vals[c.sys][figSrc], rate)
			// File sink.
			out := filepath.Join(c.dir, fmt.Sprintf("sink-%d.txt", run))
			rate, err = c.timeConnector(c.name(fmt.Sprintf("sink-%d", run)), map[string]string{
				"connector.class": fileSink, "tasks.max": "1", "topics": sinkTopic, "file": out,
			}, n, timeout, func() (int64, error) {
				fi, err := os.Stat(out)
				if err != nil {
					return 0, nil
				}
				return fi.Size() / (lineBytes + 1), nil
			})
			if err != nil {
				return fmt.Errorf("run %d, file sink: %w", run+1, err)
			}
			vals[c.sys][figSink] = append(vals[c.sys][figSink], rate)
			b.logf("  run %d %s: file source %.0f records/s, file sink %.0f records/s", run+1, c.sys,
				vals[c.sys][figSrc][run], vals[c.sys][figSink][run])
			if c.sys != sysSluice {
				continue
			}
			// Generator source: Sluice only.
			gtopic := c.name(fmt.Sprintf("gen-%d", run))
			if err := b.kafka.createTopic(gtopic, 1); err != nil {
				return err
			}
			rate, err = c.timeConnector(c.name(fmt.Sprintf("gen-%d", run)), map[string]string{
				"connector.class": generator, "tasks.max": "1", "topic": gtopic, "streams": "1",
				"count": strconv.Itoa(n), "rate": "1000000000", "record.bytes": strconv.Itoa(lineBytes),
			}, n, timeout, func() (int64, error) { return b.kafka.records(gtopic) })
			if err != nil {
				return fmt.Errorf("run %d, generator: %w", run+1, err)
			}
			vals[c.sys][figGen] = append(vals[c.sys][figGen], rate)
			b.logf("  run %d %s: generator %.0f records/s", run+1, c.sys, rate)
		}
	}
	for _, f := range []string{figSrc, figSink} {
		for _, sys := range b.systems() {
			b.add(scen, sys, f, "records/s", "higher", vals[sys][f], "")
		}
	}
	note := ""
	if b.peer == sysConnect {
		note = "Kafka Connect has no generator connector: Sluice only"
	}
	b.add(scen, sysSluice, figGen, "records/s", "higher", vals[sysSluice][figGen], note)
	b.add(scen, sysKafka, figProdFloor, "records/s", "higher", vals[sysKafka][figProdFloor], "")
	b.add(scen, sysKafka, figConsFloor, "records/s", "higher", vals[sysKafka][figConsFloor], "")
	for _, sys := range b.systems() {
		b.add(scen, sys, "file sink ÷ sink floor", "×", "higher",
			perRun(vals[sys][figSink], vals[sysKafka][figConsFloor]), "per run: the run's rate over the floor's of the same run")
	}
	b.add(scen, sysSluice, "generator ÷ source floor", "×", "higher",
		perRun(vals[sysSluice][figGen], vals[sysKafka][figProdFloor]), "per run: the run's rate over the floor's of the same run")
	return nil
}

// perRun divides each of xs by the ys of the same run.
func perRun(xs, ys []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for i := range min(len(xs), len(ys)) {
		if ys[i] != 0 {
			out = append(out, xs[i]/ys[i])
		}
	}
	return out
}

// timeConnector creates a connector and returns the records per second
// from the POST until count() reaches n; it deletes the connector after.
func (c *cluster) timeConnector(name string, cfg map[string]string, n int, timeout time.Duration, count func() (int64, error)) (float64, error) {
	t0 := time.Now()
	if _, err := c.rest().Connectors().Create(context.Background(), api.CreateConnectorRequest{Name: name, Config: cfg}); err != nil {
		return 0, c.failed("create "+name, err)
	}
	if err := c.waitRecords(name, n, timeout, count); err != nil {
		return 0, err
	}
	d := time.Since(t0).Seconds()
	if err := c.rest().Connectors().Delete(context.Background(), name); err != nil {
		return 0, c.failed("delete "+name, err)
	}
	return float64(n) / d, nil
}

// giveUp is an error of a count that ends waitRecords at once (a failed
// task); any other error is retried.
type giveUp struct{ error }

// recordPoll is how often waitRecords counts.
const recordPoll = 10 * time.Millisecond

// waitRecords waits until count() reaches n records written by connector
// name; more than n is an error: the input has n, so the connector wrote
// some twice.
func (c *cluster) waitRecords(name string, n int, timeout time.Duration, count func() (int64, error)) error {
	var got int64
	var fatal error
	// Every 10 ms: a run of 200k records takes a few hundred milliseconds,
	// and the floors it is compared with time their own end exactly.
	err := waitEvery(recordPoll, timeout, fmt.Sprintf("%s: %d records through %s", c.sys, n, name), func() (bool, string) {
		v, err := count()
		if errors.As(err, &giveUp{}) {
			fatal = err
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		got = v
		return v >= int64(n), fmt.Sprintf("%d so far", v)
	})
	if fatal != nil {
		return fatal
	}
	if err != nil {
		return err
	}
	if got > int64(n) {
		return fmt.Errorf("%s: %d records through %s, more than the %d of its input", c.sys, got, name, n)
	}
	return nil
}

// writeLines writes n input lines to path.
func writeLines(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		w.WriteString(line(i))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// scenarioFootprint is scenario 5, per run and system on a fresh cluster
// with one agent / one worker: resident memory idle (5s after ready), with
// footTasks running file sources (5s after all RUNNING), and with
// coordConns connectors (those stopped, the rest created STOPPED; 5s after
// the last create).
func (b *bench) scenarioFootprint() error {
	const scen = "5 footprint"
	nt, nc := b.sizes.footTasks, b.sizes.coordConns
	files, err := b.sourceFiles("lifecycle", nt)
	if err != nil {
		return err
	}
	figIdle := "agent / worker RSS, idle"
	figTasks := fmt.Sprintf("agent / worker RSS, %d running tasks", nt)
	figAll := fmt.Sprintf("all processes RSS, %d running tasks", nt)
	figCoord := fmt.Sprintf("coordinator / worker RSS, %d connectors", nc)
	figCoordIdle := "coordinator RSS, idle"
	figNATS := fmt.Sprintf("NATS server RSS, %d running tasks", nt)
	vals := map[string]map[string][]float64{}
	const settle = 5 * time.Second
	for run := range b.runs {
		for _, sys := range b.systems() {
			if vals[sys] == nil {
				vals[sys] = map[string][]float64{}
			}
			add := func(fig string, v float64) { vals[sys][fig] = append(vals[sys][fig], v) }
			rss := func(ps ...*proc) (float64, error) {
				var sum float64
				for _, p := range ps {
					v, err := p.rssMiB()
					if err != nil {
						return 0, err
					}
					sum += v
				}
				return sum, nil
			}
			err := func() error {
				c, err := b.startCluster(sys, fmt.Sprintf("foot%d", run), 1, nil)
				if err != nil {
					return err
				}
				defer c.close()
				nd := c.nodes[0]
				all := append([]*proc{nd.p}, c.control()...)
				time.Sleep(settle)
				v, err := rss(nd.p)
				if err != nil {
					return err
				}
				add(figIdle, v)
				if sys == sysSluice {
					if v, err = rss(c.coord); err != nil {
						return err
					}
					add(figCoordIdle, v)
				}
				topic := c.name("foot")
				if err := b.kafka.createTopic(topic, 1); err != nil {
					return err
				}
				names := c.names("foot", nt)
				if err := c.createAll(names, "", func(i int) map[string]string { return sourceCfg(files[i], topic) }); err != nil {
					return err
				}
				if _, err := c.waitAll(names, 5*time.Minute, "RUNNING", allRunning(1)); err != nil {
					return err
				}
				time.Sleep(settle)
				if v, err = rss(nd.p); err != nil {
					return err
				}
				add(figTasks, v)
				if v, err = rss(all...); err != nil {
					return err
				}
				add(figAll, v)
				if sys == sysSluice {
					if v, err = rss(c.nats); err != nil {
						return err
					}
					add(figNATS, v)
				}
				if err := c.putAll(names, "stop"); err != nil {
					return err
				}
				more := c.names("stopped", nc-nt)
				if err := c.createAll(more, "STOPPED", func(i int) map[string]string {
					return sourceCfg(files[0], topic)
				}); err != nil {
					return err
				}
				if _, err := c.waitAll(append(names, more...), 10*time.Minute, "STOPPED", isStopped); err != nil {
					return err
				}
				time.Sleep(settle)
				coord := nd.p
				if sys == sysSluice {
					coord = c.coord
				}
				if v, err = rss(coord); err != nil {
					return err
				}
				add(figCoord, v)
				b.logf("  run %d %s: idle %.0f MiB, %d tasks %.0f MiB (all processes %.0f MiB), %d connectors %.0f MiB",
					run+1, sys, vals[sys][figIdle][run], nt, vals[sys][figTasks][run], vals[sys][figAll][run], nc, v)
				return nil
			}()
			if err != nil {
				return fmt.Errorf("run %d, %s: %w", run+1, sys, err)
			}
		}
	}
	for _, f := range []string{figIdle, figTasks, figAll, figCoord} {
		for _, sys := range b.systems() {
			note := ""
			if f == figAll && sys == sysSluice {
				note = "NATS server + coordinator + agent"
			}
			b.add(scen, sys, f, "MiB", "lower", vals[sys][f], note)
		}
	}
	b.add(scen, sysSluice, figCoordIdle, "MiB", "info", vals[sysSluice][figCoordIdle], "")
	b.add(scen, sysSluice, figNATS, "MiB", "info", vals[sysSluice][figNATS], "")
	return nil
}
