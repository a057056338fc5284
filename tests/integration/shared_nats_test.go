package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/wire"
	"github.com/sluice-io/sluice/sluicetest"
)

// sharedNames are the connectors both clusters create, under the same names.
var sharedNames = []string{"src-1", "src-2", "src-3"}

// TestTwoClustersShareNATS runs two clusters on one NATS server and one
// broker: different group ids (one of them "connect.prod", whose '.' must
// not split a subject token), different internal topics, but the same agent
// ids and the same connector names. Each cluster must run only its own
// tasks — a file source reads its file relative to the agent's working
// directory, which differs per cluster, so a task run by the other
// cluster's agent would produce the other cluster's lines — list only its
// own connectors, and send its offsets operations only to its own agents.
func TestTwoClustersShareNATS(t *testing.T) {
	t.Parallel()
	be := sluicetest.StartBackends(t)
	var hitsA, hitsB atomic.Int32
	count := func(n *atomic.Int32) faults.Injector {
		return faults.Func(func(_ context.Context, at faults.Point, _ any) error {
			if at == faults.AgentOffsets {
				n.Add(1)
			}
			return nil
		})
	}
	a := sluicetest.Start(t, sluicetest.Options{Agents: 2, Backends: &be, GroupID: "connect.prod", Faults: count(&hitsA)})
	b := sluicetest.Start(t, sluicetest.Options{Agents: 2, Backends: &be, Faults: count(&hitsB)})
	if a.GroupID == b.GroupID || a.NATSURL != b.NATSURL || a.Brokers != b.Brokers {
		t.Fatalf("clusters: groups %q and %q on NATS %s / %s", a.GroupID, b.GroupID, a.NATSURL, b.NATSURL)
	}
	for i := range a.Agents {
		if a.Agents[i].ID() != b.Agents[i].ID() {
			t.Fatalf("agent %d: ids %q and %q, want the same", i, a.Agents[i].ID(), b.Agents[i].ID())
		}
	}
	_, leaseA := a.Coordinator.Leader()
	_, leaseB := b.Coordinator.Leader()
	t.Logf("terms: %s %d, %s %d", a.GroupID, leaseA.Term, b.GroupID, leaseB.Term)

	clusters := []struct {
		c    *sluicetest.Cluster
		tag  string
		only string
	}{{a, "a", "only-a"}, {b, "cluster-b", "only-b"}}
	want := map[*sluicetest.Cluster]map[string][]string{}
	for _, cl := range clusters {
		want[cl.c] = map[string][]string{}
		for _, name := range sharedNames {
			ls := make([]string, 30)
			for i := range ls {
				ls[i] = fmt.Sprintf("%s %s line %02d", cl.tag, name, i)
			}
			writeLines(t, filepath.Join(cl.c.WorkDir, name+".txt"), ls)
			want[cl.c][name] = ls
			fileSource(cl.c, name, name+".txt", cl.c.Name(name), "")
		}
		mustCreate(cl.c, cl.only, generatorCfg(cl.c.Name(cl.only)), "STOPPED")
	}

	agentIDs := []string{a.Agents[0].ID(), a.Agents[1].ID()}
	for _, cl := range clusters {
		c := cl.c
		for _, name := range sharedNames {
			st := c.WaitState(name, "RUNNING", 1, "RUNNING")
			if st.Connector.WorkerID != workerID(c) {
				t.Errorf("%s/%s: connector worker_id %s, want its own coordinator %s", c.GroupID, name, st.Connector.WorkerID, workerID(c))
			}
			if !slices.Contains(agentIDs, st.Tasks[0].WorkerID) {
				t.Errorf("%s/%s: task runs on %q, want one of %v", c.GroupID, name, st.Tasks[0].WorkerID, agentIDs)
			}
			waitTopicValues(c, c.Name(name), want[c][name])
			waitOffsets(c, name, []offset{filePos(name+".txt", bytesOf(want[c][name]))})
		}
		var names []string
		c.Must(http.StatusOK, "GET", "/connectors", nil).JSON(t, &names)
		slices.Sort(names)
		if exp := append([]string{cl.only}, sharedNames...); !slices.Equal(names, exp) {
			t.Errorf("%s: GET /connectors = %v, want %v", c.GroupID, names, exp)
		}
	}

	// Offsets operations: each reaches only its own cluster's agents and
	// changes only its own cluster's offsets.
	for _, cl := range clusters {
		cl.c.Must(http.StatusNoContent, "PUT", "/connectors/src-1/stop", nil)
		cl.c.WaitState("src-1", "STOPPED", 0, "")
	}
	// The tags differ in length, so the two files' end positions differ.
	endB := filePos("src-1.txt", bytesOf(want[b]["src-1"]))
	beforeA, beforeB := hitsA.Load(), hitsB.Load()
	patch(t, a, "src-1", body(filePos("src-1.txt", 7)), http.StatusOK, msgAlterDefinite)
	if hitsA.Load() == beforeA || hitsB.Load() != beforeB {
		t.Errorf("PATCH on %s: offsets requests seen by its agents %d→%d, by %s's %d→%d; want only its own",
			a.GroupID, beforeA, hitsA.Load(), b.GroupID, beforeB, hitsB.Load())
	}
	wantOffsets(a, "src-1", []offset{filePos("src-1.txt", 7)})
	wantOffsets(b, "src-1", []offset{endB})

	beforeA, beforeB = hitsA.Load(), hitsB.Load()
	expect(t, b, "DELETE", "/connectors/src-1/offsets", nil, http.StatusOK, msgResetDefinite)
	if hitsB.Load() == beforeB || hitsA.Load() != beforeA {
		t.Errorf("DELETE offsets on %s: offsets requests seen by its agents %d→%d, by %s's %d→%d; want only its own",
			b.GroupID, beforeB, hitsB.Load(), a.GroupID, beforeA, hitsA.Load())
	}
	wantOffsets(b, "src-1", []offset{})
	wantOffsets(a, "src-1", []offset{filePos("src-1.txt", 7)})
	// The other connectors of both kept running where they were.
	for _, cl := range clusters {
		for _, name := range sharedNames[1:] {
			cl.c.WaitState(name, "RUNNING", 1, "RUNNING")
			waitTopicValues(cl.c, cl.c.Name(name), want[cl.c][name])
		}
	}
}

// TestAgentOfAnotherLevelIsRefused: an agent that states another protocol
// level than the coordinator's (wire.ProtocolLevel) registers, or
// heartbeats, on the current term's subjects; the leader answers with
// CodeUpgradeRequired naming the agent and both levels, so the agent's log
// says why it never joins, and it does not join.
func TestAgentOfAnotherLevelIsRefused(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, GroupID: "connect.prod"})
	_, lease := c.Coordinator.Leader()
	nc, err := nats.Connect(c.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	body, _ := json.Marshal(wire.RegisterRequest{AgentID: "old-agent", Tasks: []wire.RunningTask{}})
	other := strconv.Itoa(wire.ProtocolLevel - 1)
	for _, tmpl := range []string{wire.SubjectLeaderRegister, wire.SubjectLeaderHeartbeat} {
		subject := wire.LeaderSubject(tmpl, c.GroupID, lease.Term, "old-agent")
		msg := nats.NewMsg(subject)
		msg.Data = body
		msg.Header.Set(wire.LevelHeader, other)
		reply, err := nc.RequestMsg(msg, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", subject, err)
		}
		code, text := reply.Header.Get(micro.ErrorCodeHeader), reply.Header.Get(micro.ErrorHeader)
		want := fmt.Sprintf("agent old-agent speaks Sluice protocol level %s; this coordinator speaks level %d", other, wire.ProtocolLevel)
		if code != strconv.Itoa(int(api.CodeUpgradeRequired)) || !strings.Contains(text, want) {
			t.Errorf("%s: answered %s %q, want a %d with %q", subject, code, text, api.CodeUpgradeRequired, want)
		}
	}
	// The other agent did not join.
	if n := c.Coordinator.RegisteredAgents(); n != 1 {
		t.Errorf("%d agents registered, want 1", n)
	}
}

// waitTopicValues waits until topic holds exactly want, in order.
func waitTopicValues(c *sluicetest.Cluster, topic string, want []string) {
	c.T.Helper()
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		var got []string
		for _, r := range c.ReadTopic(topic) {
			got = append(got, string(r.Value))
		}
		return slices.Equal(got, want), fmt.Sprintf("topic %s holds %q, want %q", topic, got, want)
	})
}
