package integration

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/wire"
	"github.com/sluice-io/sluice/sluicetest"
)

// forgedGenerations are generations no coordinator issued: one far ahead,
// and one that overflows a counter that adds to it.
var forgedGenerations = []int64{999999, math.MaxInt64 - 1}

// TestForgedGenerationsAreIgnored sends forged commands and reports over
// NATS, on the subjects shared/wire builds, as a client able to sign as the
// leader could (an unsigned command is refused outright:
// TestForgedCommandsFromAnyClientAreRefused): assignments, heartbeats and
// status reports carrying generations the coordinator never issued, a revoke voiding every generation, and a
// command of a term no leader holds. Generations the coordinator issues
// afterwards are unaffected (never negative, never beyond what it issued
// itself), a task's status stays its own, the agent keeps obeying its
// leader, and the refusals are logged a bounded number of times rather
// than in a loop.
func TestForgedGenerationsAreIgnored(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, LogLevel: slog.LevelInfo})
	mustCreate(c, "gen", generatorCfg(c.Name("gen")), "")
	mustCreate(c, "victim", generatorCfg(c.Name("victim")), "")
	st := c.WaitState("gen", "RUNNING", 1, "RUNNING")
	c.WaitState("victim", "RUNNING", 1, "RUNNING")
	agentID := st.Tasks[0].WorkerID
	issued := maxGen(taskGenerations(c, "gen")[0])

	nc, err := nats.Connect(c.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_, lease := c.Coordinator.Leader()
	sign := natsrpc.SignWith(c.Coordinator.CommandSigner(lease.Term))
	send := func(subject string, req, reply any) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return natsrpc.Call(ctx, nc, subject, req, reply, sign)
	}
	var connCfg map[string]string
	c.Must(http.StatusOK, "GET", "/connectors/gen/config", nil).JSON(t, &connCfg)
	var tasks []struct {
		Config map[string]string `json:"config"`
	}
	c.Must(http.StatusOK, "GET", "/connectors/gen/tasks", nil).JSON(t, &tasks)
	// A forged heartbeat announces what the real one does, so that only its
	// generation is forged.
	var plugins []api.PluginInfo
	c.Must(http.StatusOK, "GET", "/connector-plugins?connectorsOnly=false", nil).JSON(t, &plugins)
	task := api.TaskID{Connector: "gen", Task: 0}
	assign := func(term, gen int64) wire.AssignRequest {
		return wire.AssignRequest{Term: term, Tasks: []wire.TaskAssignment{{ID: task, Generation: gen,
			ConnectorConfig: connCfg, TaskConfig: tasks[0].Config, ConfigHash: "forged"}}}
	}
	agentSubject := func(tmpl string) string { return wire.AgentSubject(tmpl, c.GroupID, agentID) }
	leaderSubject := func(tmpl string) string { return wire.LeaderSubject(tmpl, c.GroupID, lease.Term, agentID) }

	for _, gen := range forgedGenerations {
		t.Run(fmt.Sprintf("generation-%d", gen), func(t *testing.T) {
			sc := on(c, t)
			// The agent obeys a well-formed assignment of its leader's term
			// (who may send one is not this test's concern) ...
			if err := send(agentSubject(wire.SubjectAgentAssign), assign(lease.Term, gen), &wire.AssignReply{}); err != nil {
				t.Fatalf("forged assign: %v", err)
			}
			// ... and a heartbeat and a status report claim the generation too.
			hb := wire.HeartbeatRequest{AgentID: agentID, Plugins: plugins, Tasks: []wire.RunningTask{{ID: task, Generation: gen, State: api.StateRunning}}}
			if err := send(leaderSubject(wire.SubjectLeaderHeartbeat), hb, &wire.HeartbeatReply{}); err != nil {
				t.Fatalf("forged heartbeat: %v", err)
			}
			report := wire.StatusReport{AgentID: agentID, ID: task, Generation: gen, State: api.StateFailed, Trace: "forged"}
			if err := send(leaderSubject(wire.SubjectLeaderStatus), report, &wire.StatusReply{}); err != nil {
				t.Fatalf("forged status report: %v", err)
			}
			// Over a few heartbeats the agent reports the forged generation;
			// the task's status is never the forged one.
			sluicetest.Consistently(t, 2500*time.Millisecond, func() (bool, string) {
				s, _ := sc.Status("gen")
				ok := len(s.Tasks) == 1 && s.Tasks[0].State == "RUNNING" && s.Tasks[0].WorkerID == agentID
				return ok, fmt.Sprintf("status of gen after the forgery: %+v", s)
			})
			// The next generation the coordinator issues follows its own.
			sc.Must(http.StatusNoContent, "POST", "/connectors/gen/tasks/0/restart", nil)
			var now int64
			sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
				now = maxGen(taskGenerations(sc, "gen")[0])
				return now > issued, fmt.Sprintf("task gen-0 at generation %d, want one above %d after the restart", now, issued)
			})
			if now >= forgedGenerations[0] {
				t.Fatalf("after a forged generation %d the coordinator issued %d (before it: %d)", gen, now, issued)
			}
			issued = now
			sc.WaitState("gen", "RUNNING", 1, "RUNNING")
		})
	}

	t.Run("revoke-voiding-every-generation", func(t *testing.T) {
		sc := on(c, t)
		base := sc.LogLines()
		revoke := wire.RevokeRequest{Term: lease.Term, Tasks: []api.TaskID{{Connector: "victim", Task: 0}}, Generation: math.MaxInt64}
		if err := send(agentSubject(wire.SubjectAgentRevoke), revoke, &wire.RevokeReply{}); err != nil {
			t.Fatalf("forged revoke: %v", err)
		}
		// The agent refuses every assignment of the task for the rest of
		// the term; the coordinator retries at its pace, and both say so a
		// bounded number of times.
		const bound = 60
		sluicetest.Consistently(t, 5*time.Second, func() (bool, string) {
			n := sc.LogLines() - base
			return n <= bound, fmt.Sprintf("%d log lines within 5s of a forged revoke, want at most %d", n, bound)
		})
		gens := taskGenerations(sc, "victim")[0]
		if n := len(gens); n > 20 {
			t.Errorf("task victim-0 ran at %d generations within 5s of the forged revoke, want a bounded few", n)
		}
	})

	t.Run("term-no-leader-holds", func(t *testing.T) {
		sc := on(c, t)
		// A term beyond any lease is refused by the term check; one beyond
		// the largest a lease may name does not even validate.
		ahead := wire.AssignRequest{Term: lease.Term + 1000}
		if err := send(agentSubject(wire.SubjectAgentAssign), ahead, &wire.AssignReply{}); !api.IsCode(err, api.CodeConflict) {
			t.Fatalf("assign of term %d: got %v, want a refusal (%d)", ahead.Term, err, api.CodeConflict)
		}
		forged := wire.AssignRequest{Term: math.MaxInt64}
		if err := send(agentSubject(wire.SubjectAgentAssign), forged, &wire.AssignReply{}); !api.IsCode(err, api.CodeBadRequest) {
			t.Fatalf("assign of term %d: got %v, want a bad request (%d)", forged.Term, err, api.CodeBadRequest)
		}
		// The agent still obeys its leader.
		mustCreate(sc, "after", generatorCfg(c.Name("after")), "")
		sc.WaitState("after", "RUNNING", 1, "RUNNING")
	})

	// No generation in the status topic is negative or one the coordinator
	// did not issue.
	for _, conn := range []string{"gen", "victim", "after"} {
		for n, gens := range taskGenerations(c, conn) {
			for g := range gens {
				if g < 0 || g >= forgedGenerations[0] {
					t.Errorf("status of %s-%d carries generation %d", conn, n, g)
				}
			}
		}
	}
}
