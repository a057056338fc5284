package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/agents"
)

// fakeRolls serves a roll as a script of snapshots: the create answers
// the first, each GET of the roll the next (the last one from then on).
type fakeRolls struct {
	mu    sync.Mutex
	shots []api.AgentRoll
	next  int
	reqs  []string
	body  api.AgentRollRequest
}

func (f *fakeRolls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, r.Method+" "+r.URL.Path)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/sluice/fleet/rolls":
		_ = json.NewDecoder(r.Body).Decode(&f.body)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(f.shots[0])
		f.next = 1
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/sluice/fleet/rolls/"):
		shot := f.shots[min(f.next, len(f.shots)-1)]
		f.next++
		_ = json.NewEncoder(w).Encode(shot)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/sluice/agents/"):
		_ = json.NewEncoder(w).Encode(api.AgentInfo{ID: strings.TrimPrefix(r.URL.Path, "/sluice/agents/"), State: api.AgentDraining, Registered: true})
	default:
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(api.Error{Code: 404, Message: "no such route"})
	}
}

// shot is a roll of agents a and b (one batch of two) at their steps.
func shot(state string, stepA, stepB string) api.AgentRoll {
	r := api.AgentRoll{ID: "r1", State: state, Request: api.AgentRollRequest{BatchSize: 2}, Progress: api.AgentRollProgress{Total: 2},
		Agents: []api.RolledAgent{{ID: "a", Step: stepA}, {ID: "b", Step: stepB}}}
	for i := range r.Agents {
		if r.Agents[i].Step == api.RollDone {
			r.Progress.Done++
			r.Agents[i].RestartedAt, r.Agents[i].Version, r.Agents[i].Moved = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), "v2", 3
		}
	}
	if state == api.AgentRollDone {
		r.Batch = 1
	}
	return r
}

// TestFleetRollWatches: fleet roll starts the roll in the coordinator and
// follows it: every agent of a batch is reported draining before any is
// restarted, even when one look shows an agent several steps on; the
// restart command runs once per agent the coordinator waits for, here;
// the agents rolled are listed at the end.
func TestFleetRollWatches(t *testing.T) {
	f := &fakeRolls{shots: []api.AgentRoll{
		shot(api.AgentRollRunning, api.RollPending, api.RollPending),
		shot(api.AgentRollRunning, api.RollDraining, api.RollWaitingRestart),
		shot(api.AgentRollRunning, api.RollWaitingRestart, api.RollWaitingRestart),
		shot(api.AgentRollRunning, api.RollUncordoning, api.RollDone),
		shot(api.AgentRollDone, api.RollDone, api.RollDone),
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	dir := t.TempDir()
	stdout, errOut, code := runCLI(t, "fleet", "roll", "--agents", "a,b", "--batch", "2", "--timeout", "1m",
		"--restart-cmd", "echo x >> "+dir+"/{id}", "-o", "json", "--url", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, errOut)
	}
	if strings.Join(f.body.Agents, ",") != "a,b" || f.body.BatchSize != 2 || f.body.Timeout != "1m0s" {
		t.Fatalf("the roll asked for: %+v", f.body)
	}
	for _, order := range [][2]string{{"b: draining\n", "b: restarting"}, {"a: draining\n", "b: restarting"}, {"b: restarting", "waiting for agent b"},
		{"b: restarted", "a: restarted"}, {"a: restarted", "rolled 2 agents\n"}} {
		i, j := strings.Index(errOut, order[0]), strings.Index(errOut, order[1])
		if i < 0 || j < 0 || i > j {
			t.Fatalf("want %q before %q:\n%s", order[0], order[1], errOut)
		}
	}
	for _, id := range []string{"a", "b"} {
		if b, err := os.ReadFile(filepath.Join(dir, id)); err != nil || string(b) != "x\n" {
			t.Fatalf("the restart command of %s ran: %q %v", id, b, err)
		}
	}
	var done []agents.Rolled
	if err := json.Unmarshal([]byte(stdout), &done); err != nil || len(done) != 2 || done[0].Agent != "a" || done[0].Version != "v2" || done[0].Moved != 3 {
		t.Fatalf("stdout: %s (%v)", stdout, err)
	}
}

// TestFleetRollDetachAndFollow: --detach returns once the roll started;
// --follow watches a roll by id, and a roll that failed ends the command
// with why, how the agent was left and which agents were not rolled.
func TestFleetRollDetachAndFollow(t *testing.T) {
	f := &fakeRolls{shots: []api.AgentRoll{shot(api.AgentRollRunning, api.RollPending, api.RollPending)}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	stdout, errOut, code := runCLI(t, "fleet", "roll", "--detach", "--url", srv.URL)
	if code != 0 || !strings.HasPrefix(stdout, "AGENT  BATCH  STEP\na      1      pending\n") || !strings.Contains(errOut, "fleet roll r1 started: 2 agent(s), 2 at a time; the coordinator carries it on (sluice fleet roll --follow r1 watches it)") ||
		strings.Join(f.reqs, ",") != "POST /sluice/fleet/rolls" {
		t.Fatalf("--detach: exit %d\n%s%s; requests %v", code, stdout, errOut, f.reqs)
	}

	failed := shot(api.AgentRollFailed, api.RollDone, api.RollFailed)
	failed.Error = "agent b did not come back within 1m0s: it is not registered (step waiting_restart)"
	f = &fakeRolls{shots: []api.AgentRoll{failed}}
	srv2 := httptest.NewServer(f)
	defer srv2.Close()
	_, errOut, code = runCLI(t, "fleet", "roll", "--follow", "r1", "--url", srv2.URL)
	want := "sluice: fleet roll stopped: agent b did not come back within 1m0s: it is not registered (step waiting_restart); " +
		"it is left draining (sluice agents uncordon b undoes it once it runs); rolled 1 of 2 agents, not rolled: b\n"
	if code != exitRefused || !strings.HasSuffix(errOut, want) || f.reqs[0] != "GET /sluice/fleet/rolls/r1" {
		t.Fatalf("--follow of a failed roll: exit %d\n%s\nrequests %v", code, errOut, f.reqs)
	}
}

// TestFleetRollInterrupt: an interrupt (here sent by the restart command
// to the CLI) ends the watch, not the roll, and says how to follow it
// again; nothing is sent to stop the roll.
func TestFleetRollInterrupt(t *testing.T) {
	f := &fakeRolls{shots: []api.AgentRoll{
		shot(api.AgentRollRunning, api.RollPending, api.RollPending),
		shot(api.AgentRollRunning, api.RollWaitingRestart, api.RollDraining),
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	_, errOut, code := runCLI(t, "fleet", "roll", "--restart-cmd", "kill -INT $PPID; sleep 5", "--url", srv.URL)
	want := "sluice: interrupted: fleet roll r1 goes on in the coordinator (0 of 2 agents rolled); sluice fleet roll --follow r1 watches it again, " +
		"PUT /sluice/fleet/rolls/r1/abort stops it\n"
	if code != exitRefused || !strings.HasSuffix(errOut, want) {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, r := range f.reqs {
		if r != "POST /sluice/fleet/rolls" && r != "GET /sluice/fleet/rolls/r1" {
			t.Fatalf("an interrupted watch sent %s", r)
		}
	}
}
