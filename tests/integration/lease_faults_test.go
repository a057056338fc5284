package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/cmdsig"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/wire"
	"github.com/sluice-io/sluice/sluicetest"
)

// An anonymous client of an open NATS (no authorization, as plain sluice
// dev) writes the leader lease with its own key and a huge term, then sends
// agent-1 an assign it signed with that key. With the leader key pinned,
// the agent refuses it, a follower forwards no request (and no credential)
// to the forger's URL, and the cluster goes on creating and running
// connectors.
func TestForgedLeaseOnOpenNATSIsNotObeyed(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	_, followerURL := c.StartExtraCoordinator()
	var forwarded atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forwarded.Add(1)
		w.WriteHeader(http.StatusCreated)
	}))
	defer evil.Close()

	nc, err := nats.Connect(c.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	kv, err := js.KeyValue(ctx, wire.LeaderBucket(c.GroupID))
	if err != nil {
		t.Fatal(err)
	}
	key, err := cmdsig.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	const forgedTerm = 999999
	forged, _ := json.Marshal(wire.LeaderLease{ID: "attacker", URL: evil.URL, Term: forgedTerm, Key: key.Public()})
	out := filepath.Join(c.WorkDir, "planted.txt")
	task := wire.TaskAssignment{ID: api.TaskID{Connector: "planted", Task: 0}, Generation: 1,
		ConnectorConfig: fileSinkCfg(out, c.Name("any")), TaskConfig: fileSinkCfg(out, c.Name("any")), ConfigHash: "forged"}
	body, _ := json.Marshal(wire.AssignRequest{Term: forgedTerm, Tasks: []wire.TaskAssignment{task}})
	assign := wire.AgentSubject(wire.SubjectAgentAssign, c.GroupID, "agent-1")
	sig, _ := key.Sign(assign, body)

	// The attacker keeps rewriting the lease while it sends its command
	// and while a client writes through the follower.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_ = kv.Delete(ctx, wire.LeaderKey)
			_, _ = kv.Create(ctx, wire.LeaderKey, forged)
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	msg := nats.NewMsg(assign)
	msg.Data = body
	msg.Header.Set(wire.SignatureHeader, sig)
	msg.Header.Set(natsrpc.TimeoutHeader, "5000")
	for range 5 {
		reply, err := nc.RequestMsg(msg, 5*time.Second)
		if err != nil {
			t.Fatalf("forged assign: %v", err)
		}
		if reply.Header.Get("Nats-Service-Error-Code") == "" {
			t.Fatalf("agent-1 obeyed a command signed with a forged lease's key: %s", reply.Data)
		}
		sluicetest.Hold(t, 50*time.Millisecond, "the forged lease in place between forged assigns")
	}
	name := c.Name("real")
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		r := sluicetest.DoWith(t, followerURL, http.MethodPost, "/connectors",
			map[string]any{"name": name, "config": generatorCfg(c.Name("real-data"))}, c.Headers...)
		return r.Status == http.StatusCreated, fmt.Sprintf("no write through the follower while the lease was forged: %s", r)
	})
	close(stop)
	<-done
	if n := forwarded.Load(); n != 0 {
		t.Fatalf("a follower forwarded %d request(s) to the forger's URL", n)
	}
	c.WaitState(name, "RUNNING", 1, "RUNNING")
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the planted file sink ran: %v", err)
	}
	for _, l := range c.Logged("planted") {
		if !strings.Contains(l, "refused a command") {
			t.Fatalf("the planted task left a trace other than its refusal: %s", l)
		}
	}
}

// The lease bucket is deleted under a running cluster (or its storage
// lost). The coordinator makes it again at a term above the old one, so the
// agents — which never take an older term — follow it, and a new
// connector's tasks run, without restarting anything.
func TestLeaseBucketDeletedClusterAssignsAgain(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	_, before := c.Coordinator.Leader()
	nc, err := nats.Connect(c.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if err := js.DeleteKeyValue(context.Background(), wire.LeaderBucket(c.GroupID)); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	sluicetest.Eventually(t, 15*time.Second, func() (bool, string) {
		leading, l := c.Coordinator.Leader()
		return leading && l.Term > before.Term, "no leader of a new term after the lease bucket was deleted"
	})
	name := c.Name("after")
	sluicetest.Eventually(t, 15*time.Second-time.Since(deleted), func() (bool, string) {
		r := c.Do(http.MethodPost, "/connectors", map[string]any{"name": name, "config": generatorCfg(c.Name("after-data"))})
		return r.Status == http.StatusCreated, fmt.Sprintf("no write after the lease bucket was deleted: %s", r)
	})
	c.WaitState(name, "RUNNING", 1, "RUNNING")
	leading, after := c.Coordinator.Leader()
	t.Logf("running again %v after the bucket was deleted; term %d → %d", time.Since(deleted).Round(time.Millisecond), before.Term, after.Term)
	if !leading || after.Term <= before.Term {
		t.Fatalf("leads %v at term %d, want a term above %d", leading, after.Term, before.Term)
	}
}

// NATS goes away for longer than the lease and comes back. Writes work again
// at once (not after a lease the coordinator's queued attempts left behind),
// and no coordinator serves its old term's agent endpoints after the
// reconnect: an agent's heartbeat of an old term finds no responder at once
// instead of vanishing into a subscription nobody answers.
func TestWritesResumeAsNATSReturns(t *testing.T) {
	o := sluicetest.StartOutage(t)
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, Backends: &o.Backends, LeaderLease: 6 * time.Second})
	c.StartExtraCoordinator()
	_, before := c.Coordinator.Leader()
	o.StopNATS()
	sluicetest.Hold(t, 8*time.Second, "NATS down for longer than the leader lease (6s)")
	o.StartNATS()
	back := time.Now()
	name := c.Name("after")
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		r := c.Do(http.MethodPost, "/connectors", map[string]any{"name": name, "config": generatorCfg(c.Name("after-data"))})
		return r.Status == http.StatusCreated, fmt.Sprintf("no write after NATS returned: %s", r)
	})
	took := time.Since(back)
	t.Logf("first write %v after NATS returned", took.Round(time.Millisecond))
	// Before: 9 s, a lease that nobody held expiring. The bound leaves
	// room for a slow machine.
	if took > 3*time.Second {
		t.Fatalf("the first write took %v after NATS returned", took)
	}
	c.WaitState(name, "RUNNING", 1, "RUNNING")
	nc, err := nats.Connect(c.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_, now := c.Coordinator.Leader()
	for term := before.Term; term < now.Term; term++ {
		subject := wire.LeaderSubject(wire.SubjectLeaderHeartbeat, c.GroupID, term, "agent-1")
		_, err := nc.Request(subject, []byte("{}"), 2*time.Second)
		if !errors.Is(err, nats.ErrNoResponders) {
			t.Fatalf("term %d's heartbeat endpoint (the leader's is %d) answered %v: someone still serves it", term, now.Term, err)
		}
	}
}
