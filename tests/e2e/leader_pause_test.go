package e2e

import (
	"context"
	"fmt"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// TestLeaderPausedPastLeaseIsFenced hangs the leader (SIGSTOP) past its
// lease, lets a successor be elected and change the configuration, and
// then resumes the old leader (SIGCONT). It checks that:
//
//  1. the agents find the successor while the old leader hangs (they
//     register with the new term) and their tasks keep running;
//  2. the resumed old leader notices it lost the lease and steps down
//     (its log, and GET /health says follower);
//  3. it writes nothing to the config or status topic after its successor
//     exists: read read_uncommitted, no record of its producer (id and
//     epoch of the shared transactional id <group>-leader) is stamped after
//     the pause or follows one of the successor's in a partition, and every
//     coordinator shows the configuration the successor wrote;
//  4. no agent obeys it: a command of its term is refused, the tasks keep
//     the owners and generations the successor gave them and none restarts.
func TestLeaderPausedPastLeaseIsFenced(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	since := func() time.Duration { return time.Since(begin).Round(time.Millisecond) }
	c := startLeaderCluster(t, procs.Options{AgentLogLevel: "debug"})
	li, lease := c.WaitLeader(30*time.Second, -1)
	old := c.Coordinators[li]
	t.Logf("%v: %s leads, term %d", since(), old.Name(), lease.Term)

	topic := c.Name("lines")
	c.CreateTopic(topic, 1)
	in, out := filepath.Join(c.WorkDir, "in.txt"), filepath.Join(c.WorkDir, "out.txt")
	w := startLineWriter(t, in, 50, 20*time.Millisecond)
	src, sink := c.Name("src"), c.Name("sink")
	srcConfig := fileSource(in, topic)
	c.MustAt(li, http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": src, "config": srcConfig})
	c.MustAt(li, http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": sink,
		"config": map[string]string{"connector.class": "FileStreamSink", "file": out, "topics": topic}})
	placed := map[string]string{src + "-0": c.WaitRunningAt(li, src, 1)[0], sink + "-0": c.WaitRunningAt(li, sink, 1)[0]}
	waitDelivered(t, out, w, w.Count(), false)
	before := c.Name("before")
	c.MustAt(li, http.StatusCreated, http.MethodPost, "/connectors", stoppedSource(before, topic))
	t.Logf("%v: streaming, tasks on %v", since(), placed)

	// Hang the leader past its lease; a successor takes over.
	agentMarks := c.Marks()
	pausedAt := time.Now()
	old.Pause()
	ni, lease2 := c.WaitLeader(c.Options().LeaderLease+30*time.Second, li, li)
	t.Logf("%v: %s leads, term %d, %v after the pause", since(), c.Coordinators[ni].Name(), lease2.Term, time.Since(pausedAt).Round(time.Millisecond))
	if lease2.ID == lease.ID || lease2.Term <= lease.Term {
		t.Fatalf("lease after the pause %+v, before %+v: want another id and a higher term", lease2, lease)
	}
	// The agents must find the successor while the old leader hangs: its
	// subscriptions still exist, but a hung process answers nothing.
	if !waitAgentsFound(c, lease2.Term, 3*c.Options().Lease+5*time.Second) {
		t.Errorf("while the old leader hangs, the agents did not register with its successor (term %d) within %v:\n%s",
			lease2.Term, 3*c.Options().Lease+5*time.Second, agentLines(c, agentMarks, "heartbeat"))
		if s, ok := c.StatusAt(ni, sink); ok {
			t.Errorf("meanwhile the successor shows %s as %+v", sink, s.Tasks)
		}
	} else {
		t.Logf("%v: both agents registered with term %d", since(), lease2.Term)
	}

	// The successor changes the configuration: a new connector, and a new
	// source config (its task restarts at a generation of the new leader).
	after := c.Name("after")
	srcGenBefore := taskGenerations(c)[src+"-0"].Generation
	c.MustAt(ni, http.StatusCreated, http.MethodPost, "/connectors", stoppedSource(after, topic))
	srcConfig["tasks.max"] = "1"
	c.MustAt(ni, http.StatusOK, http.MethodPut, "/connectors/"+src+"/config", srcConfig)

	// Resume the old leader: it must notice, and step down.
	resumeMark, newMark := old.Mark(), c.Coordinators[ni].Mark()
	resumedAt := time.Now()
	old.Resume()
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		n := old.CountLogSince(resumeMark, `msg="no longer leading"`, fmt.Sprintf("term=%d", lease.Term))
		return n > 0, "the resumed leader has not logged that it no longer leads"
	})
	c.WaitLeader(30*time.Second, li)
	t.Logf("%v: %s stepped down %v after SIGCONT", since(), old.Name(), time.Since(resumedAt).Round(time.Millisecond))

	// No agent obeys a command of the old term (what the old leader would
	// send, had it acted before it noticed).
	agent := placed[src+"-0"]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	err := natsrpc.Call(ctx, c.NATS(), wire.AgentSubject(wire.SubjectAgentRevoke, c.Prefix, agent),
		wire.RevokeRequest{Term: lease.Term, Tasks: []api.TaskID{{Connector: src, Task: 0}}}, &wire.RevokeReply{})
	cancel()
	if !api.IsCode(err, api.CodeConflict) {
		t.Errorf("a revoke of term %d sent to %s after term %d: got %v, want a conflict (refused)", lease.Term, agent, lease2.Term, err)
	}
	// Nothing of the old leader's in the config or status topic after the
	// pause; every coordinator shows the successor's configuration.
	checkNoZombieWrites(t, c, before, after, pausedAt)
	for i := range c.Coordinators {
		var names []string
		c.MustAt(i, http.StatusOK, http.MethodGet, "/connectors", nil).JSON(t, &names)
		if !containsAll(names, src, sink, before, after) {
			t.Errorf("GET /connectors through %s: %v", c.Coordinators[i].Name(), names)
		}
		var cfg map[string]string
		c.MustAt(i, http.StatusOK, http.MethodGet, "/connectors/"+src+"/config", nil).JSON(t, &cfg)
		if cfg["tasks.max"] != "1" {
			t.Errorf("source config through %s: %v, want the successor's (tasks.max=1)", c.Coordinators[i].Name(), cfg)
		}
	}
	for _, l := range old.LogLinesSince(resumeMark) {
		if strings.Contains(l, "fenc") || strings.Contains(l, "refuses") || strings.Contains(l, "leader") || strings.Contains(l, "leading") {
			t.Logf("resumed old leader: %s", l)
		}
	}
	// The successor still writes: the resumed zombie must not have fenced
	// its writer (it may not touch <group>-leader once deposed).
	if r, err := c.TryAt(ni, http.MethodPost, "/connectors", stoppedSource(c.Name("after2"), topic)); err != nil || r.Status != http.StatusCreated {
		t.Errorf("create through the successor after the old leader resumed: %v %s; the successor logged since SIGCONT:\n%s",
			err, r, strings.Join(fencedLines(c.Coordinators[ni], newMark), "\n"))
	}
	// The successor's change took effect: the source restarted once, at a
	// generation of its own; the sink never restarted.
	c.WaitAgentsRegistered(0, lease2.Term, 30*time.Second)
	var gens map[string]taskGen
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		gens = taskGenerations(c)
		s, ok := c.StatusAt(ni, src)
		g := gens[src+"-0"]
		running := ok && len(s.Tasks) == 1 && s.Tasks[0].State == "RUNNING"
		// The status topic must show the restarted task's own generation:
		// the task logs its start before its RUNNING report is written.
		return running && g.State == "RUNNING" && g.Generation != srcGenBefore && c.TaskStarts(agentMarks)[src+"-0"] == 1,
			fmt.Sprintf("source after its config change: %+v, status topic %+v, starts %v; the successor logged %d fenced writes since SIGCONT, e.g. %q",
				s, g, c.TaskStarts(agentMarks), len(fencedLines(c.Coordinators[ni], newMark)), first(fencedLines(c.Coordinators[ni], newMark)))
	})
	if starts := c.TaskStarts(agentMarks); len(starts) != 1 {
		t.Errorf("task starts since the pause: %v, want only %s-0 once (its config changed)", starts, src)
	}
	placed[src+"-0"] = gens[src+"-0"].Worker
	waitDelivered(t, out, w, w.Count(), false)
	t.Logf("%v: the successor's change runs; generations %v", since(), gens)

	agentMarks = c.Marks()
	// A bounded wait past the agent lease: long enough for the old
	// leader's reconcile loop to act had it not stepped down.
	sluicetest.Consistently(t, 2*c.Options().Lease, func() (bool, string) {
		for _, name := range []string{src, sink} {
			s, ok := c.StatusAt(ni, name)
			if !ok || len(s.Tasks) != 1 || s.Tasks[0].State != "RUNNING" || s.Tasks[0].WorkerID != placed[name+"-0"] {
				return false, fmt.Sprintf("after the old leader resumed %s is %+v, was RUNNING on %s", name, s, placed[name+"-0"])
			}
		}
		return true, ""
	})
	if starts := c.TaskStarts(agentMarks); len(starts) != 0 {
		t.Errorf("tasks started after the old leader resumed: %v", starts)
	}
	if stops := agentLines(c, agentMarks, `msg="task stopped"`); stops != "" {
		t.Errorf("tasks stopped after the old leader resumed:\n%s", stops)
	}
	got := taskGenerations(c)
	for _, id := range []string{src + "-0", sink + "-0"} {
		if got[id] != gens[id] {
			t.Errorf("status of %s after the old leader resumed: %+v, the successor's was %+v", id, got[id], gens[id])
		}
	}

	lines := w.Stop()
	waitDelivered(t, out, w, len(lines), true)
	t.Logf("%v: %d lines delivered exactly once", since(), len(lines))
}

// checkNoZombieWrites reads the config and status topics read_uncommitted
// and fails the test if a record of the old leader's producer (the one that
// wrote connector before) was stamped after pausedAt, or follows, in its
// partition, a record of the successor's producer (the one that wrote
// connector after).
func checkNoZombieWrites(t *testing.T, c *procs.Cluster, before, after string, pausedAt time.Time) {
	t.Helper()
	cfgs := readRaw(c, c.Prefix+"-configs")
	var oldP, newP producer
	for _, r := range cfgs {
		switch r.Key {
		case records.ConnectorKey(before):
			oldP = r.Producer
		case records.ConnectorKey(after):
			newP = r.Producer
		}
	}
	if oldP == (producer{}) || newP == (producer{}) || oldP == newP {
		t.Fatalf("producers of the config records: old leader %v, successor %v: want two distinct ones", oldP, newP)
	}
	for _, topic := range []string{c.Prefix + "-configs", c.Prefix + "-status"} {
		recs := cfgs
		if !strings.HasSuffix(topic, "-configs") {
			recs = readRaw(c, topic)
		}
		succeeded := map[int32]bool{}
		n := 0
		for _, r := range recs {
			if r.Producer == newP {
				succeeded[r.Partition] = true
				n++
			}
			if r.Producer == oldP && (succeeded[r.Partition] || !r.Timestamp.Before(pausedAt)) {
				t.Errorf("%s p%d@%d %s was written by the old leader (%v) at %s, after the pause (%s) or after its successor's writes",
					topic, r.Partition, r.Offset, r.Key, oldP, r.Timestamp.Format("15:04:05.000"), pausedAt.Format("15:04:05.000"))
			}
		}
		t.Logf("%s: %d records, %d of them the successor's (%v); old leader %v", topic, len(recs), n, newP, oldP)
	}
}

// waitAgentsFound waits up to timeout for every agent to register with the
// leader of term, and reports whether they did.
func waitAgentsFound(c *procs.Cluster, term int64, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		n := 0
		for _, a := range c.Agents {
			if a.CountLog(`msg="registered with coordinator"`, fmt.Sprintf("term=%d", term)) > 0 {
				n++
			}
		}
		if n == len(c.Agents) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// fencedLines returns p's log lines after m that say a write was fenced.
func fencedLines(p *procs.Proc, m procs.Mark) []string { return p.LogLinesSince(m, "fenced") }

func first(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[0]
}

// agentLines returns the agents' lines with substr after marks.
func agentLines(c *procs.Cluster, marks map[string]procs.Mark, substr string) string {
	var s string
	for _, a := range c.Agents {
		for _, l := range a.LogLinesSince(marks[a.Name()], substr) {
			s += a.Name() + ": " + l + "\n"
		}
	}
	return s
}

func containsAll(xs []string, want ...string) bool {
	have := map[string]bool{}
	for _, x := range xs {
		have[x] = true
	}
	for _, w := range want {
		if !have[w] {
			return false
		}
	}
	return true
}
