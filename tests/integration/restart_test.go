package integration

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// pipeline is a file source → topic → file sink pair.
type pipeline struct {
	c         *sluicetest.Cluster
	in, out   string
	topic     string
	lines     []string
	src, sink string
}

func startPipeline(t *testing.T, c *sluicetest.Cluster, n int) *pipeline {
	t.Helper()
	p := &pipeline{c: c, in: filepath.Join(c.WorkDir, "in.txt"), out: filepath.Join(c.WorkDir, "out.txt"),
		topic: c.Name("pipe"), src: "src", sink: c.Name("sink")}
	// The sink's name is unique on the broker: its group, connect-<name>,
	// must not meet another test's on a shared Kafka.
	p.lines = numbered(0, n)
	writeLines(t, p.in, p.lines)
	mustCreate(c, p.src, fileSourceCfg("in.txt", p.topic), "")
	mustCreate(c, p.sink, fileSinkCfg("out.txt", p.topic), "")
	c.WaitState(p.src, "RUNNING", 1, "RUNNING")
	c.WaitState(p.sink, "RUNNING", 1, "RUNNING")
	waitFile(t, p.out, p.lines)
	return p
}

// more appends n lines to the input and waits for the output to hold every
// line exactly once.
func (p *pipeline) more(t *testing.T, n int) {
	t.Helper()
	next := numbered(len(p.lines), n)
	appendLines(t, p.in, next)
	p.lines = append(p.lines, next...)
	waitFile(t, p.out, p.lines)
}

// snapshot is what must survive a restart: configs, states, placement and
// task generations.
type snapshot struct {
	configs map[string]string // name → config JSON
	status  map[string]sluicetest.Status
	gens    map[string]map[int]int64
}

func takeSnapshot(c *sluicetest.Cluster, names ...string) snapshot {
	c.T.Helper()
	s := snapshot{configs: map[string]string{}, status: map[string]sluicetest.Status{}, gens: map[string]map[int]int64{}}
	for _, n := range names {
		s.configs[n] = string(c.Must(200, "GET", "/connectors/"+n+"/config", nil).Body)
		st, _ := c.Status(n)
		s.status[n] = st
		s.gens[n] = map[int]int64{}
		for task, g := range taskGenerations(c, n) {
			s.gens[n][task] = maxGen(g)
		}
	}
	return s
}

// TestRestartCoordinator restarts the coordinator under a running pipeline:
// the tasks keep running (data flows while it is down), are not restarted
// (same agents, same generations), and configs and target states come back
// from the config topic.
func TestRestartCoordinator(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	p := startPipeline(t, c, 100)
	gen := generatorCfg(c.Name("gen"))
	mustCreate(c, "created-paused", gen, "PAUSED")
	mustCreate(c, "created-stopped", gen, "STOPPED")
	mustCreate(c, "paused", gen, "")
	c.WaitState("paused", "RUNNING", 1, "RUNNING")
	c.Must(202, "PUT", "/connectors/paused/pause", nil)
	c.WaitState("paused", "PAUSED", 1, "PAUSED")
	c.WaitState("created-paused", "PAUSED", 0, "")
	c.WaitState("created-stopped", "STOPPED", 0, "")
	names := []string{"created-paused", "created-stopped", "paused", p.sink, p.src}
	slices.Sort(names)
	before := takeSnapshot(c, names...)

	c.StopCoordinator()
	// Agents keep running their tasks while no coordinator answers.
	p.more(t, 50)

	c.StartCoordinator()
	c.WaitAgents(2)
	if got := listNames(c); !slices.Equal(got, names) {
		t.Fatalf("connectors after restart: %v, want %v", got, names)
	}
	wantStates := map[string][3]any{
		"created-paused":  {"PAUSED", 0, ""},
		"created-stopped": {"STOPPED", 0, ""},
		"paused":          {"PAUSED", 1, "PAUSED"},
		p.sink:            {"RUNNING", 1, "RUNNING"},
		"src":             {"RUNNING", 1, "RUNNING"},
	}
	for _, n := range names {
		w := wantStates[n]
		c.WaitState(n, w[0].(string), w[1].(int), w[2].(string))
	}
	p.more(t, 50)

	after := takeSnapshot(c, names...)
	for _, n := range names {
		if after.configs[n] != before.configs[n] {
			t.Errorf("%s config %s, was %s", n, after.configs[n], before.configs[n])
		}
		if !mapsEqualInt(taskWorkers(after.status[n]), taskWorkers(before.status[n])) {
			t.Errorf("%s tasks moved: %v -> %v", n, taskWorkers(before.status[n]), taskWorkers(after.status[n]))
		}
		for task, g := range before.gens[n] {
			if after.gens[n][task] != g {
				t.Errorf("%s task %d restarted: generation %d -> %d", n, task, g, after.gens[n][task])
			}
		}
	}

	// The restarted coordinator still drives the connectors.
	c.Must(202, "PUT", "/connectors/paused/resume", nil)
	c.WaitState("paused", "RUNNING", 1, "RUNNING")
	c.Must(202, "PUT", "/connectors/created-paused/resume", nil)
	c.WaitState("created-paused", "RUNNING", 1, "RUNNING")
	p.more(t, 10)
}

// TestRestartAgent stops and restarts the agent of each pipeline task in
// turn: each task resumes from its committed offsets, so the output holds
// every line exactly once.
func TestRestartAgent(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	p := startPipeline(t, c, 100)
	// A paused connector with a task on each agent: its tasks come back
	// paused, and write nothing.
	pausedTopic := c.Name("paused")
	mustCreate(c, "paused", generatorCfg(pausedTopic, "streams", "2", "tasks.max", "2"), "")
	c.WaitState("paused", "RUNNING", 2, "RUNNING")
	c.Must(202, "PUT", "/connectors/paused/pause", nil)
	c.WaitState("paused", "PAUSED", 2, "PAUSED")
	written := topicCount(c, pausedTopic)
	for _, conn := range []string{p.src, p.sink} {
		t.Run(conn, func(t *testing.T) {
			st, _ := c.Status(conn)
			i := agentIndex(t, st.Tasks[0].WorkerID)
			c.StopAgent(i)
			appendLines(t, p.in, numbered(len(p.lines), 30))
			p.lines = append(p.lines, numbered(len(p.lines), 30)...)
			c.StartAgent(i)
			c.WaitAgents(2)
			c.WaitState(conn, "RUNNING", 1, "RUNNING")
			waitFile(t, p.out, p.lines)
			p.more(t, 20)
			c.WaitState("paused", "PAUSED", 2, "PAUSED")
		})
	}
	if n := topicCount(c, pausedTopic); n != written {
		t.Errorf("the paused connector wrote %d records across agent restarts", n-written)
	}
}

// TestRestartAgentLost stops an agent for longer than its lease: its tasks
// move to the other agent and resume there from their committed offsets.
func TestRestartAgentLost(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Lease: time.Second})
	p := startPipeline(t, c, 100)
	st, _ := c.Status(p.src)
	i := agentIndex(t, st.Tasks[0].WorkerID)
	c.StopAgent(i)
	appendLines(t, p.in, numbered(len(p.lines), 40))
	p.lines = append(p.lines, numbered(len(p.lines), 40)...)
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		st, _ := c.Status(p.src)
		ok := len(st.Tasks) == 1 && st.Tasks[0].State == "RUNNING" && st.Tasks[0].WorkerID != fmt.Sprintf("agent-%d", i+1)
		return ok, fmt.Sprintf("%+v", st)
	})
	waitFile(t, p.out, p.lines)
	c.StartAgent(i)
	c.WaitAgents(2)
	p.more(t, 20)
}

// agentIndex is the harness index of the agent with id agent-<n>.
func agentIndex(t *testing.T, id string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscanf(id, "agent-%d", &n); err != nil {
		t.Fatalf("worker id %q is not an agent", id)
	}
	return n - 1
}

// TestRestartCoordinatorAndAgent restarts the coordinator while an agent is
// down, in both orders: the coordinator learns placement from the agent that
// reports and from the status topic for the one that does not, and every
// line still arrives exactly once.
func TestRestartCoordinatorAndAgent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		agentBackFirst bool
	}{
		{"agent lost while the coordinator is down", false},
		{"agent restarts while the coordinator is down", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := sluicetest.Start(t, sluicetest.Options{Lease: time.Second})
			p := startPipeline(t, c, 50)
			st, _ := c.Status(p.src)
			i := agentIndex(t, st.Tasks[0].WorkerID)

			c.StopCoordinator()
			c.StopAgent(i)
			appendLines(t, p.in, numbered(len(p.lines), 25))
			p.lines = append(p.lines, numbered(len(p.lines), 25)...)
			if tt.agentBackFirst {
				c.StartAgent(i)
			}
			c.StartCoordinator()
			if !tt.agentBackFirst {
				// The source's agent is presumed alive until its lease ends,
				// then the task moves to the live agent.
				sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
					st, _ := c.Status(p.src)
					ok := len(st.Tasks) == 1 && st.Tasks[0].State == "RUNNING" && st.Tasks[0].WorkerID != fmt.Sprintf("agent-%d", i+1)
					return ok, fmt.Sprintf("%+v", st)
				})
				c.StartAgent(i)
			}
			c.WaitAgents(2)
			c.WaitState(p.src, "RUNNING", 1, "RUNNING")
			c.WaitState(p.sink, "RUNNING", 1, "RUNNING")
			waitFile(t, p.out, p.lines)
			p.more(t, 25)
		})
	}
}
