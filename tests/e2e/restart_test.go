package e2e

import (
	"fmt"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"net/http"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestEndToEndCoordinatorAndAgentRestartsLoseNothing runs a coordinator and
// two agents as separate processes, streams a growing file through a file
// source, a one-partition topic and a file sink, and then:
//
//  1. kills the coordinator with SIGKILL: the agents keep moving lines while
//     it is down; restarted with the same flags, it has the configs and
//     states back and restarts no task;
//  2. stops the agent that runs the source with SIGTERM and restarts it: the
//     source resumes from its committed offset on the other agent, and the
//     sink is restarted only if it lived on the stopped agent.
//
// At the end the sink file and the topic hold every line exactly once, in
// order.
func TestEndToEndCoordinatorAndAgentRestartsLoseNothing(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	c := procs.Start(t, procs.Options{Agents: 2})
	t.Logf("cluster up in %v (brokers %s)", time.Since(begin).Round(time.Millisecond), c.Brokers)

	topic := c.Name("lines")
	c.CreateTopic(topic, 1)
	in, out := filepath.Join(c.WorkDir, "in.txt"), filepath.Join(c.WorkDir, "out.txt")
	w := startLineWriter(t, in, 50, 20*time.Millisecond)

	src, sink := c.Name("src"), c.Name("sink")
	srcConfig := map[string]string{
		"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
		"file":            in,
		"topic":           topic,
	}
	sinkConfig := map[string]string{
		"connector.class": "FileStreamSink",
		"file":            out,
		"topics":          topic,
	}
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": src, "config": srcConfig})
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": sink, "config": sinkConfig})
	srcTask, sinkTask := src+"-0", sink+"-0"
	before := map[string]string{
		srcTask:  c.WaitRunning(src, 1).Tasks[0].WorkerID,
		sinkTask: c.WaitRunning(sink, 1).Tasks[0].WorkerID,
	}
	waitDelivered(t, out, w, w.Count(), false)
	t.Logf("streaming in %v: %s on %s, %s on %s", time.Since(begin).Round(time.Millisecond),
		srcTask, before[srcTask], sinkTask, before[sinkTask])
	if starts := c.TaskStarts(nil); starts[srcTask] != 1 || starts[sinkTask] != 1 {
		t.Fatalf("task starts before any restart: %v, want each task started once", starts)
	}

	// 1. Coordinator crash and restart.
	marks := c.Marks()
	c.Coordinator.Kill()
	downAt := w.Count()
	w.waitWritten(downAt + 25)
	// The agents need no coordinator to keep the data moving.
	waitDelivered(t, out, w, downAt+25, false)
	coordMark := c.Coordinator.Mark()
	c.Coordinator.Restart()
	c.WaitHealthy()
	c.WaitRegistered(coordMark, "agent-1", "agent-2")
	t.Logf("coordinator restarted in %v", time.Since(begin).Round(time.Millisecond))

	if got, want := c.ConnectorNames(), []string{sink, src}; !reflect.DeepEqual(got, want) {
		t.Fatalf("GET /connectors after the coordinator restart: %v, want %v", got, want)
	}
	for name, cfg := range map[string]map[string]string{src: srcConfig, sink: sinkConfig} {
		var got map[string]string
		c.Must(http.StatusOK, http.MethodGet, "/connectors/"+name+"/config", nil).JSON(t, &got)
		for k, v := range cfg {
			if got[k] != v {
				t.Errorf("config of %s after the coordinator restart: %s=%q, want %q (all: %v)", name, k, got[k], v, got)
			}
		}
	}
	for name, task := range map[string]string{src: srcTask, sink: sinkTask} {
		s := c.WaitRunning(name, 1)
		if s.Tasks[0].WorkerID != before[task] {
			t.Errorf("after the coordinator restart %s runs on %q, want %q (unmoved)", task, s.Tasks[0].WorkerID, before[task])
		}
	}
	waitDelivered(t, out, w, w.Count(), false)
	// Reconciliation runs every lease/4; give it a few passes to restart
	// something it should not.
	sluicetest.Consistently(t, 2*time.Second, func() (bool, string) {
		starts := c.TaskStarts(marks)
		return len(starts) == 0, fmt.Sprintf("tasks restarted after the coordinator restart: %v\n%s", starts, c.StartLines(marks))
	})
	waitDelivered(t, out, w, w.Count(), false)

	// 2. Graceful stop and restart of the agent that runs the source.
	victim := c.Agent(before[srcTask])
	var other *procs.Proc
	for _, a := range c.Agents {
		if a != victim {
			other = a
		}
	}
	marks = c.Marks()
	regMarkBeforeStop := c.Coordinator.Mark()
	stopAt := time.Now()
	victim.Stop()
	t.Logf("%s stopped (SIGTERM, exit 0) in %v", victim.Name(), time.Since(stopAt).Round(time.Millisecond))
	c.WaitTask(src, func(state, worker string) bool { return state == "RUNNING" && worker == other.Name() },
		"RUNNING on "+other.Name())
	t.Logf("%s RUNNING on %s %v after the SIGTERM", srcTask, other.Name(), time.Since(stopAt).Round(time.Millisecond))
	for _, l := range c.Coordinator.LogLinesSince(regMarkBeforeStop, "agent="+victim.Name()) {
		t.Logf("coordinator: %s", l)
	}
	downAt = w.Count()
	w.waitWritten(downAt + 25)
	waitDelivered(t, out, w, downAt+25, false)

	regMark := c.Coordinator.Mark()
	victim.Restart()
	c.WaitRegistered(regMark, victim.Name())
	waitDelivered(t, out, w, w.Count(), false)
	// The returning agent must not pull tasks back or make the survivor
	// restart its own.
	if before[sinkTask] != victim.Name() {
		sluicetest.Consistently(t, 1500*time.Millisecond, func() (bool, string) {
			n := c.TaskStarts(marks)[sinkTask]
			return n == 0, fmt.Sprintf("%s restarted %d time(s) although its agent %s kept running:\n%s",
				sinkTask, n, before[sinkTask], c.StartLines(marks))
		})
	}

	all := w.Stop()
	waitDelivered(t, out, w, len(all), true)
	c.WaitRunning(src, 1)
	c.WaitRunning(sink, 1)

	starts := c.TaskStarts(marks)
	t.Logf("task starts since the agent stop: %v", starts)
	if starts[srcTask] < 1 {
		t.Errorf("%s moved off %s but no agent logged its start", srcTask, victim.Name())
	}
	if before[sinkTask] == victim.Name() {
		if starts[sinkTask] < 1 {
			t.Errorf("%s lived on the stopped %s but no agent logged its restart", sinkTask, victim.Name())
		}
	} else if starts[sinkTask] != 0 {
		t.Errorf("%s lives on %s, which kept running, yet started %d more time(s) when %s restarted:\n%s",
			sinkTask, before[sinkTask], starts[sinkTask], victim.Name(), c.StartLines(marks))
	}

	recs := c.ReadTopic(topic)
	if len(recs) != len(all) {
		t.Errorf("topic %s holds %d records, want %d (one per line)", topic, len(recs), len(all))
	}
	for i := 0; i < len(recs) && i < len(all); i++ {
		if string(recs[i].Value) != all[i] {
			t.Errorf("topic record %d is %q, want %q", i, recs[i].Value, all[i])
			break
		}
	}
	t.Logf("%d lines delivered exactly once; total %v", len(all), time.Since(begin).Round(time.Millisecond))
}
