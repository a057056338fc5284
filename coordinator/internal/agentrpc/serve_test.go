package agentrpc

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/embedded/natstest"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/wire"
)

// TestServeRefusesAnotherLevel: the leader refuses a register of an agent
// that states another protocol level, or none, with CodeUpgradeRequired
// naming the agent and both levels, and never hands it to the endpoint;
// an agent of its own level registers.
func TestServeRefusesAnotherLevel(t *testing.T) {
	nc := natstest.Connect(t, natstest.Start(t))
	registered := make(chan string, 4)
	svc, err := Serve(nc, "g", 5, Service{Version: "1.0.0"}, Endpoints{
		Register: func(_ context.Context, req any) (any, error) {
			registered <- req.(*wire.RegisterRequest).AgentID
			return wire.RegisterReply{Level: wire.ProtocolLevel, Term: 5, LeaseMillis: 1000}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	subject := wire.LeaderSubject(wire.SubjectLeaderRegister, "g", 5, "old")
	body, _ := json.Marshal(wire.RegisterRequest{AgentID: "old", Tasks: []wire.RunningTask{}})
	for _, level := range []string{"2", ""} {
		msg := nats.NewMsg(subject)
		msg.Data = body
		if level != "" {
			msg.Header.Set(wire.LevelHeader, level)
		}
		reply, err := nc.RequestMsg(msg, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		stated := level
		if stated == "" {
			stated = "0"
		}
		code, text := reply.Header.Get(micro.ErrorCodeHeader), reply.Header.Get(micro.ErrorHeader)
		want := "agent old speaks Sluice protocol level " + stated + "; this coordinator speaks level " + strconv.Itoa(wire.ProtocolLevel)
		if code != strconv.Itoa(int(api.CodeUpgradeRequired)) || !strings.Contains(text, want) {
			t.Errorf("level %q: answered %s %q, want %d with %q", level, code, text, api.CodeUpgradeRequired, want)
		}
	}
	select {
	case id := <-registered:
		t.Fatalf("agent %s of another level reached the register endpoint", id)
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var reply wire.RegisterReply
	if err := natsrpc.Call(ctx, nc, subject, wire.RegisterRequest{AgentID: "old"}, &reply); err != nil || reply.Level != wire.ProtocolLevel {
		t.Fatalf("register at this level: %+v, %v", reply, err)
	}
	if id := <-registered; id != "old" {
		t.Errorf("registered %q", id)
	}
}
