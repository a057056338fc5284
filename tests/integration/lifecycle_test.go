package integration

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestLifecycleInitialStates follows connectors created in each initial
// state (spec §3, KIP-980) through resume.
func TestLifecycleInitialStates(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	gen := generatorCfg(c.Name("initial"), "streams", "2", "tasks.max", "2")

	t.Run("created STOPPED", func(t *testing.T) {
		mustCreate(c, "stopped", gen, "stopped")
		c.WaitState("stopped", "STOPPED", 0, "")
		wantJSON(t, c.Do("GET", "/connectors/stopped/tasks", nil), 200, `[]`)
		wantError(t, c.Do("GET", "/connectors/stopped/tasks/0/status", nil), 404, "No status found for task stopped-0")
		wantNoBody(t, c.Do("PUT", "/connectors/stopped/resume", nil), 202)
		c.WaitState("stopped", "RUNNING", 2, "RUNNING")
		var tasks []any
		c.Must(200, "GET", "/connectors/stopped/tasks", nil).JSON(t, &tasks)
		if len(tasks) != 2 {
			t.Errorf("tasks after resume: %v", tasks)
		}
	})
	t.Run("created PAUSED", func(t *testing.T) {
		mustCreate(c, "paused", gen, "PAUSED")
		c.WaitState("paused", "PAUSED", 0, "")
		wantJSON(t, c.Do("GET", "/connectors/paused/tasks", nil), 200, `[]`)
		wantNoBody(t, c.Do("PUT", "/connectors/paused/resume", nil), 202)
		c.WaitState("paused", "RUNNING", 2, "RUNNING")
	})
	t.Run("created with initial_state null", func(t *testing.T) {
		c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "null-state", "config": gen, "initial_state": nil})
		c.WaitState("null-state", "RUNNING", 2, "RUNNING")
	})
}

// TestLifecycleTransitions walks a running connector through pause, stop,
// resume and back (spec §3, §6), checking idempotence at each step.
func TestLifecycleTransitions(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	gen := generatorCfg(c.Name("transitions"), "streams", "2", "tasks.max", "2")
	mustCreate(c, "x", gen, "")
	running := c.WaitState("x", "RUNNING", 2, "RUNNING")
	placed := taskWorkers(running)

	steps := []struct {
		action    string
		status    int
		state     string
		tasks     int
		taskState string
	}{
		{"pause", 202, "PAUSED", 2, "PAUSED"},
		{"pause", 202, "PAUSED", 2, "PAUSED"},
		{"resume", 202, "RUNNING", 2, "RUNNING"},
		{"resume", 202, "RUNNING", 2, "RUNNING"},
		{"stop", 204, "STOPPED", 0, ""},
		{"stop", 204, "STOPPED", 0, ""},
		{"pause", 202, "PAUSED", 0, ""}, // pausing a STOPPED connector: PAUSED, still no tasks
		{"stop", 204, "STOPPED", 0, ""},
		{"resume", 202, "RUNNING", 2, "RUNNING"}, // from STOPPED: tasks are generated again
		{"pause", 202, "PAUSED", 2, "PAUSED"},
		{"stop", 204, "STOPPED", 0, ""}, // from PAUSED
		{"resume", 202, "RUNNING", 2, "RUNNING"},
	}
	for i, s := range steps {
		t.Run(itoa10(i)+"-"+s.action, func(t *testing.T) {
			wantNoBody(t, c.Do("PUT", "/connectors/x/"+s.action, nil), s.status)
			st := c.WaitState("x", s.state, s.tasks, s.taskState)
			if s.tasks == 0 {
				wantJSON(t, c.Do("GET", "/connectors/x/tasks", nil), 200, `[]`)
				wantJSON(t, c.Do("GET", "/connectors/x", nil), 200,
					`{"name":"x","config":`+configJSON(cfgWith(gen, "name", "x"))+`,"tasks":[],"type":"source"}`)
			}
			if s.state == "PAUSED" && s.tasks > 0 {
				// Pausing keeps the tasks where they run.
				if got := taskWorkers(st); !mapsEqualInt(got, placed) {
					t.Errorf("paused tasks on %v, were on %v", got, placed)
				}
			}
			if s.state == "RUNNING" {
				placed = taskWorkers(st)
			}
		})
	}

	for _, action := range []string{"stop", "pause", "resume"} {
		t.Run(action+" unknown", func(t *testing.T) {
			wantError(t, c.Do("PUT", "/connectors/nope/"+action, nil), 404, "Unknown connector nope")
		})
	}
}

// TestLifecyclePauseKeepsTasks checks that pause and resume do not restart
// the tasks: they run on under the same generation, on the same agents.
func TestLifecyclePauseKeepsTasks(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	mustCreate(c, "g", generatorCfg(c.Name("pause"), "streams", "2", "tasks.max", "2"), "")
	before := c.WaitState("g", "RUNNING", 2, "RUNNING")
	gens := taskGenerations(c, "g")
	c.Must(202, "PUT", "/connectors/g/pause", nil)
	c.WaitState("g", "PAUSED", 2, "PAUSED")
	c.Must(202, "PUT", "/connectors/g/resume", nil)
	after := c.WaitState("g", "RUNNING", 2, "RUNNING")
	if !mapsEqualInt(taskWorkers(before), taskWorkers(after)) {
		t.Errorf("tasks moved: %v -> %v", taskWorkers(before), taskWorkers(after))
	}
	now := taskGenerations(c, "g")
	for task, g := range gens {
		if maxGen(now[task]) != maxGen(g) {
			t.Errorf("task %d restarted by pause/resume: generation %d -> %d", task, maxGen(g), maxGen(now[task]))
		}
	}
}

func mapsEqualInt(a, b map[int]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// topicCount is the number of records in topic now.
func topicCount(c *sluicetest.Cluster, topic string) int { return len(c.ReadTopic(topic)) }

// probe runs a fresh file source through the cluster and waits for its
// lines to arrive: proof that the agents made progress since the call, so a
// task that should have stopped had time to misbehave.
func probe(t *testing.T, c *sluicetest.Cluster, name string) {
	t.Helper()
	topic := c.Name(name)
	writeLines(t, filepath.Join(c.WorkDir, name+".txt"), numbered(0, 3))
	mustCreate(c, name, fileSourceCfg(name+".txt", topic), "")
	waitRecords(c, topic, 3)
}

// TestLifecycleDataFlow checks what moves while a source is paused, stopped,
// deleted and re-created: nothing while it is not running, then every line
// exactly once from where it left off (its offsets outlive a delete, as in
// Kafka Connect).
func TestLifecycleDataFlow(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	topic := c.Name("flow")
	in := filepath.Join(c.WorkDir, "flow.txt")
	lines := numbered(0, 20)
	writeLines(t, in, lines)
	mustCreate(c, "src", fileSourceCfg("flow.txt", topic), "")
	waitRecords(c, topic, len(lines))

	steps := []struct {
		name       string
		halt, free func(t *testing.T)
	}{
		{"pause", func(t *testing.T) {
			c.Must(202, "PUT", "/connectors/src/pause", nil)
			c.WaitState("src", "PAUSED", 1, "PAUSED")
		}, func(t *testing.T) {
			c.Must(202, "PUT", "/connectors/src/resume", nil)
		}},
		{"stop", func(t *testing.T) {
			c.Must(204, "PUT", "/connectors/src/stop", nil)
			c.WaitState("src", "STOPPED", 0, "")
		}, func(t *testing.T) {
			c.Must(202, "PUT", "/connectors/src/resume", nil)
		}},
		{"delete and re-create", func(t *testing.T) {
			c.Must(204, "DELETE", "/connectors/src", nil)
			sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
				_, ok := c.Status("src")
				return !ok, "status still shown"
			})
		}, func(t *testing.T) {
			mustCreate(c, "src", fileSourceCfg("flow.txt", topic), "")
		}},
	}
	for i, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.halt(t)
			next := numbered(len(lines), 10)
			appendLines(t, in, next)
			lines = append(lines, next...)
			probe(t, c, "probe-"+itoa10(i))
			if n := topicCount(c, topic); n != len(lines)-len(next) {
				t.Fatalf("%d records after %s, want %d: the source ran", n, s.name, len(lines)-len(next))
			}
			s.free(t)
			c.WaitState("src", "RUNNING", 1, "RUNNING")
			recs := waitRecords(c, topic, len(lines))
			got := make([]string, len(recs))
			for i, r := range recs {
				got[i] = string(r.Value)
			}
			if !slices.Equal(got, lines) {
				t.Fatalf("topic holds %d records, want %d lines exactly once", len(got), len(lines))
			}
		})
	}
}

// TestLifecycleFailedTask restarts a failed task (it fails again), then
// fixes its config: the task restarts with the new config and runs.
func TestLifecycleFailedTask(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("failing")
	// A directory cannot be read as a file: the task fails on its first poll.
	mustCreate(c, "f", fileSourceCfg(".", topic), "")
	st := c.WaitState("f", "RUNNING", 1, "FAILED")
	if st.Tasks[0].Trace == "" {
		t.Fatalf("FAILED task without a trace: %+v", st)
	}
	r := c.Do("GET", "/connectors/f/tasks/0/status", nil)
	if !strings.Contains(string(r.Body), `"trace":`) {
		t.Errorf("task status of a failed task lacks its trace: %s", r.Body)
	}
	w, agent := workerID(c), st.Tasks[0].WorkerID
	before := maxGen(taskGenerations(c, "f")[0])

	// Only the failed instance restarts: the task, not the connector. As
	// upstream's restart plan does, the answer keeps the task's last trace.
	trace, _ := json.Marshal(st.Tasks[0].Trace)
	wantJSON(t, c.Do("POST", "/connectors/f/restart?includeTasks=true&onlyFailed=true", nil), 202,
		`{"name":"f","connector":{"state":"RUNNING","version":"0.1.0","worker_id":"`+w+`"},"tasks":[{"id":0,"state":"RESTARTING","version":"0.1.0","worker_id":"`+agent+`","trace":`+string(trace)+`}],"type":"source"}`)
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		g := maxGen(taskGenerations(c, "f")[0])
		return g > before, "task not restarted"
	})
	c.WaitState("f", "RUNNING", 1, "FAILED")

	writeLines(t, filepath.Join(c.WorkDir, "fixed.txt"), []string{"a", "b", "c", "d", "e"})
	c.Must(200, "PATCH", "/connectors/f/config", map[string]any{"file": "fixed.txt"})
	c.WaitState("f", "RUNNING", 1, "RUNNING")
	if recs := waitRecords(c, topic, 5); len(recs) != 5 || string(recs[4].Value) != "e" {
		t.Fatalf("after the fix: %d records", len(recs))
	}
}
