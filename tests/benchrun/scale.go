package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
)

// The shape of scenario 8.
const (
	// scaleAgents are the agents (processes) that run the tasks of part c.
	scaleAgents = 10
	// scaleTasksPer is the task count of each generator connector of part
	// c: scaleTasks/scaleTasksPer connectors in all.
	scaleTasksPer = 10
	// scaleLease is every coordinator's --leader-lease. It is Sluice's
	// default, passed explicitly so that the figures' notes, which it
	// bounds, name the value the run had.
	scaleLease = 6 * time.Second
	// scaleGets is how many GET /connectors?expand=status are timed.
	scaleGets = 50
	// scaleSettle is the pause before memory is read or a fault is
	// applied, so that the work of the step before (status writes, first
	// records and offset commits) is over.
	scaleSettle = 5 * time.Second
)

// scaleResult is one run of scenario 8.
type scaleResult struct {
	create      float64   // s: create N connectors STOPPED → all STOPPED
	gets        []float64 // ms: each GET /connectors?expand=status with N connectors
	leaderRSS   float64   // MiB: the leader with N connectors
	followerRSS float64   // MiB: the follower with N connectors
	written     float64   // s: leader killed → a PUT …/pause through the other answers 202
	paused      float64   // s: leader killed → that connector PAUSED
	start       float64   // s: create M tasks → all RUNNING
	converge    float64   // s: coordinator killed → it leads again and sees every task RUNNING
	restarted   int       // task instances the agents started meanwhile
}

// scenarioScale is scenario 8 (Sluice only): what N connectors and M tasks
// cost the control plane. Per run, on a fresh cluster of two coordinators
// (one HA group) and one agent: create N file sources STOPPED, the latency
// of the expanded status listing, the coordinators' memory, and the time a
// leader's SIGKILL stops writes. Then, on a fresh cluster of one
// coordinator and 10 agents: M generator tasks until all RUNNING, and a
// coordinator restart (SIGKILL, started again with the same flags) until
// the new process sees every task RUNNING, which must restart none.
func (b *bench) scenarioScale() error {
	const scen = "8 scale"
	n, m := b.sizes.scaleConns, b.sizes.scaleTasks
	files, err := b.sourceFiles("scale", n)
	if err != nil {
		return fmt.Errorf("source files: %w", err)
	}
	var rs []scaleResult
	for run := range b.runs {
		var r scaleResult
		if err := b.scaleControl(run, files, &r); err != nil {
			return fmt.Errorf("run %d, %d connectors: %w", run+1, n, err)
		}
		if err := b.scaleTasks(run, &r); err != nil {
			return fmt.Errorf("run %d, %d tasks: %w", run+1, m, err)
		}
		rs = append(rs, r)
		b.logf("  run %d: create %d STOPPED %.2fs, status GET median %.1f ms, leader %.0f MiB; leader killed → write %.2fs, PAUSED %.2fs; "+
			"%d tasks RUNNING after %.2fs; coordinator restart → converged %.2fs, %d tasks restarted",
			run+1, n, r.create, median(r.gets), r.leaderRSS, r.written, r.paused, m, r.start, r.converge, r.restarted)
	}
	pick := func(f func(scaleResult) float64) []float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = f(r)
		}
		return out
	}
	var gets, getMedians []float64
	for _, r := range rs {
		gets = append(gets, r.gets...)
		getMedians = append(getMedians, median(r.gets))
	}
	lease := fmt.Sprintf("--leader-lease %v, which bounds it: a killed leader's lease expires %v–%v after the kill", scaleLease, scaleLease*2/3, scaleLease)
	b.add(scen, sysSluice, fmt.Sprintf("create %d connectors STOPPED → all STOPPED", n), "s", "lower",
		pick(func(r scaleResult) float64 { return r.create }), "8 requests in flight, 2 coordinators")
	b.addSpread(scen, sysSluice, fmt.Sprintf("GET /connectors?expand=status, %d connectors", n), gets, getMedians,
		fmt.Sprintf("over %d requests per run, one at a time, through the leader; values are the runs' medians", scaleGets))
	b.add(scen, sysSluice, fmt.Sprintf("leader coordinator RSS, %d connectors", n), "MiB", "lower",
		pick(func(r scaleResult) float64 { return r.leaderRSS }), "")
	b.add(scen, sysSluice, fmt.Sprintf("follower coordinator RSS, %d connectors", n), "MiB", "info",
		pick(func(r scaleResult) float64 { return r.followerRSS }), "")
	b.add(scen, sysSluice, fmt.Sprintf("leader killed → write through the other answers 202, %d connectors", n), "s", "lower",
		pick(func(r scaleResult) float64 { return r.written }), lease+"; PUT …/pause retried every 50 ms")
	b.add(scen, sysSluice, "leader killed → that connector PAUSED", "s", "lower",
		pick(func(r scaleResult) float64 { return r.paused }), "")
	b.add(scen, sysSluice, fmt.Sprintf("create %d tasks on %d agents → all RUNNING", m, scaleAgents), "s", "lower",
		pick(func(r scaleResult) float64 { return r.start }),
		fmt.Sprintf("%d generator connectors of %d tasks, one record per task, then idle", m/scaleTasksPer, scaleTasksPer))
	b.add(scen, sysSluice, fmt.Sprintf("coordinator restarted → leads, all %d tasks RUNNING", m), "s", "lower",
		pick(func(r scaleResult) float64 { return r.converge }),
		fmt.Sprintf("SIGKILL, started again with the same flags; a restarted coordinator waits out its predecessor's lease (--leader-lease %v)", scaleLease))
	b.add(scen, sysSluice, "coordinator restarted → tasks restarted", "tasks", "lower",
		pick(func(r scaleResult) float64 { return float64(r.restarted) }), "must be 0")
	for i, r := range rs {
		if r.restarted != 0 {
			return fmt.Errorf("run %d: the agents started %d task instances while the coordinator restarted; a restart must start none", i+1, r.restarted)
		}
	}
	return nil
}

// scaleControl is part a and b of scenario 8 on a fresh cluster of two
// coordinators and one agent: it creates n file sources STOPPED (one input
// file each, files[i]), times the expanded status listing, reads the
// coordinators' memory, then kills the leader and times until writes
// work through the other.
func (b *bench) scaleControl(run int, files []string, r *scaleResult) error {
	n := len(files)
	c, err := b.startClusterOpts(sysSluice, fmt.Sprintf("scale%d", run), 1, clusterOpts{
		coordinators: 2, coordArgs: []string{"--leader-lease", scaleLease.String()}})
	if err != nil {
		return err
	}
	defer c.close()
	leader, err := c.waitLeader(time.Minute)
	if err != nil {
		return err
	}
	// Writes through the leader, as a client would send them to a lone
	// coordinator: a follower's forwarding would be part of the figure.
	c.coord, c.coordURL = c.coords[leader], c.coordURLs[leader]
	topic := c.name("scale")
	if err := b.kafka.createTopic(topic, 1); err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	names := c.names("scale", n)
	t0 := time.Now()
	if err := c.createAll(names, "STOPPED", func(i int) map[string]string { return sourceCfg(files[i], topic) }); err != nil {
		return fmt.Errorf("create %d connectors STOPPED: %w", n, err)
	}
	answered := time.Since(t0)
	if _, err := c.waitAll(names, 10*time.Minute, "STOPPED", isStopped); err != nil {
		return err
	}
	r.create = time.Since(t0).Seconds()
	b.logf("  %d connectors created STOPPED in %.2fs (requests answered after %.2fs)", n, r.create, answered.Seconds())

	time.Sleep(scaleSettle)
	if r.leaderRSS, err = c.coords[leader].rssMiB(); err != nil {
		return fmt.Errorf("leader RSS: %w", err)
	}
	if r.followerRSS, err = c.coords[1-leader].rssMiB(); err != nil {
		return fmt.Errorf("follower RSS: %w", err)
	}
	// A few untimed first: the connection and the first encoding of the
	// listing are not what a client polling it sees.
	for i := range scaleGets + 3 {
		t := time.Now()
		if _, err := c.rest().Connectors().ListExpanded(context.Background(), true, false); err != nil {
			return fmt.Errorf("status listing %d: %w", i+1, err)
		}
		if i >= 3 {
			r.gets = append(r.gets, float64(time.Since(t))/float64(time.Millisecond))
		}
	}
	return c.scaleFailover(leader, names[0], r)
}

// waitLeader waits until exactly one coordinator's GET /health says
// "role": "leader", every other "follower" naming it, and returns its
// index in c.coords.
func (c *cluster) waitLeader(timeout time.Duration) (int, error) {
	leader := -1
	err := waitFor(timeout, "one leader among the coordinators", func() (bool, string) {
		var roles []string
		leaders := map[string]bool{} // the leader each names
		leader = -1
		for i, url := range c.coordURLs {
			h, err := clientAt(url).Admin().Health(context.Background())
			if err != nil {
				return false, fmt.Sprintf("%s GET /health: %v", c.coords[i].Name(), err)
			}
			roles = append(roles, c.coords[i].Name()+" "+h.Role+" of "+h.Leader)
			leaders[h.Leader] = true
			if h.Role == "leader" {
				if leader >= 0 {
					return false, strings.Join(roles, ", ")
				}
				leader = i
			}
		}
		return leader >= 0 && len(leaders) == 1 && leaders[strings.TrimPrefix(c.coordURLs[leader], "http://")], strings.Join(roles, ", ")
	})
	return leader, err
}

// scaleFailover kills (SIGKILL) coordinator leader and times, from the
// kill, until PUT /connectors/<name>/pause through the other coordinator
// answers 202 (the first write that works: retried every 50 ms while the
// other answers 409, or 500 when its forward to the dead leader failed),
// and until the connector's status through it says PAUSED (written by the
// new leader, once it leads).
func (c *cluster) scaleFailover(leader int, name string, r *scaleResult) error {
	other := 1 - leader
	url := c.coordURLs[other]
	killed := time.Now()
	if err := c.coords[leader].kill(); err != nil {
		return fmt.Errorf("kill the leader: %w", err)
	}
	c.coord, c.coordURL = c.coords[other], url
	answers := map[string]int{} // what the survivor answered meanwhile, for the log
	survivor := clientAt(url).Connectors()
	err := waitFor(2*time.Minute, "PUT /connectors/"+name+"/pause through "+c.coords[other].Name()+" = 202", func() (bool, string) {
		err := survivor.Pause(context.Background(), name)
		var refused *api.Error
		switch {
		case err == nil:
			answers["202"]++
			return true, ""
		case errors.As(err, &refused):
			answers[strconv.Itoa(int(refused.Code))]++
		default:
			answers["error"]++
		}
		return false, err.Error()
	})
	if err != nil {
		return err
	}
	r.written = time.Since(killed).Seconds()
	err = waitFor(2*time.Minute, name+" PAUSED through "+c.coords[other].Name(), func() (bool, string) {
		s, err := survivor.Status(context.Background(), name)
		if err != nil {
			return false, "GET status: " + err.Error()
		}
		return s.Connector.State == "PAUSED", "state " + s.Connector.State
	})
	if err != nil {
		return err
	}
	r.paused = time.Since(killed).Seconds()
	c.b.logf("  killed leader %s: the write through %s answered 202 after %.2fs (answers meanwhile %v), PAUSED after %.2fs",
		c.coords[leader].Name(), c.coords[other].Name(), r.written, answers, r.paused)
	return nil
}

// scaleTasks is part c of scenario 8 on a fresh cluster of one coordinator
// and scaleAgents agents: it runs b.sizes.scaleTasks generator tasks until
// all are RUNNING, then restarts the coordinator (SIGKILL, then the same
// command again, on the same address) and times, from the kill, until the
// new process has converged (scaleConverged); the agents must start no
// task meanwhile.
func (b *bench) scaleTasks(run int, r *scaleResult) error {
	m := b.sizes.scaleTasks
	c, err := b.startClusterOpts(sysSluice, fmt.Sprintf("scaletasks%d", run), scaleAgents, clusterOpts{
		coordArgs: []string{"--leader-lease", scaleLease.String()}})
	if err != nil {
		return err
	}
	defer c.close()
	topic := c.name("scalegen")
	if err := b.kafka.createTopic(topic, 1); err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	names := c.names("gen", m/scaleTasksPer)
	// One record per task, then idle: each task still holds its producer,
	// its offsets writer and its place in the heartbeats, which is what
	// the coordinator tracks, without m offset commits a second that two
	// cores shared with the broker could not keep up with.
	cfg := map[string]string{"connector.class": generator, "topic": topic, "streams": strconv.Itoa(scaleTasksPer),
		"tasks.max": strconv.Itoa(scaleTasksPer), "count": "1", "rate": "1", "record.bytes": "100"}
	t0 := time.Now()
	if err := c.createAll(names, "", func(int) map[string]string { return cfg }); err != nil {
		return fmt.Errorf("create %d generator connectors: %w", len(names), err)
	}
	if _, err := c.waitAll(names, 15*time.Minute, "every task RUNNING", c.runningOnLive(scaleTasksPer)); err != nil {
		return err
	}
	r.start = time.Since(t0).Seconds()
	b.logf("  %d tasks on %d agents RUNNING after %.2fs", m, scaleAgents, r.start)
	time.Sleep(scaleSettle)
	converged := c.scaleConverged(names, m)
	if ok, why := converged(); !ok {
		return fmt.Errorf("before the coordinator restart: %s", why)
	}

	marks := c.marks()
	old := c.coord
	killed := time.Now()
	if err := old.kill(); err != nil {
		return fmt.Errorf("kill the coordinator: %w", err)
	}
	err = old.restart()
	if err == nil {
		err = c.waitCoordinator(old, c.coordURL)
	}
	if err != nil {
		return fmt.Errorf("start the coordinator again: %w", err)
	}
	healthy := time.Since(killed)
	if err := waitFor(5*time.Minute, "the restarted coordinator converged", converged); err != nil {
		return err
	}
	r.converge = time.Since(killed).Seconds()
	// A restart that the new leader ordered late would show after the
	// convergence: look again once the placement had time to change.
	time.Sleep(2 * scaleSettle)
	if ok, why := converged(); !ok {
		return fmt.Errorf("%.0fs after the restart converged: %s", (2 * scaleSettle).Seconds(), why)
	}
	r.restarted = c.taskStarts(marks)
	b.logf("  coordinator killed and started again: healthy after %.2fs, converged after %.2fs; %d task starts",
		healthy.Seconds(), r.converge, r.restarted)
	return nil
}

// scaleConverged holds when the coordinator at c.coordURL leads, every
// agent is registered with it and reports tasks tasks RUNNING in all, and
// the expanded status shows each of names with its scaleTasksPer tasks
// RUNNING on a live agent. Its explanation says what is not yet so.
func (c *cluster) scaleConverged(names []string, tasks int) func() (bool, string) {
	return func() (bool, string) {
		h, err := clientAt(c.coordURL).Admin().Health(context.Background())
		if err != nil || h.Role != "leader" {
			return false, fmt.Sprintf("GET /health: %+v %v", h, err)
		}
		ags, err := c.agents()
		if err != nil {
			return false, err.Error()
		}
		registered, running := 0, 0
		for _, a := range ags {
			if a.Registered {
				registered++
			}
			for _, t := range a.Tasks {
				if t.State == api.StateRunning {
					running++
				}
			}
		}
		if registered != len(c.nodes) || running != tasks {
			return false, fmt.Sprintf("GET /sluice/agents: %d of %d agents registered, reporting %d of %d tasks RUNNING",
				registered, len(c.nodes), running, tasks)
		}
		st, err := c.statuses()
		if err != nil {
			return false, err.Error()
		}
		ok := c.runningOnLive(scaleTasksPer)
		for _, n := range names {
			if s := st[n]; !ok(s) {
				return false, fmt.Sprintf("status of %s: %+v", n, s)
			}
		}
		return true, ""
	}
}
