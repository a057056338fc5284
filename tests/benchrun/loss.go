package main

import (
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"
)

// lossResult is one round of scenario 3.
type lossResult struct {
	recovery float64 // seconds from SIGKILL to every task RUNNING on a live node
	victim   int     // tasks the killed node ran
	moved    int     // running tasks stopped or moved after the join
}

// Figures of scenario 3.
const (
	figLoss     = "node killed → its tasks RUNNING again"
	figLossTask = "tasks on the killed node"
	figJoin     = "node joins → running tasks stopped or moved"
)

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
		_, err = c.waitStable(names, 2*time.Minute)
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
		var rec, vic, mov []float64
		for _, r := range s.res {
			rec = append(rec, r.recovery)
			vic = append(vic, float64(r.victim))
			mov = append(mov, float64(r.moved))
		}
		suffix, note := "", ""
		switch {
		case s.sys == sysSluice:
			note = "defaults: --agent-lease 10s"
		case s.props != nil:
			suffix = " [scheduled.rebalance.max.delay.ms=0]"
		default:
			note = "Connect defaults: scheduled.rebalance.max.delay.ms=300000"
		}
		b.add(scen, s.sys, figLoss+suffix, "s", "lower", rec, note)
		b.add(scen, s.sys, figLossTask+suffix, "tasks", "info", vic, "")
		b.add(scen, s.sys, figJoin+suffix, "tasks", "lower", mov, "")
	}
	return nil
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
	var r lossResult
	st, err := c.statuses()
	if err != nil {
		return r, err
	}
	var names []string
	for n := range st {
		if strings.HasPrefix(n, c.prefix) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
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
	r.victim = perNode[victim.id]
	t0 := time.Now()
	if err := victim.p.kill(); err != nil {
		return r, err
	}
	if _, err := c.waitAll(names, timeout, "every task RUNNING on a live node", c.runningOnLive(1)); err != nil {
		return r, err
	}
	r.recovery = time.Since(t0).Seconds()
	marks := c.marks()
	nd, err := c.addNode()
	if err != nil {
		return r, err
	}
	if _, err := c.waitStable(names, 2*time.Minute); err != nil {
		return r, err
	}
	r.moved = c.taskStarts(marks)
	b.logf("  %s: killed %s (%d tasks): RUNNING again after %.2fs; %s joined: %d task starts", c.sys, victim.id, r.victim, r.recovery, nd.id, r.moved)
	return r, nil
}
