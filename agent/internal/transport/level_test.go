package transport

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/wire"
)

// TestCommandOfAnotherLevelIsRefused: a command, signed by the leader of
// its term, whose sender states another protocol level — or none — is
// refused with CodeUpgradeRequired naming both levels, before it reaches
// the endpoint.
func TestCommandOfAnotherLevelIsRefused(t *testing.T) {
	f := newLeaderFixture(t)
	f.start(t, Config{AgentID: "a", ConnectorHost: echoHost{}})
	subject := wire.AgentSubject(wire.SubjectAgentConnector, group, "a")
	body, _ := json.Marshal(wire.PluginConnectorRequest{Term: 1, Op: wire.PluginOpStop, Name: "c"})
	sig, err := f.key.Sign(subject, body)
	if err != nil {
		t.Fatal(err)
	}
	for _, level := range []string{"2", ""} {
		msg := nats.NewMsg(subject)
		msg.Data = body
		msg.Header.Set(wire.SignatureHeader, sig)
		msg.Header.Set(natsrpc.TimeoutHeader, "5000")
		if level != "" {
			msg.Header.Set(wire.LevelHeader, level)
		}
		reply, err := f.nc.RequestMsg(msg, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		code, text := reply.Header.Get(micro.ErrorCodeHeader), reply.Header.Get(micro.ErrorHeader)
		stated := level
		if stated == "" {
			stated = "0"
		}
		if code != strconv.Itoa(int(api.CodeUpgradeRequired)) || !strings.Contains(text, "level "+strconv.Itoa(wire.ProtocolLevel)) ||
			!strings.Contains(text, "of level "+stated) {
			t.Errorf("level %q: answered %s %q, want %d naming levels %d and %s", level, code, text, api.CodeUpgradeRequired, wire.ProtocolLevel, stated)
		}
	}
	// The same command at this build's level is carried out.
	if _, err := f.call("a", wire.PluginConnectorRequest{Term: 1, Op: wire.PluginOpStop, Name: "c"}); err != nil {
		t.Fatalf("a command of this level: %v", err)
	}
}

// TestLeaderOfAnotherLevelIsNotTaken: the agent states its level at
// register, and does not take the registration of a leader whose reply
// states another level; once the leader's level is its own, it registers.
func TestLeaderOfAnotherLevelIsNotTaken(t *testing.T) {
	f := newLeaderFixture(t)
	var leaderLevel, registers, statedOK atomic.Int32
	leaderLevel.Store(wire.ProtocolLevel + 1)
	statedOK.Store(1)
	for _, tmpl := range []string{wire.SubjectLeaderRegister, wire.SubjectLeaderHeartbeat} {
		if _, err := f.nc.Subscribe(wire.LeaderSubjectAgents(tmpl, group, 1), func(m *nats.Msg) {
			registers.Add(1)
			if m.Header.Get(wire.LevelHeader) != strconv.Itoa(wire.ProtocolLevel) {
				statedOK.Store(0)
			}
			b, _ := json.Marshal(wire.RegisterReply{Level: int(leaderLevel.Load()), Term: 1, LeaseMillis: 3000})
			_ = m.Respond(b)
		}); err != nil {
			t.Fatal(err)
		}
	}
	tr := f.start(t, Config{AgentID: "a"})
	waitFor(t, 10*time.Second, "two register attempts", func() bool { return registers.Load() >= 2 })
	if term := tr.leaderTerm(); term != 0 {
		t.Fatalf("the agent took the registration of a leader of level %d (term %d)", leaderLevel.Load(), term)
	}
	if err := tr.Ready(); !api.IsCode(err, api.CodeUnavailable) {
		t.Errorf("an agent refused by level is ready: %v", err)
	}
	leaderLevel.Store(wire.ProtocolLevel)
	waitFor(t, 10*time.Second, "the registration", func() bool { return tr.leaderTerm() == 1 })
	if statedOK.Load() != 1 {
		t.Errorf("a register or heartbeat did not state level %d", wire.ProtocolLevel)
	}
}

// waitFor polls cond until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
