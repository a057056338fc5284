package integration

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestPlacementSelector checks that sluice.agent.selector confines a
// connector's tasks to matching agents, and that a task no live agent
// matches is UNASSIGNED (DESIGN §3, issue 2 §5), with a trace saying so and
// no worker_id: no agent runs it (the coordinator's address is no worker).
func TestPlacementSelector(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 3, Labels: []map[string]string{
		{"zone": "a"},
		{"zone": "b"},
		{"zone": "b", "host": "h3"},
	}})
	topic := c.Name("placement")

	tests := []struct {
		name, selector string
		tasks          int
		allowed        map[string]bool // nil: UNASSIGNED, with selector as its trace names it
		trace          string
	}{
		{"zone-b", "zone=b", 4, map[string]bool{"agent-2": true, "agent-3": true}, ""},
		{"zone-b-host", "zone=b,host=h3", 3, map[string]bool{"agent-3": true}, ""},
		{"zone-a", " zone = a ", 2, map[string]bool{"agent-1": true}, ""},
		{"anywhere", "", 3, map[string]bool{"agent-1": true, "agent-2": true, "agent-3": true}, ""},
		{"nowhere", "zone=c", 2, nil, "zone=c"},
		{"partial-match", "zone=a,host=h3", 1, nil, "host=h3,zone=a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := generatorCfg(topic, "streams", itoa10(tt.tasks), "tasks.max", itoa10(tt.tasks))
			if tt.selector != "" {
				cfg["sluice.agent.selector"] = tt.selector
			}
			mustCreate(c, tt.name, cfg, "")
			if tt.allowed == nil {
				st := c.WaitState(tt.name, "RUNNING", tt.tasks, "UNASSIGNED")
				want := "No live agent matches sluice.agent.selector " + tt.trace
				for _, ts := range st.Tasks {
					if ts.WorkerID != "" {
						t.Errorf("UNASSIGNED task %d has worker_id %q, want \"\": no agent runs it", ts.ID, ts.WorkerID)
					}
					if ts.Trace != want {
						t.Errorf("UNASSIGNED task %d has trace %q, want %q", ts.ID, ts.Trace, want)
					}
				}
				return
			}
			st := c.WaitState(tt.name, "RUNNING", tt.tasks, "RUNNING")
			for _, ts := range st.Tasks {
				if !tt.allowed[ts.WorkerID] {
					t.Errorf("task %d runs on %s, want one of %v", ts.ID, ts.WorkerID, tt.allowed)
				}
			}
		})
	}
	t.Run("invalid selector", func(t *testing.T) {
		r := c.Do("POST", "/connectors", map[string]any{"name": "bad-selector",
			"config": generatorCfg(topic, "sluice.agent.selector", "zone")})
		if r.Status != 400 || r.Message() == "" {
			t.Fatalf("got %s, want 400", r)
		}
		wantError(t, c.Do("GET", "/connectors/bad-selector", nil), 404, "Connector bad-selector not found")
	})
}

// TestPlacementLateAgent checks that an UNASSIGNED task starts on a matching
// agent as soon as one registers.
func TestPlacementLateAgent(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, Lease: time.Second, Labels: []map[string]string{
		{"zone": "a"},
		{"zone": "c"},
	}})
	c.StopAgent(1)
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		n := c.Coordinator.RegisteredAgents()
		return n == 1, fmt.Sprintf("%d agents registered", n)
	})
	mustCreate(c, "late", generatorCfg(c.Name("late"), "sluice.agent.selector", "zone=c"), "")
	c.WaitState("late", "RUNNING", 1, "UNASSIGNED")

	c.StartAgent(1)
	st := c.WaitState("late", "RUNNING", 1, "RUNNING")
	if st.Tasks[0].WorkerID != "agent-2" {
		t.Fatalf("task runs on %s, want agent-2", st.Tasks[0].WorkerID)
	}

	// Changing the selector moves the task; a selector nobody matches
	// leaves it UNASSIGNED; removing it lets it run anywhere.
	moves := []struct {
		selector any
		state    string
		agents   map[string]bool
	}{
		{"zone=a", "RUNNING", map[string]bool{"agent-1": true}},
		{"zone=z", "UNASSIGNED", nil},
		{"zone=c", "RUNNING", map[string]bool{"agent-2": true}},
		{nil, "RUNNING", map[string]bool{"agent-1": true, "agent-2": true}},
	}
	for _, m := range moves {
		t.Run(fmt.Sprint("selector ", m.selector), func(t *testing.T) {
			c.Must(200, "PATCH", "/connectors/late/config", map[string]any{"sluice.agent.selector": m.selector})
			sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
				st, _ := c.Status("late")
				ok := len(st.Tasks) == 1 && st.Tasks[0].State == m.state && (m.agents == nil || m.agents[st.Tasks[0].WorkerID])
				return ok, fmt.Sprintf("%+v", st)
			})
		})
	}
}

// TestPlacementIsolation checks that creating, pausing, reconfiguring,
// stopping and deleting other connectors never restarts or moves a running
// connector's tasks, and that its data stream has neither gaps nor
// duplicates.
func TestPlacementIsolation(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2})
	topic := c.Name("steady")
	mustCreate(c, "steady", generatorCfg(topic, "streams", "2", "tasks.max", "2", "rate", "200", "record.bytes", "40"), "")
	before := c.WaitState("steady", "RUNNING", 2, "RUNNING")
	gens := taskGenerations(c, "steady")

	other := generatorCfg(c.Name("other"), "streams", "3", "tasks.max", "3")
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"create", func(t *testing.T) {
			mustCreate(c, "other", other, "")
			c.WaitState("other", "RUNNING", 3, "RUNNING")
		}},
		{"create paused and stopped", func(t *testing.T) {
			mustCreate(c, "other-paused", other, "PAUSED")
			mustCreate(c, "other-stopped", other, "STOPPED")
			c.WaitState("other-paused", "PAUSED", 0, "")
			c.WaitState("other-stopped", "STOPPED", 0, "")
		}},
		{"pause", func(t *testing.T) {
			c.Must(202, "PUT", "/connectors/other/pause", nil)
			c.WaitState("other", "PAUSED", 3, "PAUSED")
		}},
		{"resume", func(t *testing.T) {
			c.Must(202, "PUT", "/connectors/other/resume", nil)
			c.WaitState("other", "RUNNING", 3, "RUNNING")
		}},
		{"reconfigure", func(t *testing.T) {
			c.Must(200, "PATCH", "/connectors/other/config", map[string]any{"streams": "1", "tasks.max": "1"})
			c.WaitState("other", "RUNNING", 1, "RUNNING")
		}},
		{"restart", func(t *testing.T) {
			c.Must(202, "POST", "/connectors/other/restart?includeTasks=true", nil)
			c.WaitState("other", "RUNNING", 1, "RUNNING")
		}},
		{"stop", func(t *testing.T) {
			c.Must(204, "PUT", "/connectors/other/stop", nil)
			c.WaitState("other", "STOPPED", 0, "")
		}},
		{"delete", func(t *testing.T) {
			for _, name := range []string{"other", "other-paused", "other-stopped"} {
				c.Must(204, "DELETE", "/connectors/"+name, nil)
			}
			sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
				_, ok := c.Status("other")
				return !ok, "status of other still shown"
			})
		}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.run(t)
			st, _ := c.Status("steady")
			if st.Connector.State != "RUNNING" || len(st.Tasks) != 2 || !mapsEqualInt(taskWorkers(st), taskWorkers(before)) {
				t.Fatalf("steady changed: %+v, was on %v", st, taskWorkers(before))
			}
			for _, ts := range st.Tasks {
				if ts.State != "RUNNING" {
					t.Fatalf("steady task %d is %s", ts.ID, ts.State)
				}
			}
			now := taskGenerations(c, "steady")
			for task, g := range gens {
				if len(now[task]) != len(g) || maxGen(now[task]) != maxGen(g) {
					t.Fatalf("steady task %d restarted: generations %v -> %v", task, g, now[task])
				}
			}
		})
	}

	// Both tasks have written before steady stops: on a loaded machine a
	// task can be RUNNING before its first record is acknowledged, and the
	// steps above may take less than that.
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		streams := map[string]bool{}
		for _, r := range c.ReadTopic(topic) {
			streams[string(r.Key)] = true
		}
		return len(streams) == 2, fmt.Sprintf("records of %d streams in the topic", len(streams))
	})
	c.Must(204, "PUT", "/connectors/steady/stop", nil)
	c.WaitState("steady", "STOPPED", 0, "")
	checkStreams(t, c.ReadTopic(topic), 2, -1)
}

// generated is a generator record value.
type generated struct {
	Stream  int64  `json:"stream"`
	Seq     int64  `json:"seq"`
	Payload string `json:"payload"`
}

// checkStreams decodes generator records and checks that each of streams
// holds seq 0, 1, 2, … exactly once with no gap: count records each, or (with
// count < 0) as many as were written. It returns the records per stream.
func checkStreams(t *testing.T, recs []sluicetest.Record, streams int, count int64) map[int64]int64 {
	t.Helper()
	seen := map[int64]map[int64]int{}
	for _, r := range recs {
		var g generated
		if err := json.Unmarshal(r.Value, &g); err != nil {
			t.Fatalf("record value %q: %v", r.Value, err)
		}
		if string(r.Key) != fmt.Sprint(g.Stream) {
			t.Fatalf("record key %q, value of stream %d", r.Key, g.Stream)
		}
		if seen[g.Stream] == nil {
			seen[g.Stream] = map[int64]int{}
		}
		seen[g.Stream][g.Seq]++
	}
	if len(seen) != streams {
		t.Fatalf("%d streams in the topic, want %d", len(seen), streams)
	}
	out := map[int64]int64{}
	for s, seqs := range seen {
		n := int64(len(seqs))
		if count >= 0 && n != count {
			t.Errorf("stream %d: %d distinct seqs, want %d", s, n, count)
		}
		for seq := int64(0); seq < n; seq++ {
			switch seqs[seq] {
			case 0:
				t.Errorf("stream %d: seq %d missing (of %d)", s, seq, n)
			case 1:
			default:
				t.Errorf("stream %d: seq %d written %d times", s, seq, seqs[seq])
			}
		}
		out[s] = n
	}
	return out
}
