package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/agent"
	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/agents"
	"github.com/sluice-io/sluice/shared/version"
)

// fleet is a test cluster with more agents than its own agent-1, which the
// test stops and starts again as an operator restarts a process.
type fleet struct {
	*testCluster
	mu     sync.Mutex
	agents map[string]*agent.Agent
	labels map[string]map[string]string
}

// startFleet starts a test cluster and the agents of labels (id to its
// labels) beside its agent-1, and waits until all are registered.
func startFleet(t *testing.T, labels map[string]map[string]string) *fleet {
	t.Helper()
	f := &fleet{testCluster: startCluster(t), agents: map[string]*agent.Agent{}, labels: labels}
	for id := range labels {
		f.start(t, id)
	}
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for id, a := range f.agents {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_ = a.Stop(ctx)
			cancel()
			delete(f.agents, id)
		}
	})
	eventually(t, 30*time.Second, func() (bool, string) {
		n := 0
		for _, a := range agentsJSON(t, f.URL) {
			if a.Registered {
				n++
			}
		}
		return n == len(labels)+1, fmt.Sprintf("%d agents registered", n)
	})
	return f
}

// start starts agent id, as a new process would: a new agent with the
// cluster's config, its id and labels.
func (f *fleet) start(t *testing.T, id string) {
	t.Helper()
	if err := f.run(id); err != nil {
		t.Fatal(err)
	}
}

// run is start for a goroutine of the test, which may not fail it.
func (f *fleet) run(id string) error {
	cfg := f.agentCfg
	cfg.ID, cfg.Labels, cfg.Metrics = id, f.labels[id], prometheus.NewRegistry()
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.Start(ctx); err != nil {
		return fmt.Errorf("start agent %s: %w", id, err)
	}
	f.mu.Lock()
	f.agents[id] = a
	f.mu.Unlock()
	return nil
}

// stop stops agent id gracefully, as SIGTERM does.
func (f *fleet) stop(t *testing.T, id string) {
	t.Helper()
	f.mu.Lock()
	a := f.agents[id]
	delete(f.agents, id)
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		t.Errorf("stop agent %s: %v", id, err)
	}
}

// agentsJSON is `sluice agents list -o json`.
func agentsJSON(t *testing.T, url string) []api.AgentInfo {
	t.Helper()
	var agents []api.AgentInfo
	if err := json.Unmarshal([]byte(mustCLI(t, "agents", "list", "-o", "json", "--url", url)), &agents); err != nil {
		t.Fatal(err)
	}
	return agents
}

// agentByID is the agent called id among agents.
func agentByID(t *testing.T, agents []api.AgentInfo, id string) api.AgentInfo {
	t.Helper()
	for _, a := range agents {
		if a.ID == id {
			return a
		}
	}
	t.Fatalf("no agent %s among %+v", id, agents)
	return api.AgentInfo{}
}

// createSources creates file sources called names, one task each, and
// waits until they run.
func createSources(t *testing.T, cl *testCluster, extra string, names ...string) {
	t.Helper()
	writeFile(t, cl.WorkDir, "in.txt", "a\nb\n")
	dir := t.TempDir()
	for _, n := range names {
		writeFile(t, dir, n+".yaml", "name: "+n+"\nconnector.class: FileStreamSource\nfile: in.txt\ntopic: "+n+"\n"+extra)
	}
	mustCLI(t, "apply", "-f", dir, "--wait", "--timeout", "60s", "--url", cl.URL)
}

// leaseCol stands for the LEASE column's seconds left, which change.
var leaseCol = regexp.MustCompile(`\b\d+s\b`)

// TestAgentsCLI: agents list, get agents and agents get show the agents
// with their labels, state and tasks; cordon and uncordon change the state;
// drain --wait ends with the agent's tasks running elsewhere; a drain of a
// pinned task's only agent is the server's 409 and exit 1; an unknown agent
// is a 404.
func TestAgentsCLI(t *testing.T) {
	f := startFleet(t, map[string]map[string]string{"agent-2": {"host": "h2"}, "agent-3": {"host": "h3"}})
	u := f.URL
	// The version's column is as wide as the version.
	w := max(len("VERSION"), len(version.Version))
	want := fmt.Sprintf("ID       STATE   BY  TASKS  %-[1]*[2]s  LABELS   LEASE  REGISTERED\n"+
		"agent-1  active  -   0      %-[1]*[3]s  -        <s>    true\n"+
		"agent-2  active  -   0      %-[1]*[3]s  host=h2  <s>    true\n"+
		"agent-3  active  -   0      %-[1]*[3]s  host=h3  <s>    true\n", w, "VERSION", version.Version)
	for _, args := range [][]string{{"agents", "list"}, {"get", "agents"}} {
		if got := leaseCol.ReplaceAllString(mustCLI(t, append(args, "--url", u)...), "<s>"); got != want {
			t.Fatalf("sluice %s:\n%s\nwant:\n%s", strings.Join(args, " "), got, want)
		}
	}

	createSources(t, f.testCluster, "", "src-a", "src-b", "src-c")
	createSources(t, f.testCluster, "sluice.agent.selector: host=h2\n", "pinned")
	// The agent's own reports say RUNNING a moment after the status topic.
	eventually(t, 30*time.Second, func() (bool, string) {
		out := mustCLI(t, "agents", "get", "agent-2", "--url", u)
		return strings.Contains(out, "  pinned     0     RUNNING\n"), out
	})
	var a api.AgentInfo
	if err := json.Unmarshal([]byte(mustCLI(t, "agents", "get", "agent-2", "-o", "json", "--url", u)), &a); err != nil ||
		a.ID != "agent-2" || !a.Registered || a.Labels["host"] != "h2" || a.StartedAt.IsZero() || len(a.Plugins) == 0 ||
		!hasTask(a, "pinned") {
		t.Fatalf("agents get -o json: %+v (%v)", a, err)
	}
	out := mustCLI(t, "agents", "get", "agent-2", "--url", u)
	for _, line := range []string{"id:          agent-2\n", "state:       active\n", "labels:      host=h2\n", "registered:  true\n", "\ntasks:\n  CONNECTOR  TASK  STATE\n  pinned     0     RUNNING\n"} {
		if !strings.Contains(out, line) {
			t.Fatalf("agents get:\n%s\nwant a line %q", out, line)
		}
	}

	if out := mustCLI(t, "agents", "cordon", "agent-3", "--url", u); !regexp.MustCompile(`^AGENT    STATE     TASKS\nagent-3  cordoned  \d\n$`).MatchString(out) {
		t.Fatalf("agents cordon:\n%s", out)
	}
	if st := agentByID(t, agentsJSON(t, u), "agent-3").State; st != api.AgentCordoned {
		t.Fatalf("agent-3 after cordon: %s", st)
	}
	if out := mustCLI(t, "agents", "list", "--url", u); !regexp.MustCompile(`(?m)^agent-3  cordoned  operator  `).MatchString(out) {
		t.Fatalf("agents list after an operator's cordon, want BY operator:\n%s", out)
	}
	if out := mustCLI(t, "agents", "uncordon", "agent-3", "-o", "yaml", "--url", u); !strings.Contains(out, "state: active\n") {
		t.Fatalf("agents uncordon -o yaml:\n%s", out)
	}

	// The agent with the most tasks of src-a, src-b and src-c drains to the others.
	var from api.AgentInfo
	for _, a := range agentsJSON(t, u) {
		if a.ID != "agent-2" && len(a.Tasks) > len(from.Tasks) {
			from = a
		}
	}
	if len(from.Tasks) == 0 {
		t.Fatalf("no agent but agent-2 runs a task: %+v", agentsJSON(t, u))
	}
	stdout, errOut, code := runCLI(t, "agents", "drain", from.ID, "--wait", "--timeout", "60s", "--url", u)
	if code != 0 || !strings.Contains(errOut, "agent "+from.ID+" drained: it runs no task\n") ||
		!regexp.MustCompile(fmt.Sprintf(`^AGENT +DRAIN +MOVED +REMAINING +MOVING +BLOCKED\n%s +done +%d +0 +- +-\n$`, from.ID, len(from.Tasks))).MatchString(stdout) {
		t.Fatalf("agents drain --wait: exit %d\n%s%s", code, stdout, errOut)
	}
	if !strings.Contains(errOut, "draining "+from.ID+": moved ") {
		t.Fatalf("agents drain --wait printed no progress:\n%s", errOut)
	}
	for _, tk := range from.Tasks {
		eventually(t, 30*time.Second, func() (bool, string) {
			out := mustCLI(t, "get", "tasks", tk.Connector, "--url", u)
			return strings.Contains(out, " RUNNING ") && !strings.Contains(out, from.ID), out
		})
	}
	if a := agentByID(t, agentsJSON(t, u), from.ID); a.State != api.AgentDraining || len(a.Tasks) != 0 {
		t.Fatalf("%s after its drain: %+v", from.ID, a)
	}
	mustCLI(t, "agents", "uncordon", from.ID, "--url", u)

	// pinned may run only on agent-2.
	_, errOut, code = runCLI(t, "agents", "drain", "agent-2", "--wait", "--url", u)
	if code != exitRefused || errOut != "sluice: 409: Draining agent agent-2 would leave 1 task(s) with nowhere to go: "+
		"pinned/0 (no other live, uncordoned agent has sluice.agent.selector host=h2 and plugin org.apache.kafka.connect.file.FileStreamSourceConnector); drain it with force=true to unassign them\n" {
		t.Fatalf("drain of a pinned task's agent: exit %d, %q", code, errOut)
	}
	if st := agentByID(t, agentsJSON(t, u), "agent-2").State; st != api.AgentActive {
		t.Fatalf("a refused drain left agent-2 %s", st)
	}
	// Forced, the drain unassigns pinned; uncordoned, agent-2 runs it again.
	if _, errOut, code := runCLI(t, "agents", "drain", "agent-2", "--force", "--wait", "--timeout", "60s", "--url", u); code != 0 ||
		!strings.Contains(errOut, "agent agent-2 drained") {
		t.Fatalf("drain --force: exit %d\n%s", code, errOut)
	}
	if out := mustCLI(t, "get", "tasks", "pinned", "--url", u); !strings.Contains(out, "UNASSIGNED") {
		t.Fatalf("pinned after a forced drain of its agent:\n%s", out)
	}
	mustCLI(t, "agents", "uncordon", "agent-2", "--url", u)
	eventually(t, 30*time.Second, func() (bool, string) {
		out := mustCLI(t, "get", "tasks", "pinned", "--url", u)
		return strings.Contains(out, "RUNNING  agent-2"), out
	})
	if _, errOut, code := runCLI(t, "agents", "get", "nope", "--url", u); code != exitRefused || errOut != "sluice: 404: Agent nope not found\n" {
		t.Fatalf("agents get nope: exit %d, %q", code, errOut)
	}
	if _, _, code := runCLI(t, "agents", "cordon", "--url", u); code != exitUsage {
		t.Fatalf("agents cordon without an id: exit %d", code)
	}
	t.Setenv("SLUICE_ID", "agent-3")
	if out := mustCLI(t, "agents", "cordon", "--self", "--url", u); !strings.Contains(out, "agent-3  cordoned") {
		t.Fatalf("agents cordon --self:\n%s", out)
	}
}

// hasTask reports whether a runs a task of connector.
func hasTask(a api.AgentInfo, connector string) bool {
	for _, t := range a.Tasks {
		if t.Connector == connector {
			return true
		}
	}
	return false
}

// TestRebalanceAndRoll: after agents restart one after the other the last
// one runs nothing; rebalance --dry-run shows the moves and moves nothing,
// rebalance --wait evens the agents out; fleet roll drains, restarts (by
// --restart-cmd, which the test answers by restarting the agent) and
// uncordons each agent, every task RUNNING at the end; a roll whose agent
// never comes back stops there, names it and exits 1.
func TestRebalanceAndRoll(t *testing.T) {
	f := startFleet(t, map[string]map[string]string{"agent-2": nil, "agent-3": nil})
	u := f.URL
	names := []string{"r-1", "r-2", "r-3", "r-4", "r-5", "r-6"}
	createSources(t, f.testCluster, "", names...)
	for _, id := range []string{"agent-2", "agent-3"} {
		f.stop(t, id)
		f.start(t, id)
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		out := mustCLI(t, "agents", "list", "--url", u)
		return strings.Count(out, " true\n") == 3, out
	})
	waitAllRunning(t, u, names)
	if n := len(agentByID(t, agentsJSON(t, u), "agent-3").Tasks); n != 0 {
		t.Fatalf("agent-3 runs %d tasks after its restart; placement is sticky", n)
	}

	stdout, errOut, code := runCLI(t, "rebalance", "--dry-run", "--url", u)
	if code != 0 || !strings.HasPrefix(stdout, "CONNECTOR  TASK  FROM     TO       STATE\n") || !strings.Contains(stdout, "agent-3  planned\n") ||
		!strings.Contains(stdout, "\nloads:\n  AGENT    BEFORE  AFTER\n") || !strings.Contains(stdout, "  agent-3  0       2\n") ||
		errOut != "dry run: nothing was moved\n" {
		t.Fatalf("rebalance --dry-run: exit %d\n%s%s", code, stdout, errOut)
	}
	if n := len(agentByID(t, agentsJSON(t, u), "agent-3").Tasks); n != 0 {
		t.Fatalf("the dry run moved %d tasks", n)
	}
	stdout, errOut, code = runCLI(t, "rebalance", "--wait", "--max-moves", "1", "--timeout", "60s", "--url", u)
	if code != 0 || !strings.Contains(stdout, "agent-3  done\n") || !strings.Contains(errOut, "moves done") {
		t.Fatalf("rebalance --wait: exit %d\n%s%s", code, stdout, errOut)
	}
	for _, a := range agentsJSON(t, u) {
		if len(a.Tasks) != 2 {
			t.Fatalf("after the rebalance %s runs %d tasks, want 2", a.ID, len(a.Tasks))
		}
	}
	if out := mustCLI(t, "rebalance", "status", "-o", "json", "--url", u); !strings.Contains(out, `"state": "done"`) {
		t.Fatalf("rebalance status:\n%s", out)
	}

	// The restart command drops a file the test answers by restarting the
	// agent it names.
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	restarted := make(chan string, 8)
	go func() {
		for ctx.Err() == nil {
			for _, id := range []string{"agent-2", "agent-3"} {
				p := filepath.Join(dir, id)
				if os.Remove(p) == nil {
					f.stop(t, id)
					if err := f.run(id); err != nil {
						t.Error(err)
					}
					restarted <- id
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	before := agentsJSON(t, u)
	stdout, errOut, code = runCLI(t, "fleet", "roll", "--agents", "agent-2,agent-3", "--timeout", "60s",
		"--restart-cmd", "touch "+dir+"/{id}", "-o", "json", "--url", u)
	if code != 0 {
		t.Fatalf("fleet roll: exit %d\n%s%s", code, stdout, errOut)
	}
	var done []agents.Rolled
	if err := json.Unmarshal([]byte(stdout), &done); err != nil || len(done) != 2 || done[0].Agent != "agent-2" || done[1].Agent != "agent-3" {
		t.Fatalf("fleet roll -o json: %s (%v)", stdout, err)
	}
	for _, line := range []string{"agent-2: draining\n", "agent agent-2 drained: it runs no task\n", "agent-2: restarting: touch " + dir + "/agent-2\n",
		"waiting for agent agent-2 to restart (started_at ", "agent-3: draining\n", "rolled 2 agents\n"} {
		if !strings.Contains(errOut, line) {
			t.Fatalf("fleet roll's progress:\n%s\nwant %q", errOut, line)
		}
	}
	if strings.Index(errOut, "agent-2: restarted") > strings.Index(errOut, "agent-3: draining") {
		t.Fatalf("agent-3 drained before agent-2 was back:\n%s", errOut)
	}
	if len(restarted) != 2 {
		t.Fatalf("%d agents restarted", len(restarted))
	}
	after := agentsJSON(t, u)
	for _, id := range []string{"agent-2", "agent-3"} {
		b, a := agentByID(t, before, id), agentByID(t, after, id)
		if a.State != api.AgentActive || !a.Registered || !a.StartedAt.After(b.StartedAt) {
			t.Fatalf("%s after the roll: %+v (before: started %s)", id, a, b.StartedAt)
		}
	}
	waitAllRunning(t, u, names)

	// Two at a time: both drained, then both restarted.
	before = agentsJSON(t, u)
	_, errOut, code = runCLI(t, "fleet", "roll", "--agents", "agent-3,agent-2", "--batch", "2", "--timeout", "60s",
		"--restart-cmd", "touch "+dir+"/{id}", "--url", u)
	if code != 0 || !strings.Contains(errOut, "rolled 2 agents\n") ||
		strings.Index(errOut, "agent-2: draining") > strings.Index(errOut, "agent-3: restarting") {
		t.Fatalf("fleet roll --batch 2: exit %d\n%s", code, errOut)
	}
	for _, id := range []string{"agent-2", "agent-3"} {
		if b, a := agentByID(t, before, id), agentByID(t, agentsJSON(t, u), id); a.State != api.AgentActive || !a.StartedAt.After(b.StartedAt) {
			t.Fatalf("%s after the roll of two at a time: %+v", id, a)
		}
	}
	waitAllRunning(t, u, names)

	// Without --restart-cmd the roll waits for someone else to restart the
	// agent: here the test, once it sees the agent drained.
	go func() {
		for ctx.Err() == nil {
			out, _, _ := runCLI(t, "agents", "get", "agent-3", "-o", "json", "--url", u)
			var a api.AgentInfo
			if json.Unmarshal([]byte(out), &a) == nil && a.State == api.AgentDraining && len(a.Tasks) == 0 {
				f.stop(t, "agent-3")
				if err := f.run("agent-3"); err != nil {
					t.Error(err)
				}
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	_, errOut, code = runCLI(t, "fleet", "roll", "--agents", "agent-3", "--timeout", "60s", "--url", u)
	if code != 0 || !strings.Contains(errOut, "waiting for agent agent-3 to restart (started_at ") || !strings.Contains(errOut, "rolled 1 agent\n") {
		t.Fatalf("fleet roll with a restart by someone else: exit %d\n%s", code, errOut)
	}
	waitAllRunning(t, u, names)

	if _, errOut, code := runCLI(t, "fleet", "roll", "--agents", "agent-2,nope", "--url", u); code != exitRefused || errOut != "sluice: 404: Agent nope not found\n" {
		t.Fatalf("fleet roll of an unknown agent: exit %d, %q", code, errOut)
	}
	if _, _, code := runCLI(t, "fleet", "roll", "--batch", "0", "--url", u); code != exitUsage {
		t.Fatalf("fleet roll --batch 0: exit %d", code)
	}
	if _, errOut, code := runCLI(t, "rebalance", "--max-moves", "5000", "--url", u); code != exitRefused || !strings.Contains(errOut, "sluice: 400: Invalid max_moves '5000'") {
		t.Fatalf("rebalance --max-moves 5000: exit %d, %q", code, errOut)
	}

	// agent-1 (first, sorted) drains but nobody restarts it.
	stdout, errOut, code = runCLI(t, "fleet", "roll", "--timeout", "20s", "--url", u)
	if code != exitRefused || !strings.Contains(errOut, "sluice: fleet roll stopped: agent agent-1 did not come back within 20s: it is registered but did not restart") ||
		!strings.Contains(errOut, "it is left draining (sluice agents uncordon agent-1 undoes it once it runs)") ||
		!strings.Contains(errOut, "rolled 0 of 3 agents, not rolled: agent-1, agent-2, agent-3") || strings.Contains(errOut, "agent-2: draining") {
		t.Fatalf("a roll whose agent does not come back: exit %d\n%s%s", code, stdout, errOut)
	}
	if a := agentByID(t, agentsJSON(t, u), "agent-1"); a.State != api.AgentDraining {
		t.Fatalf("agent-1 after the failed roll: %s", a.State)
	}
	mustCLI(t, "agents", "uncordon", "agent-1", "--url", u)
	waitAllRunning(t, u, names)
}

// waitAllRunning waits until every connector of names and its tasks run.
func waitAllRunning(t *testing.T, u string, names []string) {
	t.Helper()
	eventually(t, 60*time.Second, func() (bool, string) {
		out := mustCLI(t, "get", "connectors", "--url", u)
		return strings.Count(out, "RUNNING  1/1") == len(names), out
	})
}

// TestOperationsDocCommands: every sluice command of the operations docs
// (docs/operations.md, and its parts before they are merged into it)
// parses with the CLI's commands and flags.
func TestOperationsDocCommands(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "operations*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/operations*.md (%v)", err)
	}
	n := 0
	for _, doc := range docs {
		for _, d := range shellBlocks(t, doc) {
			if args := sluiceArgs(t, d); args != nil {
				n++
				parseArgs(t, filepath.Base(doc), d, args)
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d sluice commands found in %q", n, docs)
	}
}
