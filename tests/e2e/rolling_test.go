package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/records"
)

// TestRollingUpgradeEndToEnd is issue 17's rolling upgrade: three agent
// processes run an exactly-once generator source (6 streams, 6 tasks) and a
// file sink of its topic. While records flow, each agent in turn is
// drained (until its drain is done), killed with SIGKILL, started again
// with the same id, seen registered again (a later started_at; still
// cordoned) and uncordoned. Then:
//
//   - every seq of every stream is in the topic exactly once
//     (read_committed), a gapless prefix up to the committed offsets;
//   - the sink's file holds every record of the topic once, with no gap.
//     The file sink delivers at least once: after a crash of the agent
//     running it, the records after its last commit are written again. A
//     drain stops it gracefully (flush, fsync, commit) before its next
//     instance starts from that commit, and it reads read_committed, so in
//     a roll that kills only drained agents no duplicate is allowed;
//   - during each agent's roll (drain to uncordon) each task the agent ran
//     started exactly once elsewhere, under a new generation, and no task
//     of another agent stopped or started (the agents' logs); the status
//     topic shows each task RUNNING under one generation more than it
//     was moved;
//
// and after the roll, which leaves the last agent empty, one POST
// /sluice/rebalance evens the agents out to within one task.
func TestRollingUpgradeEndToEnd(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	phase := func(format string, args ...any) {
		t.Logf("%6.1fs  %s", time.Since(begin).Seconds(), fmt.Sprintf(format, args...))
	}
	c := procs.Start(t, procs.Options{Agents: 3, CoordinatorArgs: eosArgs(true), AgentArgs: eosArgs(true)})
	g := procs.Generator{Topic: c.Name("gen"), Streams: 6, Tasks: 6, Count: -1, Rate: 50, RecordBytes: 100}
	c.CreateTopic(g.Topic, 3)
	src, sink := c.Name("src"), c.Name("sink")
	out := filepath.Join(c.WorkDir, "out.txt")
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": src, "config": g.Config()})
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": sink, "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": g.Topic, "tasks.max": "1"}})
	c.WaitRunning(src, g.Tasks)
	c.WaitRunning(sink, 1)
	c.WaitCommittedRecords(g.Topic, 300, 30*time.Second)
	phase("streaming: %d committed records; loads %v", c.CommittedRecords(g.Topic), agentLoads(agentsByID(c)))

	moves := map[string]int{} // task → how often the roll and the rebalance moved it
	for _, id := range []string{"agent-1", "agent-2", "agent-3"} {
		for _, task := range rollAgent(t, c, id, phase) {
			moves[task]++
		}
	}

	before := agentLoads(agentsByID(c))
	if spread(before) <= 1 {
		t.Fatalf("loads after the roll are %v: the roll left nothing to even out", before)
	}
	var rb api.Rebalance
	c.Must(http.StatusAccepted, http.MethodPost, "/sluice/rebalance", nil).JSON(t, &rb)
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		c.Must(http.StatusOK, http.MethodGet, "/sluice/rebalance", nil).JSON(t, &rb)
		return rb.State == "done", fmt.Sprintf("rebalance %s: %d moves", rb.State, len(rb.Moves))
	})
	c.WaitRunning(src, g.Tasks)
	c.WaitRunning(sink, 1)
	// An agent's list of tasks is what it last told the leader: a task
	// moved off it may still be listed there until its next report.
	var after map[string]int
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		after = agentLoads(agentsByID(c))
		return spread(after) <= 1 && total(after) == g.Tasks+1, fmt.Sprintf("after one rebalance the loads are %v (planned %v → %v), want %d tasks within one of each other", after, rb.Before, rb.After, g.Tasks+1)
	})
	for _, m := range rb.Moves {
		moves[api.TaskID{Connector: m.Connector, Task: m.Task}.String()]++
	}
	phase("rebalanced with %d moves: loads %v → %v", len(rb.Moves), before, after)

	// Pausing commits every task's last transaction: the offsets are then
	// final and the topic can be checked against them.
	flowing := c.CommittedRecords(g.Topic)
	c.Must(http.StatusAccepted, http.MethodPut, "/connectors/"+src+"/pause", nil)
	waitTasksState(t, c, src, g.Tasks, "PAUSED")
	seqs := checkPrefix(t, c, src, g, true, "after the roll")
	want := 0
	for st := int64(0); st < int64(g.Streams); st++ {
		want += int(seqs.Max(st)) + 1
	}
	if seqs.Records != want || seqs.Duplicates() != 0 {
		t.Errorf("topic holds %d records (%d duplicates), want %d exactly once", seqs.Records, seqs.Duplicates(), want)
	}
	phase("source paused: %d records exactly once (the topic's last stable offsets summed to %d before the pause)", seqs.Records, flowing)

	checkSinkFile(t, out, seqs)
	phase("sink file holds all %d records once, no gap", seqs.Records)

	// What Kafka Connect's tools read: each task ran under one generation
	// more than it was moved.
	gens := runningGenerations(c)
	for _, task := range slices.Sorted(maps.Keys(gens)) {
		if want := 1 + moves[task]; gens[task] != want {
			t.Errorf("status topic: %s RUNNING under %d generations, want %d (moved %d times)", task, gens[task], want, moves[task])
		}
	}
	if len(gens) != g.Tasks+1 {
		t.Errorf("status topic: RUNNING records of %d tasks, want %d", len(gens), g.Tasks+1)
	}
	phase("status topic: every task RUNNING under one generation more than it moved (%d moves in all)", total(moves))
}

// runningGenerations counts, per task, the distinct generations the status
// topic shows it RUNNING under.
func runningGenerations(c *procs.Cluster) map[string]int {
	c.T.Helper()
	seen := map[string]map[int64]bool{}
	for _, r := range c.ReadTopic(c.Prefix + "-status") {
		rec, err := records.DecodeStatus(string(r.Key), r.Value)
		if err != nil {
			c.T.Fatalf("status topic: %v", err)
		}
		if rec.Kind != records.StatusTask || rec.Status == nil || rec.Status.State != "RUNNING" {
			continue
		}
		id := api.TaskID{Connector: rec.Connector, Task: rec.Task}.String()
		if seen[id] == nil {
			seen[id] = map[int64]bool{}
		}
		seen[id][rec.Status.Generation] = true
	}
	out := make(map[string]int, len(seen))
	for id, gens := range seen {
		out[id] = len(gens)
	}
	return out
}

// rollAgent rolls one agent: drain until done, SIGKILL, start again with
// the same id, wait until it registered (later started_at, still not
// taking tasks), uncordon. It checks that exactly the tasks the agent ran
// each started once elsewhere, under a new generation, and no other task
// stopped or started meanwhile. It returns the tasks it moved.
func rollAgent(t *testing.T, c *procs.Cluster, id string, phase func(string, ...any)) []string {
	t.Helper()
	agents := agentsByID(c)
	old := agents[id]
	drained := taskNames(old.Tasks)
	gens := generationsOf(c)
	records := c.CommittedRecords(c.Name("gen"))
	marks := c.Marks()
	t0 := time.Now()
	c.Must(http.StatusAccepted, http.MethodPut, "/sluice/agents/"+id+"/drain", nil)
	var st api.DrainStatus
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		c.Must(http.StatusOK, http.MethodGet, "/sluice/agents/"+id+"/drain", nil).JSON(t, &st)
		if st.State == api.DrainBlocked {
			t.Fatalf("drain of %s blocked: %+v", id, st)
		}
		return st.State == api.DrainDone, fmt.Sprintf("drain of %s: %+v", id, st)
	})
	drainTook := time.Since(t0)
	if left := agentsByID(c)[id].Tasks; len(left) > 0 || st.Moved != len(drained) {
		t.Errorf("drain of %s done with %d moved and tasks %v left, want the %d it ran (%v) moved", id, st.Moved, left, len(drained), drained)
	}

	p := c.Agent(id)
	p.Kill()
	p.Start()
	var back api.AgentInfo
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		back = agentsByID(c)[id]
		return back.Registered && back.StartedAt.After(old.StartedAt),
			fmt.Sprintf("%s: registered %v, started at %v (before the restart: %v)", id, back.Registered, back.StartedAt, old.StartedAt)
	})
	// Its drain's mark survives the restart: it takes no task until
	// uncordoned (no task starts on it below).
	if back.State != api.AgentDraining && back.State != api.AgentCordoned {
		t.Errorf("%s came back %q, want it still %q (or %q) until uncordoned", id, back.State, api.AgentDraining, api.AgentCordoned)
	}
	c.Must(http.StatusOK, http.MethodPut, "/sluice/agents/"+id+"/uncordon", nil)
	if s := agentsByID(c)[id].State; s != api.AgentActive {
		t.Errorf("%s is %q after uncordon, want %q", id, s, api.AgentActive)
	}

	// Data goes on flowing: a roll can be over before the next commit of
	// the moved tasks (a drain of a few tasks takes tens of milliseconds,
	// the flush interval is 200 ms), so wait for records past those from
	// before it rather than require them at once.
	c.WaitCommittedRecords(c.Name("gen"), records+1, 15*time.Second)
	if on := p.TaskStarts(marks[id]); len(on) > 0 {
		t.Errorf("roll of %s: tasks started on it during its roll: %v", id, on)
	}
	starts := c.TaskStarts(marks)
	for _, task := range drained {
		if starts[task] != 1 {
			t.Errorf("roll of %s: %s (ran on %s) started %d times, want once elsewhere\n%s", id, task, id, starts[task], c.StartLines(marks))
		}
	}
	now := generationsOf(c)
	for task, gen := range now {
		if moved := slices.Contains(drained, task); moved != (gen != gens[task]) {
			t.Errorf("roll of %s: %s went from generation %d to %d (ran on %s: %v)", id, task, gens[task], gen, id, moved)
		}
	}
	for _, a := range c.Agents {
		for task, n := range a.TaskStarts(marks[a.Name()]) {
			if !slices.Contains(drained, task) {
				t.Errorf("roll of %s: %s, which did not run on %s, started %d times on %s", id, task, id, n, a.Name())
			}
		}
		if a.Name() == id {
			continue
		}
		for _, l := range a.LogLinesSince(marks[a.Name()], `msg="task stopped`) {
			t.Errorf("roll of %s: %s stopped a task it kept: %s", id, a.Name(), l)
		}
	}
	phase("rolled %s: drained %d tasks in %v, back and uncordoned after %v; %d committed records; loads %v",
		id, len(drained), drainTook.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond),
		c.CommittedRecords(c.Name("gen")), agentLoads(agentsByID(c)))
	return drained
}

// agentsByID is GET /sluice/agents, by agent id.
func agentsByID(c *procs.Cluster) map[string]api.AgentInfo {
	c.T.Helper()
	var list api.AgentList
	c.Must(http.StatusOK, http.MethodGet, "/sluice/agents", nil).JSON(c.T, &list)
	out := make(map[string]api.AgentInfo, len(list.Agents))
	for _, a := range list.Agents {
		out[a.ID] = a
	}
	return out
}

// agentLoads counts each agent's tasks.
func agentLoads(agents map[string]api.AgentInfo) map[string]int {
	out := make(map[string]int, len(agents))
	for id, a := range agents {
		out[id] = len(a.Tasks)
	}
	return out
}

// spread is the difference between the most and the fewest tasks.
func spread(loads map[string]int) int {
	vals := slices.Collect(maps.Values(loads))
	if len(vals) == 0 {
		return 0
	}
	return slices.Max(vals) - slices.Min(vals)
}

func total(loads map[string]int) int {
	n := 0
	for _, v := range loads {
		n += v
	}
	return n
}

// taskNames are tasks as "<connector>-<n>", the form agents log, sorted.
func taskNames(tasks []api.AgentTask) []string {
	out := make([]string, len(tasks))
	for i, tk := range tasks {
		out[i] = api.TaskID{Connector: tk.Connector, Task: tk.Task}.String()
	}
	sort.Strings(out)
	return out
}

// startedGenRE picks the task and generation out of a "task started" line.
var startedGenRE = regexp.MustCompile(`msg="task started".*\btask=("[^"]*"|\S+).*\bgeneration=(\d+)`)

// generationsOf is the latest generation each task started under, over
// every agent's log: a task moved gets a new one.
func generationsOf(c *procs.Cluster) map[string]int64 {
	out := map[string]int64{}
	for _, a := range c.Agents {
		for _, l := range a.LogLines(`msg="task started"`) {
			m := startedGenRE.FindStringSubmatch(l)
			if m == nil {
				c.T.Fatalf("%s: no task and generation in %q", a.Name(), l)
			}
			gen, err := strconv.ParseInt(m[2], 10, 64)
			if err != nil {
				c.T.Fatalf("%s: generation of %q: %v", a.Name(), l, err)
			}
			task := strings.Trim(m[1], `"`)
			out[task] = max(out[task], gen)
		}
	}
	return out
}

// waitTasksState waits until every one of the tasks tasks of connector
// name is in state.
func waitTasksState(t *testing.T, c *procs.Cluster, name string, tasks int, state string) {
	t.Helper()
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		s, ok := c.Status(name)
		if !ok || len(s.Tasks) != tasks {
			return false, fmt.Sprintf("%s: %+v", name, s)
		}
		for _, ts := range s.Tasks {
			if ts.State != state {
				return false, fmt.Sprintf("task %d is %s, want %s", ts.ID, ts.State, state)
			}
		}
		return true, ""
	})
}

// checkSinkFile waits until the file sink's output has as many lines as
// the topic has records, then checks it holds each of them once: for
// every stream, each seq from 0 to the topic's highest exactly once.
func checkSinkFile(t *testing.T, path string, topic procs.Seqs) {
	t.Helper()
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		n := len(fileLines(t, path))
		return n >= topic.Records, fmt.Sprintf("%s has %d lines, want %d", path, n, topic.Records)
	})
	copies := map[int64]map[int64]int{}
	for i, l := range fileLines(t, path) {
		var v struct {
			Stream *int64 `json:"stream"`
			Seq    *int64 `json:"seq"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.Stream == nil || v.Seq == nil {
			t.Fatalf("%s line %d is no generator record: %.80q", path, i+1, l)
		}
		if copies[*v.Stream] == nil {
			copies[*v.Stream] = map[int64]int{}
		}
		copies[*v.Stream][*v.Seq]++
	}
	for st, m := range topic.Copies {
		var missing, dups []int64
		for seq := int64(0); seq <= topic.Max(st); seq++ {
			switch n := copies[st][seq]; {
			case n == 0:
				missing = append(missing, seq)
			case n > 1:
				dups = append(dups, seq)
			}
		}
		if len(missing) > 0 || len(dups) > 0 || len(copies[st]) != len(m) {
			t.Errorf("sink file, stream %d: %d seq missing %s, %d written more than once %s, %d distinct seq, the topic has %d",
				st, len(missing), procs.Sample(missing), len(dups), procs.Sample(dups), len(copies[st]), len(m))
		}
	}
}

// fileLines returns the complete lines of path.
func fileLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("read the sink's file: %v", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read the sink's file %s: %v", path, err)
	}
	return out
}
