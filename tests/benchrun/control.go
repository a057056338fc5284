package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
)

// Class names, the same for both systems.
const (
	fileSource = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	fileSink   = "org.apache.kafka.connect.file.FileStreamSinkConnector"
	generator  = "io.sluice.connect.generator.GeneratorSourceConnector"
)

// sourceFiles writes n small input files (10 lines each) shared by both
// systems and returns their absolute paths.
func (b *bench) sourceFiles(dir string, n int) ([]string, error) {
	full := filepath.Join(b.tmp, dir)
	if err := os.MkdirAll(full, 0o755); err != nil {
		return nil, err
	}
	paths := make([]string, n)
	for i := range paths {
		paths[i] = filepath.Join(full, fmt.Sprintf("in-%04d.txt", i))
		if _, err := os.Stat(paths[i]); err == nil {
			continue
		}
		var sb strings.Builder
		for l := range 10 {
			fmt.Fprintf(&sb, "file %d line %d\n", i, l)
		}
		if err := os.WriteFile(paths[i], []byte(sb.String()), 0o644); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// names returns n connector names base-0000 … prefixed by the cluster.
func (c *cluster) names(base string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = c.name(fmt.Sprintf("%s-%04d", base, i))
	}
	return out
}

// sourceCfg is a file source of path into topic.
func sourceCfg(path, topic string) map[string]string {
	return map[string]string{"connector.class": fileSource, "tasks.max": "1", "file": path, "topic": topic}
}

// scenarioOffsets is scenario 1: PATCH (10 partitions), GET and DELETE of
// a stopped file source's offsets, latencyOps of each, in 4 blocks that
// alternate between the systems.
// maxOffsetFailures is how many failed operations of one kind scenario 1
// tolerates (and reports) before it gives up.
const maxOffsetFailures = 10

func (b *bench) scenarioOffsets() error {
	const scen = "1 offsets"
	const blocks = 4
	type state struct {
		c    *cluster
		conn string
		ops  map[string][]float64
		blk  map[string][]float64
		// failed counts the operations answered with an error, per kind;
		// firstErr keeps the first such answer for the report.
		failed   map[string]int
		firstErr map[string]string
	}
	var sts []*state
	for _, sys := range b.systems() {
		c, err := b.startCluster(sys, "offsets", 1, nil)
		if err != nil {
			return err
		}
		defer c.close()
		conn := c.name("offsets")
		if _, err := c.rest().Connectors().Create(context.Background(), api.CreateConnectorRequest{Name: conn, InitialState: api.StateStopped,
			// Its data topic is not <prefix>-offsets: that is the
			// cluster's offsets topic, which no connector may write.
			Config: sourceCfg(filepath.Join(b.tmp, "offsets.txt"), c.name("offsets-data"))}); err != nil {
			return c.failed("create "+conn, err)
		}
		if _, err := c.waitAll([]string{conn}, 60*time.Second, "STOPPED", isStopped); err != nil {
			return err
		}
		sts = append(sts, &state{c: c, conn: conn, ops: map[string][]float64{}, blk: map[string][]float64{},
			failed: map[string]int{}, firstErr: map[string]string{}})
	}
	kinds := []string{"PATCH offsets, 10 partitions", "GET offsets", "DELETE offsets"}
	cycle := func(s *state, i int, record bool) error {
		entries := make([]api.ConnectorOffset, 10)
		for p := range entries {
			entries[p] = api.ConnectorOffset{
				Partition: map[string]any{"filename": fmt.Sprintf("/bench/file-%d.txt", p)},
				Offset:    map[string]any{"position": i*10 + p},
			}
		}
		offsets, ctx := s.c.rest().Offsets(), context.Background()
		calls := []func() error{
			func() error { _, err := offsets.Alter(ctx, s.conn, entries); return err },
			func() error { _, err := offsets.Get(ctx, s.conn); return err },
			func() error { _, err := offsets.Reset(ctx, s.conn); return err },
		}
		for k, call := range calls {
			t0 := time.Now()
			if err := call(); err != nil {
				// A failed operation is counted and reported, not timed; the
				// run goes on unless failures become common.
				s.failed[kinds[k]]++
				if s.firstErr[kinds[k]] == "" {
					s.firstErr[kinds[k]] = err.Error()
				}
				b.logf("  %s: %s failed: %v", s.c.sys, kinds[k], err)
				if s.failed[kinds[k]] > maxOffsetFailures {
					return fmt.Errorf("%s: %d %s operations failed, the first: %s", s.c.sys, s.failed[kinds[k]], kinds[k], s.firstErr[kinds[k]])
				}
				continue
			}
			if record {
				s.ops[kinds[k]] = append(s.ops[kinds[k]], float64(time.Since(t0))/float64(time.Millisecond))
			}
		}
		return nil
	}
	for _, s := range sts { // warm up: connections, producers, metadata
		for i := range 5 {
			if err := cycle(s, i, false); err != nil {
				return err
			}
		}
	}
	fl, err := b.newFloor()
	if err != nil {
		return err
	}
	defer fl.close()
	var floorOps, floorBlk, warmOps []float64
	floorBlock := func(n int, record bool) error {
		from := len(floorOps)
		for range n {
			d, err := fl.op(context.Background())
			if err != nil {
				return err
			}
			w, err := fl.warmOp(context.Background())
			if err != nil {
				return err
			}
			if record {
				floorOps = append(floorOps, float64(d)/float64(time.Millisecond))
				warmOps = append(warmOps, float64(w)/float64(time.Millisecond))
			}
		}
		if record {
			floorBlk = append(floorBlk, median(floorOps[from:]))
		}
		return nil
	}
	if err := floorBlock(5, false); err != nil {
		return err
	}
	per := b.sizes.latencyOps / blocks
	for blk := range blocks {
		// The floor's blocks alternate with the systems' as theirs do.
		if err := floorBlock(per, true); err != nil {
			return err
		}
		for _, s := range sts {
			from := map[string]int{}
			for _, k := range kinds {
				from[k] = len(s.ops[k])
			}
			for i := range per {
				if err := cycle(s, blk*per+i, true); err != nil {
					return err
				}
			}
			for _, k := range kinds {
				s.blk[k] = append(s.blk[k], median(s.ops[k][from[k]:]))
			}
		}
	}
	for _, k := range kinds {
		for _, s := range sts {
			b.addLatency(scen, s.c.sys, k, s.ops[k], s.blk[k], s.failed[k], s.firstErr[k])
		}
	}
	b.addLatency(scen, sysKafka, floorFigure, floorOps, floorBlk, 0, "")
	b.addLatency(scen, sysKafka, "the same transaction through a reused producer (no fence)", warmOps, nil, 0, "")
	for _, s := range sts {
		patch := kinds[0]
		ratios := make([]float64, len(floorBlk))
		for i := range floorBlk {
			ratios[i] = s.blk[patch][i] / floorBlk[i]
		}
		b.add(scen, s.c.sys, "PATCH offsets ÷ broker floor, median", "×", "lower", ratios,
			"per block: the block's PATCH median over the floor's median of the block before it")
		b.add(scen, s.c.sys, "PATCH offsets ÷ broker floor, p99", "×", "lower", []float64{p99(s.ops[patch]) / p99(floorOps)}, "")
	}
	return nil
}

// floorFigure names the broker floor of a fenced offsets change (floor.go).
const floorFigure = "broker floor: fence + 10-record transaction until read_committed sees it"

// scenarioLifecycle is scenario 2: per run and system a fresh cluster with
// one agent / one worker; create n file sources STOPPED, resume all until
// every connector and task is RUNNING, stop all until STOPPED, resume all
// again. Each step's wall time runs from the first request to the status
// showing every connector converged.
func (b *bench) scenarioLifecycle() error {
	const scen = "2 lifecycle"
	n := b.sizes.lifecycle
	files, err := b.sourceFiles("lifecycle", n)
	if err != nil {
		return err
	}
	steps := []string{
		fmt.Sprintf("create %d connectors STOPPED", n),
		fmt.Sprintf("resume %d → all RUNNING", n),
		fmt.Sprintf("stop %d → all STOPPED", n),
		fmt.Sprintf("resume %d again → all RUNNING", n),
	}
	vals := map[string]map[string][]float64{}
	timeout := 5 * time.Minute
	for run := range b.runs {
		for _, sys := range b.systems() {
			c, err := b.startCluster(sys, fmt.Sprintf("life%d", run), 1, nil)
			if err != nil {
				return err
			}
			topic := c.name("life")
			if err := b.kafka.createTopic(topic, 1); err != nil {
				c.close()
				return err
			}
			names := c.names("life", n)
			// answered is when the last request of a step was answered: the
			// rest of the step is waiting for the status to converge.
			var answered time.Time
			// converge sends the step's requests, notes when the last was
			// answered, then waits until every connector is in the state.
			converge := func(send func() error, state string, cond func(connStatus) bool) func() error {
				return func() error {
					if err := send(); err != nil {
						return err
					}
					answered = time.Now()
					_, err := c.waitAll(names, timeout, state, cond)
					return err
				}
			}
			resume := func() error { return c.putAll(names, "resume") }
			ops := []func() error{
				converge(func() error {
					return c.createAll(names, "STOPPED", func(i int) map[string]string { return sourceCfg(files[i], topic) })
				}, "STOPPED", isStopped),
				converge(resume, "RUNNING", allRunning(1)),
				converge(func() error { return c.putAll(names, "stop") }, "STOPPED", isStopped),
				converge(resume, "RUNNING", allRunning(1)),
			}
			if vals[sys] == nil {
				vals[sys] = map[string][]float64{}
			}
			for i, op := range ops {
				t0 := time.Now()
				if err := op(); err != nil {
					c.close()
					return fmt.Errorf("run %d, %s: %w", run+1, steps[i], err)
				}
				d := time.Since(t0).Seconds()
				vals[sys][steps[i]] = append(vals[sys][steps[i]], d)
				b.logf("  run %d %s: %s: %.2fs (requests answered after %.2fs)", run+1, sys, steps[i], d, answered.Sub(t0).Seconds())
			}
			c.close()
		}
	}
	for _, s := range steps {
		for _, sys := range b.systems() {
			b.add(scen, sys, s, "s", "lower", vals[sys][s], "")
		}
	}
	return nil
}
