package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// lossResult is one round of scenario 3.
type lossResult struct {
	recovery float64 // seconds from the fault to every source task RUNNING on a live node
	// sinks: seconds from the fault to every sink task RUNNING on a live
	// node and the record produced right after the fault in its file
	sinks  float64
	victim int // tasks the node ran
	moved  int // running tasks stopped or moved after the join (crash rounds)
}

// Figures of scenario 3.
const (
	figLoss       = "node killed → its source tasks RUNNING again"
	figLossSink   = "node killed → its sinks RUNNING again and delivering"
	figLossTask   = "tasks on the killed node"
	figJoin       = "node joins → running tasks stopped or moved"
	figZombie     = "node paused (SIGSTOP) → its source tasks RUNNING elsewhere"
	figZombieSink = "node paused (SIGSTOP) → its sinks RUNNING elsewhere and delivering"
)

// lossSinks is how many file sinks scenario 3 runs beside its sources,
// each reading a topic of its own into a file of its own.
const lossSinks = 10

// scenarioLoss is scenario 3: 2 agents / 2 workers, lossConns running file
// sources (one task each); each round kills (SIGKILL) the node with the
// most tasks, times until each of its tasks is RUNNING on a live node, then
// starts a new node and counts the task instances started afterwards
// (every one is a running task that was stopped: restarted or moved). The
// rounds chain on one cluster: each starts with 2 live nodes.
//
// Sluice runs with its defaults (agent lease 10s). Connect runs twice:
// with its defaults (scheduled.rebalance.max.delay.ms=300000: lost tasks
// wait 5 minutes for their worker to come back; defaultLoss rounds), and
// with scheduled.rebalance.max.delay.ms=0 (b.runs rounds, alternating with
// Sluice's).
func (b *bench) scenarioLoss() error {
	const scen = "3 worker loss"
	files, err := b.sourceFiles("loss", b.sizes.lossConns)
	if err != nil {
		return err
	}
	type sut struct {
		sys, label string
		props      map[string]string
		rounds     int
		c          *cluster
		res        []lossResult
	}
	suts := []*sut{{sys: sysSluice, label: "loss", rounds: b.runs}}
	if b.peer == sysConnect {
		suts = append(suts, &sut{sys: sysConnect, label: "loss0", rounds: b.runs,
			props: map[string]string{"scheduled.rebalance.max.delay.ms": "0"}})
	}
	setup := func(s *sut) error {
		c, err := b.startCluster(s.sys, s.label, 2, s.props)
		if err != nil {
			return err
		}
		s.c = c
		topic := c.name("loss")
		if err := b.kafka.createTopic(topic, 1); err != nil {
			return err
		}
		names := c.names("loss", b.sizes.lossConns)
		if err := c.createAll(names, "", func(i int) map[string]string { return sourceCfg(files[i], topic) }); err != nil {
			return err
		}
		sinks := c.names("losssink", lossSinks)
		for _, n := range sinks {
			if err := b.kafka.createTopic(n, 1); err != nil {
				return err
			}
		}
		if err := c.createAll(sinks, "", func(i int) map[string]string {
			return map[string]string{"connector.class": fileSink, "tasks.max": "1", "topics": sinks[i], "file": sinkFile(c, sinks[i])}
		}); err != nil {
			return err
		}
		_, err = c.waitStable(append(names, sinks...), 2*time.Minute)
		return err
	}
	for _, s := range suts {
		if err := setup(s); err != nil {
			return err
		}
		defer s.c.close()
	}
	for round := range b.runs {
		for _, s := range suts {
			r, err := s.c.lossRound(b, 2*time.Minute)
			if err != nil {
				return fmt.Errorf("%s round %d: %w", s.sys, round+1, err)
			}
			s.res = append(s.res, r)
		}
	}
	// Zombies: Sluice only (Kafka Connect fences neither a paused worker's
	// sources without exactly-once nor its sinks).
	var zombies []lossResult
	for round := range b.runs {
		r, err := suts[0].c.zombieRound(b, 2*time.Minute)
		if err != nil {
			return fmt.Errorf("sluice zombie round %d: %w", round+1, err)
		}
		zombies = append(zombies, r)
	}
	if b.peer == sysConnect {
		// Connect's defaults: one (full: three) rounds of ~5 minutes each.
		for _, s := range suts {
			s.c.close()
		}
		d := &sut{sys: sysConnect, label: "lossdef", rounds: b.sizes.defaultLoss}
		if err := setup(d); err != nil {
			return err
		}
		defer d.c.close()
		for round := range d.rounds {
			r, err := d.c.lossRound(b, 8*time.Minute)
			if err != nil {
				return fmt.Errorf("connect (defaults) round %d: %w", round+1, err)
			}
			d.res = append(d.res, r)
		}
		suts = append(suts, d)
	}
	for _, s := range suts {
		var rec, snk, vic, mov []float64
		for _, r := range s.res {
			rec = append(rec, r.recovery)
			snk = append(snk, r.sinks)
			vic = append(vic, float64(r.victim))
			mov = append(mov, float64(r.moved))
		}
		suffix, note := "", ""
		switch {
		case s.sys == sysSluice:
			note = "defaults: --agent-probe-interval 100ms, --agent-lease 10s, static sink membership"
		case s.props != nil:
			suffix = " [scheduled.rebalance.max.delay.ms=0]"
		default:
			note = "Connect defaults: scheduled.rebalance.max.delay.ms=300000"
		}
		b.add(scen, s.sys, figLoss+suffix, "s", "lower", rec, note)
		b.add(scen, s.sys, figLossSink+suffix, "s", "lower", snk, "")
		b.add(scen, s.sys, figLossTask+suffix, "tasks", "info", vic, "")
		b.add(scen, s.sys, figJoin+suffix, "tasks", "lower", mov, "")
	}
	var zsrc, zsnk []float64
	for _, r := range zombies {
		zsrc, zsnk = append(zsrc, r.recovery), append(zsnk, r.sinks)
	}
	b.add(scen, sysSluice, figZombie, "s", "lower", zsrc, "a paused agent keeps its NATS connection: replaced after its lease (10s), then fenced")
	b.add(scen, sysSluice, figZombieSink, "s", "lower", zsnk, "")
	return nil
}

// sinkFile is the file scenario 3's sink name writes.
func sinkFile(c *cluster, name string) string { return filepath.Join(c.dir, name+".txt") }

// faultWait times, from t0, until every source of the cluster's scenario 3
// runs on a live node, and until every sink does and its file holds the
// line marker, produced to every sink's topic right after the fault.
func (c *cluster) faultWait(b *bench, t0 time.Time, marker string, timeout time.Duration) (sources, sinks float64, err error) {
	st, err := c.statuses()
	if err != nil {
		return 0, 0, err
	}
	var srcNames, sinkNames []string
	for n := range st {
		switch {
		case strings.HasPrefix(n, c.name("losssink")):
			sinkNames = append(sinkNames, n)
		case strings.HasPrefix(n, c.name("loss")):
			srcNames = append(srcNames, n)
		}
	}
	for _, n := range sinkNames {
		if err := b.kafka.produce(n, 1, func(int) string { return marker }); err != nil {
			return 0, 0, err
		}
	}
	errs := make(chan error, 2)
	go func() {
		_, err := c.waitAll(srcNames, timeout, "every source task RUNNING on a live node", c.runningOnLive(1))
		sources = time.Since(t0).Seconds()
		errs <- err
	}()
	go func() {
		live := c.runningOnLive(1)
		_, err := c.waitAll(sinkNames, timeout, "every sink RUNNING on a live node with "+marker+" in its file", func(s connStatus) bool {
			if !live(s) {
				return false
			}
			data, _ := os.ReadFile(sinkFile(c, s.Name))
			return strings.Contains(string(data), marker+"\n")
		})
		sinks = time.Since(t0).Seconds()
		errs <- err
	}()
	return sources, sinks, errors.Join(<-errs, <-errs)
}

// zombieRound pauses (SIGSTOP) the live node with the most tasks, times
// until its tasks run elsewhere (sinks: and deliver), then resumes it
// (SIGCONT) and waits until the placement is stable again.
func (c *cluster) zombieRound(b *bench, timeout time.Duration) (lossResult, error) {
	r, victim, err := c.faultRound(b, "zombie", timeout, func(nd *node) error {
		nd.paused = true
		return nd.p.signal(syscall.SIGSTOP)
	})
	if victim != nil {
		victim.paused = false
		if serr := victim.p.signal(syscall.SIGCONT); err == nil {
			err = serr
		}
	}
	if err != nil {
		return r, err
	}
	if _, err := c.waitStable(c.scenarioNames(), 2*time.Minute); err != nil {
		return r, err
	}
	b.logf("  %s: paused %s (%d tasks): sources RUNNING elsewhere after %.2fs, sinks delivering after %.2fs", c.sys, victim.id, r.victim, r.recovery, r.sinks)
	return r, nil
}

// placement maps "<connector>/<task>" to the worker running it.
func placement(st map[string]connStatus) map[string]string {
	out := map[string]string{}
	for name, s := range st {
		for _, t := range s.Tasks {
			out[fmt.Sprintf("%s/%d", name, t.ID)] = t.WorkerID
		}
	}
	return out
}

// waitStable waits until every one of names runs one task and the
// placement has not changed for 6s, and returns the statuses.
func (c *cluster) waitStable(names []string, timeout time.Duration) (map[string]connStatus, error) {
	deadline := time.Now().Add(timeout)
	var last map[string]string
	since := time.Now()
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("%s: placement not stable for 6s within %v", c.sys, timeout)
		}
		st, err := c.waitAll(names, left, "RUNNING", c.runningOnLive(1))
		if err != nil {
			return nil, err
		}
		pl := placement(st)
		if !maps.Equal(pl, last) {
			last, since = pl, time.Now()
		} else if time.Since(since) >= 6*time.Second {
			return st, nil
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// runningOnLive holds when the connector and exactly tasks tasks are
// RUNNING on nodes that still run.
func (c *cluster) runningOnLive(tasks int) func(connStatus) bool {
	live := map[string]bool{}
	for _, nd := range c.alive() {
		live[nd.id] = true
	}
	run := allRunning(tasks)
	return func(s connStatus) bool {
		if !run(s) {
			return false
		}
		for _, t := range s.Tasks {
			if !live[t.WorkerID] {
				return false
			}
		}
		return true
	}
}

// lossRound kills the live node with the most tasks (the latest started on
// a tie), waits (at most timeout) until every task runs on a live node,
// then starts another node and counts the task starts until the placement
// is stable again.
func (c *cluster) lossRound(b *bench, timeout time.Duration) (lossResult, error) {
	r, victim, err := c.faultRound(b, "crash", timeout, func(nd *node) error { return nd.p.kill() })
	if err != nil {
		return r, err
	}
	marks := c.marks()
	nd, err := c.addNode()
	if err != nil {
		return r, err
	}
	if _, err := c.waitStable(c.scenarioNames(), 2*time.Minute); err != nil {
		return r, err
	}
	r.moved = c.taskStarts(marks)
	b.logf("  %s: killed %s (%d tasks): sources RUNNING again after %.2fs, sinks delivering after %.2fs; %s joined: %d task starts",
		c.sys, victim.id, r.victim, r.recovery, r.sinks, nd.id, r.moved)
	return r, nil
}

// faultRound applies fault to the busiest live node and times, from the
// fault, until its tasks run elsewhere (faultWait; the marker names kind
// and the round). It returns the node once fault was applied to it.
func (c *cluster) faultRound(b *bench, kind string, timeout time.Duration, fault func(*node) error) (lossResult, *node, error) {
	var r lossResult
	victim, n, err := c.busiest()
	if err != nil {
		return r, nil, err
	}
	r.victim = n
	c.rounds++
	t0 := time.Now()
	if err := fault(victim); err != nil {
		return r, victim, err
	}
	r.recovery, r.sinks, err = c.faultWait(b, t0, fmt.Sprintf("%s-%d", kind, c.rounds), timeout)
	return r, victim, err
}

// scenarioNames are the cluster's connectors, sorted.
func (c *cluster) scenarioNames() []string {
	st, err := c.statuses()
	if err != nil {
		return nil
	}
	var names []string
	for n := range st {
		if strings.HasPrefix(n, c.prefix) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// busiest is the live, running node with the most tasks (the latest
// started on a tie) and how many it runs.
func (c *cluster) busiest() (*node, int, error) {
	st, err := c.statuses()
	if err != nil {
		return nil, 0, err
	}
	perNode := map[string]int{}
	for _, w := range placement(st) {
		perNode[w]++
	}
	live := c.alive()
	victim := live[len(live)-1]
	for _, nd := range live {
		if perNode[nd.id] > perNode[victim.id] {
			victim = nd
		}
	}
	return victim, perNode[victim.id], nil
}
