package e2e

import (
	"fmt"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// eosArgs is the flag that turns exactly-once source support on or off,
// for the coordinator and every agent alike.
func eosArgs(on bool) []string {
	if on {
		return []string{"--exactly-once-source-support=enabled"}
	}
	return []string{"--exactly-once-source-support=disabled"}
}

// faultRun is the generator run that runAgentFaults drives through faults.
var faultRun = procs.Generator{Streams: 6, Tasks: 3, Count: 3000, Rate: 150, RecordBytes: 100}

// runAgentFaults is the failure scenario of issue 6, with exactly-once
// source support on or off. Three agents (lease 3s) run a generator source
// of three tasks; meanwhile:
//
//  1. the agent of task 0 is killed (SIGKILL): its tasks are RUNNING
//     elsewhere once its lease expired;
//  2. another agent that runs a task is paused (SIGSTOP) until its lease
//     expired and its tasks run elsewhere, then resumed (SIGCONT): the
//     zombie finds its transactional ids fenced, its tasks stop, and its late
//     reports do not overwrite its successors' statuses;
//  3. the coordinator is killed and restarted: no task restarts.
//
// The data topic, read read_committed, must hold every seq of every stream
// up to the committed offsets at each step and all of them at the end:
// exactly once with exactly-once support, at least once without (the
// duplicates are counted and returned).
func runAgentFaults(t *testing.T, eos bool) (duplicates int) {
	begin := time.Now()
	since := func() time.Duration { return time.Since(begin).Round(time.Millisecond) }
	c := procs.Start(t, procs.Options{Agents: 3, Lease: 3 * time.Second,
		CoordinatorArgs: eosArgs(eos), AgentArgs: eosArgs(eos)})
	t.Logf("%v: cluster up (brokers %s, exactly-once %v)", since(), c.Brokers, eos)

	g := faultRun
	g.Topic = c.Name("gen")
	c.CreateTopic(g.Topic, 3)
	name := c.Name("src")
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": name, "config": g.Config()})
	placed := placement(c.WaitRunning(name, g.Tasks))
	total := int64(g.Streams) * g.Count
	c.WaitCommittedRecords(g.Topic, 200, 30*time.Second)
	t.Logf("%v: streaming, tasks on %v", since(), placed)
	checkPrefix(t, c, name, g, eos, "before any fault")

	// 1. Crash an agent.
	dead := c.Agent(placed[0])
	killedAt := time.Now()
	dead.Kill()
	placed = c.WaitMoved(name, g.Tasks, 30*time.Second, dead.Name())
	t.Logf("%v: %s killed; its tasks RUNNING elsewhere after %v: %v", since(), dead.Name(),
		time.Since(killedAt).Round(time.Millisecond), placed)

	// 2. Pause another agent past its lease, then let it come back.
	zombie := c.Agent(placed[0])
	zombieTasks := tasksOn(placed, zombie.Name(), name)
	zmark, cmark := zombie.Mark(), c.Coordinator.Mark()
	pausedAt := time.Now()
	zombie.Pause()
	placed = c.WaitMoved(name, g.Tasks, 30*time.Second, dead.Name(), zombie.Name())
	successors := map[string]string{}
	for n, w := range placed {
		successors[fmt.Sprintf("%s-%d", name, n)] = w
	}
	t.Logf("%v: %s paused; its tasks %v RUNNING elsewhere after %v: %v", since(), zombie.Name(), zombieTasks,
		time.Since(pausedAt).Round(time.Millisecond), placed)
	// The successors started (each fenced the zombie's ids before it
	// started); let them commit something of their own first.
	c.WaitCommittedRecords(g.Topic, c.CommittedRecords(g.Topic)+100, 30*time.Second)
	zombie.Resume()
	t.Logf("%v: %s resumed", since(), zombie.Name())
	c.WaitRegistered(cmark, zombie.Name())
	// Each of its tasks either found itself fenced (it had records to
	// write) or was revoked before it wrote anything (a clean stop).
	for _, task := range zombieTasks {
		sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
			ended := append(procs.FencedLines(zombie, zmark, task), zombie.LogLinesSince(zmark, `msg="task stopped"`, "task="+task+" ")...)
			return len(ended) > 0, fmt.Sprintf("%s logged neither a fenced failure nor a stop of %s since it resumed:\n%s",
				zombie.Name(), task, strings.Join(zombie.LogLinesSince(zmark, "task="+task+" "), "\n"))
		})
		for _, l := range zombie.LogLinesSince(zmark, "task="+task+" ") {
			t.Logf("%s: %s", zombie.Name(), l)
		}
	}
	// Its reports carry an older generation: the status stays the
	// successor's, RUNNING, while the zombie's reports come in and its
	// tasks are revoked.
	sluicetest.Consistently(t, 2*time.Second, func() (bool, string) {
		got := c.Placement(name)
		return maps.Equal(got, placed), fmt.Sprintf("task statuses %v after %s came back, want %v (the successors, RUNNING)", got, zombie.Name(), placed)
	})
	if lines := zombie.LogLinesSince(zmark, `msg="task started"`); len(lines) > 0 {
		t.Errorf("%s started tasks after it resumed:\n%s", zombie.Name(), strings.Join(lines, "\n"))
	}
	checkPrefix(t, c, name, g, eos, "after the zombie came back")

	// 3. Crash and restart the coordinator: nothing restarts.
	marks := c.Marks()
	if n := c.CommittedRecords(g.Topic); n >= total {
		t.Fatalf("the run is over (%d records) before the coordinator crash: raise the count", n)
	}
	c.Coordinator.Kill()
	downAt := c.CommittedRecords(g.Topic)
	// The agents keep producing without a coordinator.
	c.WaitCommittedRecords(g.Topic, downAt+200, 30*time.Second)
	cmark = c.Coordinator.Mark()
	c.Coordinator.Restart()
	c.WaitHealthy()
	c.WaitRegistered(cmark, liveAgents(c, dead)...)
	t.Logf("%v: coordinator killed and restarted", since())
	if got := placement(c.WaitRunning(name, g.Tasks)); !maps.Equal(got, placed) {
		t.Errorf("after the coordinator restart tasks run on %v, want %v (unmoved)", got, placed)
	}

	c.WaitComplete(name, g.Streams, g.Count, 3*time.Minute)
	t.Logf("%v: every stream committed seq %d", since(), g.Count-1)
	if starts := c.TaskStarts(marks); len(starts) > 0 {
		t.Errorf("tasks restarted after the coordinator restart: %v\n%s", starts, c.StartLines(marks))
	}
	seqs := checkPrefix(t, c, name, g, eos, "at the end")
	if eos && int64(seqs.Records) != total {
		t.Errorf("topic holds %d records, want %d", seqs.Records, total)
	}
	end, _ := c.Status(name)
	for _, ts := range end.Tasks {
		if want := successors[fmt.Sprintf("%s-%d", name, ts.ID)]; ts.State != "RUNNING" || ts.WorkerID != want {
			t.Errorf("task %d is %s on %q at the end, want RUNNING on %q", ts.ID, ts.State, ts.WorkerID, want)
		}
	}
	t.Logf("%v: %d records, %d duplicates, every seq of %d streams × %d present", since(), seqs.Records, seqs.Duplicates(), g.Streams, g.Count)
	return seqs.Duplicates()
}

// checkPrefix reads the committed offsets and then the data topic, and
// fails the test unless the topic holds every seq up to the committed one
// (exactly once, as a gapless prefix, when eos).
func checkPrefix(t *testing.T, c *procs.Cluster, name string, g procs.Generator, eos bool, when string) procs.Seqs {
	t.Helper()
	committed := c.CommittedSeqs(name)
	upTo := map[int64]int64{}
	for st := int64(0); st < int64(g.Streams); st++ {
		upTo[st] = -1
		if seq, ok := committed[st]; ok {
			upTo[st] = seq
		}
	}
	// A transaction commits its partitions one after another (the broker
	// writes the markers after EndTxn returned), so the data of a committed
	// offset may become readable a moment after the offset: read again
	// until it did, for a bounded while.
	var seqs procs.Seqs
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		seqs = procs.ParseSeqs(c.ReadTopic(g.Topic))
		problems := seqs.Check(g.Streams, upTo, eos)
		return len(problems) == 0, fmt.Sprintf("%s: topic %s (%d records; committed seqs %v):\n%s", when, g.Topic, seqs.Records, upTo, strings.Join(problems, "\n"))
	})
	t.Logf("%s: %d records, %d duplicates, committed seqs %v", when, seqs.Records, seqs.Duplicates(), upTo)
	return seqs
}

// placement is a status's task → worker map.
func placement(s sluicetest.Status) map[int]string {
	out := map[int]string{}
	for _, ts := range s.Tasks {
		out[ts.ID] = ts.WorkerID
	}
	return out
}

// tasksOn names the tasks of connector that placed puts on agent.
func tasksOn(placed map[int]string, agent, connector string) []string {
	var out []string
	for n, w := range placed {
		if w == agent {
			out = append(out, fmt.Sprintf("%s-%d", connector, n))
		}
	}
	slices.Sort(out)
	return out
}

// liveAgents names the cluster's agents other than those of gone.
func liveAgents(c *procs.Cluster, gone ...*procs.Proc) []string {
	var out []string
	for _, a := range c.Agents {
		if !slices.Contains(gone, a) && a.Running() {
			out = append(out, a.Name())
		}
	}
	return out
}
