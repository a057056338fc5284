package natsrpc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/wire"
)

// TestCallStatesLevelAndServeValidates: every request states the caller's
// protocol level, which the endpoint reads off what it received, and a
// request of the wire that does not validate is answered with the
// validation's bad request before the endpoint runs.
func TestCallStatesLevelAndServeValidates(t *testing.T) {
	nc, svc := service(t, 0)
	levels := make(chan int, 1)
	ran := make(chan struct{}, 1)
	err := natsrpc.Mount(svc, "revoke", "t.revoke", func(ctx context.Context, req any) (any, error) {
		ran <- struct{}{}
		got, _ := natsrpc.ReceivedFrom(ctx)
		levels <- got.Level()
		return wire.RevokeReply{Stopped: req.(*wire.RevokeRequest).Tasks}, nil
	}, func() any { return &wire.RevokeRequest{} })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var reply wire.RevokeReply
	ok := wire.RevokeRequest{Term: 1, Tasks: []wire.TaskID{{Connector: "c", Task: 0}}}
	if err := natsrpc.Call(ctx, nc, "t.revoke", ok, &reply); err != nil || len(reply.Stopped) != 1 {
		t.Fatalf("valid request: %+v, %v", reply, err)
	}
	<-ran
	if got := <-levels; got != wire.ProtocolLevel {
		t.Errorf("the endpoint read level %d, want %d", got, wire.ProtocolLevel)
	}
	bad := wire.RevokeRequest{Term: 1, Tasks: []wire.TaskID{{Connector: "", Task: 0}}}
	err = natsrpc.Call(ctx, nc, "t.revoke", bad, &reply)
	if !api.IsCode(err, api.CodeBadRequest) || !strings.Contains(err.Error(), "tasks[].connector") {
		t.Errorf("invalid request: %v, want a bad request naming tasks[].connector", err)
	}
	select {
	case <-ran:
		t.Error("the endpoint ran on an invalid request")
	default:
	}
}
