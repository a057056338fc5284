package transport

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/shared/cmdsig"
	"github.com/sluice-io/sluice/shared/embedded/natstest"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/wire"
	"github.com/sluice-io/sluice/sluicetest/wait"
)

const group = "g"

// idleWorker runs nothing.
type idleWorker struct{}

func (idleWorker) Assign(context.Context, int64, []wire.TaskAssignment) []api.TaskID { return nil }
func (idleWorker) Revoke(context.Context, int64, int64, []api.TaskID) ([]api.TaskID, []string) {
	return nil, nil
}
func (idleWorker) Running() []wire.RunningTask { return nil }

func (idleWorker) Gauges(string) []wire.TaskGauges { return nil }
func (idleWorker) Signal(context.Context, api.TaskID, connect.Signal) (string, error) {
	return "", nil
}
func (idleWorker) ObserveIssued(int64, int64) {}

// echoHost answers every operation with its request's name as a task
// config, and fails "boom".
type echoHost struct{}

func (echoHost) HandleConnector(_ context.Context, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error) {
	if req.Name == "boom" {
		return wire.PluginConnectorReply{}, api.Errorf(api.CodeBadRequest, "the plugin refused")
	}
	return wire.PluginConnectorReply{TaskConfigs: []map[string]string{{"name": req.Name, "op": req.Op}}}, nil
}

// leaderFixture is a NATS server with a leader lease of term 1, whose
// key signs the commands sent.
type leaderFixture struct {
	nc  *nats.Conn
	key *cmdsig.Key
}

func newLeaderFixture(t *testing.T) *leaderFixture {
	t.Helper()
	nc := natstest.Connect(t, natstest.Start(t))
	key, err := cmdsig.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: wire.LeaderBucket(group)})
	if err != nil {
		t.Fatal(err)
	}
	lease, _ := json.Marshal(wire.LeaderLease{ID: "c", Term: 1, Key: key.Public()})
	if _, err := kv.Put(t.Context(), wire.LeaderKey, lease); err != nil {
		t.Fatal(err)
	}
	return &leaderFixture{nc: nc, key: key}
}

func (f *leaderFixture) start(t *testing.T, cfg Config) *Transport {
	t.Helper()
	cfg.GroupID, cfg.Version = group, "1.0.0"
	tr := New(cfg, f.nc, idleWorker{}, nil)
	if err := tr.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Stop)
	return tr
}

func (f *leaderFixture) call(agent string, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var reply wire.PluginConnectorReply
	err := natsrpc.Call(ctx, f.nc, wire.AgentSubject(wire.SubjectAgentConnector, group, agent), req, &reply, natsrpc.SignWith(f.key.Sign))
	return reply, err
}

// TestConnectorEndpoint: the leader's signed connector operations reach
// the agent's host, its errors come back as they are, an unsigned one is
// refused, and an agent without a host says so.
func TestConnectorEndpoint(t *testing.T) {
	f := newLeaderFixture(t)
	f.start(t, Config{AgentID: "with", ConnectorHost: echoHost{}})
	f.start(t, Config{AgentID: "without"})

	reply, err := f.call("with", wire.PluginConnectorRequest{Term: 1, Op: wire.PluginOpTaskConfigs, Name: "c"})
	if err != nil || len(reply.TaskConfigs) != 1 || reply.TaskConfigs[0]["op"] != wire.PluginOpTaskConfigs {
		t.Fatalf("task_configs: %+v, %v", reply, err)
	}
	if _, err := f.call("with", wire.PluginConnectorRequest{Term: 1, Op: wire.PluginOpStart, Name: "boom", Config: map[string]string{"connector.class": "io.example.Source"}}); !api.IsCode(err, api.CodeBadRequest) ||
		api.AsError(err).Message != "the plugin refused" {
		t.Fatalf("failing start: %v", err)
	}
	if _, err := f.call("without", wire.PluginConnectorRequest{Term: 1, Op: wire.PluginOpStart, Name: "c", Config: map[string]string{"connector.class": "io.example.Source"}}); api.AsError(err).Message != "agent without has no connector host" {
		t.Fatalf("agent without a host: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = natsrpc.Call(ctx, f.nc, wire.AgentSubject(wire.SubjectAgentConnector, group, "with"), wire.PluginConnectorRequest{Term: 1, Op: wire.PluginOpStart, Name: "c", Config: map[string]string{"connector.class": "io.example.Source"}}, &reply)
	if !api.IsCode(err, api.CodeForbidden) {
		t.Fatalf("unsigned operation: %v, want %d", err, api.CodeForbidden)
	}
}

// TestConnectorEventReachesTheLeader: an event is delivered to the leader
// of the agent's term on the agent's own subject, retried until the leader
// answers.
func TestConnectorEventReachesTheLeader(t *testing.T) {
	f := newLeaderFixture(t)
	var mu sync.Mutex
	var got []wire.PluginConnectorEvent
	calls := 0
	// A leader that registers the agent, and fails the first event.
	for _, tmpl := range []string{wire.SubjectLeaderRegister, wire.SubjectLeaderHeartbeat} {
		if _, err := f.nc.Subscribe(wire.LeaderSubjectAgents(tmpl, group, 1), func(m *nats.Msg) {
			b, _ := json.Marshal(wire.RegisterReply{Level: wire.ProtocolLevel, Term: 1, LeaseMillis: 3000})
			_ = m.Respond(b)
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.nc.Subscribe(wire.LeaderSubject(wire.SubjectLeaderConnectorEvent, group, 1, "a"), func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			h := nats.Header{}
			h.Set("Nats-Service-Error-Code", "503")
			h.Set("Nats-Service-Error", "busy")
			_ = m.RespondMsg(&nats.Msg{Header: h})
			return
		}
		var ev wire.PluginConnectorEvent
		_ = json.Unmarshal(m.Data, &ev)
		got = append(got, ev)
		b, _ := json.Marshal(wire.StatusReply{})
		_ = m.Respond(b)
	}); err != nil {
		t.Fatal(err)
	}
	tr := f.start(t, Config{AgentID: "a", ConnectorHost: echoHost{}})
	wait.Eventually(t, 10*time.Second, func() (bool, string) { return tr.leaderTerm() == 1, "the agent did not register" })
	tr.ConnectorEvent(wire.PluginConnectorEvent{Name: "c", Kind: wire.PluginEventReconfigure})
	wait.Eventually(t, 10*time.Second, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0, "the event did not reach the leader"
	})
	mu.Lock()
	defer mu.Unlock()
	if got[0].AgentID != "a" || got[0].Name != "c" || got[0].Kind != wire.PluginEventReconfigure || calls != 2 {
		t.Fatalf("events %+v after %d calls", got, calls)
	}
}
