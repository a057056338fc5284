package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/natsconn"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/wire"
	"github.com/sluice-io/sluice/sluicetest"
)

// TestSecuredNATSClusterWorks runs a cluster on a NATS server configured
// with deploy/nats's permissions, each process with its own role's nkey:
// agents register, a connector is created and runs, its offsets are
// changed through an agent and listed, cluster log levels reach the
// agents — and no process is ever refused an operation by the server.
func TestSecuredNATSClusterWorks(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, SecureNATS: true})
	name := c.Name("gen")
	mustCreate(c, name, generatorCfg(c.Name("gen-data"), "streams", "2", "tasks.max", "2"), "STOPPED")
	seq := func(v int) map[string]any { return map[string]any{"seq": json.Number(fmt.Sprint(v))} }
	stream := func(i int) map[string]any { return map[string]any{"stream": json.Number(fmt.Sprint(i))} }
	patch(t, c, name, body(offs(stream(0), seq(100))...), http.StatusOK, msgAlterFramework)
	wantOffsets(c, name, offs(stream(0), seq(100)))
	c.Must(http.StatusAccepted, "PUT", "/connectors/"+name+"/resume", nil)
	st := c.WaitState(name, "RUNNING", 2, "RUNNING")
	if len(taskWorkers(st)) != 2 {
		t.Fatalf("status %+v", st)
	}
	wantNoBody(t, c.Do(http.MethodPut, "/admin/loggers/io.sluice.agent?scope=cluster", map[string]string{"level": "DEBUG"}), http.StatusNoContent)
	for _, a := range []string{"agent-1", "agent-2"} {
		waitLogged(t, c, "process="+a, `msg="log level set"`)
	}
	c.Must(http.StatusNoContent, "POST", "/connectors/"+name+"/tasks/0/restart", nil)
	c.WaitState(name, "RUNNING", 2, "RUNNING")
	if lines := c.Logged("NATS server refused"); len(lines) > 0 {
		t.Fatalf("the server refused operations of the cluster's own processes:\n%s", strings.Join(lines, "\n"))
	}
}

// refusals collects the permissions violations a NATS connection is told
// of, which the server reports asynchronously.
type refusals struct {
	mu  sync.Mutex
	got []string
}

func (r *refusals) handler(_ *nats.Conn, _ *nats.Subscription, err error) {
	if errors.Is(err, nats.ErrPermissionViolation) {
		r.mu.Lock()
		r.got = append(r.got, err.Error())
		r.mu.Unlock()
	}
}

// wait waits until a violation naming subject was reported.
func (r *refusals) wait(t *testing.T, what, subject string) {
	t.Helper()
	sluicetest.Eventually(t, 5*time.Second, func() (bool, string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, e := range r.got {
			if strings.Contains(e, what) && strings.Contains(e, `"`+subject+`"`) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no %s violation for %q; violations so far: %q", what, subject, r.got)
	})
}

// connectAs connects to the cluster's NATS server with the nkey seed in
// file (none: anonymously), collecting refusals.
func connectAs(t *testing.T, c *sluicetest.Cluster, file, inbox string) (*nats.Conn, *refusals) {
	t.Helper()
	r := &refusals{}
	opts := []nats.Option{nats.ErrorHandler(r.handler), nats.CustomInboxPrefix(inbox)}
	if file != "" {
		o, err := natsconn.Auth{NkeySeedFile: file}.Options()
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, o...)
	}
	nc, err := nats.Connect(c.NATSURL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, r
}

// TestAgentCredentialIsConfined: with deploy/nats's permissions an agent's
// credential cannot command any agent, cannot speak to the leader as
// another agent, cannot read another agent's commands or the coordinators'
// replies, and cannot write the leader lease; its own subjects work. A
// client without credentials, or with an nkey the server does not know,
// cannot connect, and says so quickly.
func TestAgentCredentialIsConfined(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, SecureNATS: true})
	_, lease := c.Coordinator.Leader()
	g := c.GroupID
	nc, r := connectAs(t, c, c.NATSCreds.Agents["agent-1"], wire.AgentInboxPrefix(g, "agent-1"))

	t.Run("commands", func(t *testing.T) {
		for _, agent := range []string{"agent-2", "agent-1"} {
			for _, row := range wire.Subjects {
				if row.Direction != wire.ToAgent || row.Request == nil {
					continue // the leader's own endpoints; presence probes carry nothing
				}
				subject := wire.AgentSubject(row.Template, g, agent)
				if err := nc.Publish(subject, []byte(`{"term":1}`)); err != nil {
					t.Fatal(err)
				}
				r.wait(t, "Publish", subject)
			}
		}
	})
	t.Run("as-another-agent", func(t *testing.T) {
		for _, row := range wire.Subjects {
			if row.Direction != wire.ToLeader {
				continue
			}
			subject := wire.LeaderSubject(row.Template, g, lease.Term, "agent-2")
			if err := nc.Publish(subject, []byte(`{"agent_id":"agent-2"}`)); err != nil {
				t.Fatal(err)
			}
			r.wait(t, "Publish", subject)
		}
		// On its own subject, a request naming another agent is refused
		// by the leader.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := natsrpc.Call(ctx, nc, wire.LeaderSubject(wire.SubjectLeaderHeartbeat, g, lease.Term, "agent-1"),
			wire.HeartbeatRequest{AgentID: "agent-2"}, &wire.HeartbeatReply{})
		if !api.IsCode(err, api.CodeForbidden) {
			t.Fatalf("heartbeat naming agent-2 on agent-1's subject: got %v, want %d", err, api.CodeForbidden)
		}
		// So is a connector event naming agent-2 on agent-1's subject.
		err = natsrpc.Call(ctx, nc, wire.LeaderSubject(wire.SubjectLeaderConnectorEvent, g, lease.Term, "agent-1"),
			wire.PluginConnectorEvent{AgentID: "agent-2", Name: "x", Kind: wire.PluginEventReconfigure}, &wire.StatusReply{})
		if !api.IsCode(err, api.CodeForbidden) {
			t.Fatalf("connector event naming agent-2 on agent-1's subject: got %v, want %d", err, api.CodeForbidden)
		}
		// Its own heartbeat is answered.
		if err := natsrpc.Call(ctx, nc, wire.LeaderSubject(wire.SubjectLeaderHeartbeat, g, lease.Term, "agent-1"),
			wire.HeartbeatRequest{AgentID: "agent-1"}, &wire.HeartbeatReply{}); err != nil {
			t.Fatalf("agent-1's own heartbeat: %v", err)
		}
	})
	t.Run("subscriptions", func(t *testing.T) {
		for _, subject := range []string{
			wire.AgentSubject(wire.SubjectAgentAssign, g, "agent-2"),
			wire.LeaderSubjectAgents(wire.SubjectLeaderRegister, g, lease.Term),
			wire.CoordinatorInboxPrefix(g) + ".>",
			wire.AgentInboxPrefix(g, "agent-2") + ".>",
			"_INBOX.>",
		} {
			if _, err := nc.SubscribeSync(subject); err != nil {
				t.Fatal(err)
			}
			r.wait(t, "Subscription", subject)
		}
	})
	t.Run("lease", func(t *testing.T) {
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		kv, err := js.KeyValue(ctx, wire.LeaderBucket(g))
		if err != nil {
			t.Fatalf("an agent must be able to open the lease bucket: %v", err)
		}
		if _, err := kv.Get(ctx, wire.LeaderKey); err != nil {
			t.Fatalf("an agent must be able to read the lease: %v", err)
		}
		// A refused write is never acknowledged: each waits out a short
		// timeout.
		short := func() context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			t.Cleanup(cancel)
			return ctx
		}
		forged, _ := json.Marshal(wire.LeaderLease{ID: "forged", URL: "http://127.0.0.1:1", Term: 999999})
		if _, err := kv.Put(short(), wire.LeaderKey, forged); err == nil {
			t.Fatal("an agent's credential wrote the leader lease")
		}
		r.wait(t, "Publish", "$KV."+wire.LeaderBucket(g)+"."+wire.LeaderKey)
		if err := kv.Delete(short(), wire.LeaderKey); err == nil {
			t.Fatal("an agent's credential deleted the leader lease")
		}
		if err := js.DeleteKeyValue(short(), wire.LeaderBucket(g)); err == nil {
			t.Fatal("an agent's credential deleted the lease bucket")
		}
		r.wait(t, "Publish", "$JS.API.STREAM.DELETE.KV_"+wire.LeaderBucket(g))
		// Nor can it make a stream of its own that would capture the
		// lease's subjects.
		if _, err := js.CreateStream(short(), jetstream.StreamConfig{Name: "capture", Subjects: []string{"$KV." + wire.LeaderBucket(g) + ".>"}}); err == nil {
			t.Fatal("an agent's credential created a stream")
		}
		r.wait(t, "Publish", "$JS.API.STREAM.CREATE.capture")
		wantLease(t, c, lease)
	})
	t.Run("no-credentials", func(t *testing.T) {
		start := time.Now()
		_, err := natsconn.Connect(c.NATSURL, "anonymous", natsconn.Auth{}, nil)
		if err == nil || !strings.Contains(err.Error(), "refused authentication with no credentials") {
			t.Fatalf("anonymous connect: %v", err)
		}
		stranger, _ := nkeys.CreateUser()
		seed, _ := stranger.Seed()
		file := filepath.Join(t.TempDir(), "stranger.nk")
		if err := os.WriteFile(file, seed, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = natsconn.Connect(c.NATSURL, "stranger", natsconn.Auth{NkeySeedFile: file}, nil)
		if err == nil || !strings.Contains(err.Error(), "refused authentication with the nkey in "+file) {
			t.Fatalf("connect with an unknown nkey: %v", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("refusals took %v", d)
		}
	})
	// The cluster is unharmed.
	name := c.Name("after")
	mustCreate(c, name, generatorCfg(c.Name("after-data")), "")
	c.WaitState(name, "RUNNING", 1, "RUNNING")
}

// wantLease checks that the lease is still the leader's own.
func wantLease(t *testing.T, c *sluicetest.Cluster, want wire.LeaderLease) {
	t.Helper()
	_, got := c.Coordinator.Leader()
	if got.Term != want.Term || got.ID != want.ID || got.Key != want.Key {
		t.Fatalf("lease %+v, want %+v", got, want)
	}
}

// TestForgedCommandsFromAnyClientAreRefused: on a NATS server without
// permissions, where any client may publish anything, an agent still takes
// commands only from its leader. An assign of a connector nobody created —
// a file sink writing where it likes — is refused and no task runs, a
// command of a term no leader holds is refused without making the agent
// refuse its real leader afterwards, and a lease forged by such a client is
// what only a secured server (TestAgentCredentialIsConfined) prevents.
func TestForgedCommandsFromAnyClientAreRefused(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	_, lease := c.Coordinator.Leader()
	nc, err := nats.Connect(c.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	send := func(subject string, req any) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return natsrpc.Call(ctx, nc, subject, req, &wire.AssignReply{})
	}
	assign := wire.AgentSubject(wire.SubjectAgentAssign, c.GroupID, "agent-1")
	out := filepath.Join(c.WorkDir, "exfiltrated.txt")
	task := wire.TaskAssignment{ID: api.TaskID{Connector: "intruder", Task: 0}, Generation: 1,
		ConnectorConfig: fileSinkCfg(out, c.Name("any")), TaskConfig: fileSinkCfg(out, c.Name("any")), ConfigHash: "forged"}

	for _, tc := range []struct {
		name string
		term int64
		code api.Code
	}{
		{"current term", lease.Term, api.CodeForbidden},
		{"term no leader holds", 999999, api.CodeConflict},
	} {
		if err := send(assign, wire.AssignRequest{Term: tc.term, Tasks: []wire.TaskAssignment{task}}); !api.IsCode(err, tc.code) {
			t.Fatalf("%s: forged assign got %v, want %d", tc.name, err, tc.code)
		}
	}
	// A signature of another command does not carry over.
	msg := nats.NewMsg(assign)
	msg.Data, _ = json.Marshal(wire.AssignRequest{Term: lease.Term, Tasks: []wire.TaskAssignment{task}})
	msg.Header.Set(wire.SignatureHeader, "AAAA")
	msg.Header.Set(natsrpc.TimeoutHeader, "5000")
	reply, err := nc.RequestMsg(msg, 5*time.Second)
	if err != nil || reply.Header.Get("Nats-Service-Error-Code") != fmt.Sprint(int(api.CodeForbidden)) {
		t.Fatalf("badly signed assign: %v, %v", reply, err)
	}
	waitLogged(t, c, "process=agent-1", `msg="refused a command"`)

	// The agent still obeys its leader, and the intruder never ran.
	name := c.Name("real")
	mustCreate(c, name, generatorCfg(c.Name("real-data")), "")
	c.WaitState(name, "RUNNING", 1, "RUNNING")
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the forged file sink's file: %v", err)
	}
	if lines := c.Logged("intruder"); len(lines) > 0 {
		for _, l := range lines {
			if !strings.Contains(l, "refused a command") {
				t.Fatalf("the forged task left a trace other than its refusal: %s", l)
			}
		}
	}
}
