package faults

import (
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// steady is how long the workload runs undisturbed before the fault.
const steady = 3 * time.Second

// afterHeal is how long the suite watches once the fault ended, for what an
// old instance writes when it comes back.
const afterHeal = 5 * time.Second

// minWatch is how long after the clock start the suite watches at least,
// even when all looks well at once: longer than a leader lease (6 s), so
// that a leader that carries on until its lease runs out shows.
const minWatch = 15 * time.Second

// runRow runs one row on a cluster of its own and fills res.
//
//  1. Start the cluster with agent-1 only, the workload's two tasks on it,
//     then agent-2 (where the tasks can go), and the REST probe.
//  2. Let it run steady, mark the agents' logs, inject the fault.
//  3. Wait from the clock start until data flows and a REST write works
//     (at most the limit), and the fault's hold ran out; heal it.
//  4. Watch afterHeal more, stop the probe, stop writing, let the sink
//     drain, then count the topic and the sink file.
func runRow(t *testing.T, row Row, short bool, res *Result) {
	if row.NA != nil {
		if why := row.NA(); why != "" {
			res.Skipped = why
			return
		}
	}
	began := time.Now()
	c := StartCluster(t, row.Opts)
	w := StartWorkload(c)
	c.StartAgent2()
	probe := startRESTProbe(c)
	r := &run{c: c, w: w, probe: probe, short: short}
	defer func() { res.Notes = append(res.Notes, r.notes...) }()
	t.Logf("cluster and workload up in %v (%s broker at %s)", time.Since(began).Round(time.Millisecond), c.Broker.Kind, c.Broker.Addr)

	steadyFrom := time.Now()
	time.Sleep(steady)
	if _, ok := probe.WorksSince(steadyFrom); !ok {
		r.note("REST writes failed before the fault")
	}
	marks := c.Marks()
	injected := time.Now()
	clock := row.Inject(r)
	res.Limit = max(60*time.Second, row.Hold+30*time.Second)
	if short {
		res.Limit = max(30*time.Second, row.Hold+20*time.Second)
	}
	healAt, healed := injected.Add(row.Hold), row.Heal == nil
	for deadline := clock.Add(res.Limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if !healed && !time.Now().Before(healAt) {
			row.Heal(r)
			healed = true
		}
		_, flows := w.FlowSince(clock)
		_, writes := probe.WorksSince(clock)
		if flows && writes && healed && time.Since(clock) >= minWatch {
			break
		}
	}
	if !healed {
		if d := time.Until(healAt); d > 0 {
			time.Sleep(d)
		}
		row.Heal(r)
	}
	time.Sleep(afterHeal)
	res.Flow, res.FlowOK = w.FlowSince(clock)
	res.Write, res.WriteOK = probe.WorksSince(clock)
	res.Needless = max(c.TaskStartCount(marks)-row.Moves, 0)
	for _, f := range r.atEnd {
		f()
	}
	if n := probe.Failed(injected); n > 0 {
		r.note("%d REST write(s) failed", n)
	}
	leader := c.Leader()
	if leader >= 0 {
		r.note("tasks on %s", placement(c, leader, w))
		r.note("%s", assignCheck(c, leader, 20*time.Second))
	} else {
		r.note("no coordinator leads at the end")
	}
	probe.Stop()
	w.Drain(30 * time.Second)
	res.Topic = w.TopicCounts(c.Broker.Addr)
	res.Sink = w.SinkCounts()
	if res.Topic.Bad+res.Sink.Bad > 0 {
		r.note("%d unreadable record(s) in the topic, %d line(s) in the sink", res.Topic.Bad, res.Sink.Bad)
	}
	t.Logf("%s: %d lines written; topic %+v; sink %+v; row took %v", row.Name, w.Written(), res.Topic, res.Sink, time.Since(began).Round(time.Second))
	// What must hold whatever the fault (issue 34): nothing is lost, no
	// task instance writes after its successor started, and REST writes
	// work again; a row adds its own (r.violate).
	if lost := res.Topic.Lost + res.Sink.Lost; lost > 0 {
		r.violate("%d/%d line(s) lost (topic/sink)", res.Topic.Lost, res.Sink.Lost)
	}
	if old := res.Topic.OldAfterNew + res.Sink.OldAfterNew; old > 0 {
		r.violate("an old instance wrote %d/%d line(s) after its successor started (topic/sink)", res.Topic.OldAfterNew, res.Sink.OldAfterNew)
	}
	if !res.WriteOK {
		r.violate("no REST write worked within %v", res.Limit)
	}
	res.Violations = append(res.Violations, r.violations...)
	for _, v := range r.violations {
		t.Errorf("%s: %s", row.Name, v)
	}
}

// placement names where the workload's tasks run, as the leader says.
func placement(c *Cluster, leader int, w *Workload) string {
	var parts []string
	for _, name := range []string{w.Source, w.Sink} {
		p := c.Placement(leader, name)
		var ws []string
		for _, a := range p {
			ws = append(ws, a)
		}
		sort.Strings(ws)
		if len(ws) == 0 {
			ws = []string{"none running"}
		}
		parts = append(parts, fmt.Sprintf("%s %s", strings.TrimPrefix(name, c.Prefix+"-"), strings.Join(ws, ",")))
	}
	return strings.Join(parts, ", ")
}

// assignCheck creates a connector after the fault and reports how long its
// task took to run, or that it did not within timeout: the control plane
// assigns again.
func assignCheck(c *Cluster, leader int, timeout time.Duration) string {
	name := c.Prefix + "-after"
	sluicetest.CreateTopic(c.T, c.Broker.Addr, name, 1)
	r := sluicetest.Do(c.T, c.CoordinatorURL(leader), http.MethodPost, "/connectors", map[string]any{"name": name, "config": map[string]string{
		"connector.class": "FileStreamSink", "topics": c.Prefix + "-after", "file": filepath.Join(c.WorkDir, "after.txt")}})
	if r.Status != http.StatusCreated {
		return fmt.Sprintf("a connector created after the fault: %d", r.Status)
	}
	start := time.Now()
	for time.Since(start) < timeout {
		if p := c.Placement(leader, name); len(p) > 0 {
			return fmt.Sprintf("a connector created after the fault ran in %.1f s", time.Since(start).Seconds())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Sprintf("a connector created after the fault had no running task after %.0f s", timeout.Seconds())
}
