package natsrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/shared/natsrpc"
)

type echo struct {
	Text string `json:"text"`
}

func TestCallRoundTripErrorsAndDeadline(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(5 * time.Second) {
		t.Fatal("nats not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	svc, err := micro.AddService(nc, micro.Config{Name: "test", Version: "0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	var sawDeadline bool
	err = natsrpc.Mount(svc, "echo", "t.echo", func(ctx context.Context, req any) (any, error) {
		_, sawDeadline = ctx.Deadline()
		in := req.(*echo)
		if in.Text == "fail" {
			return nil, v1.Errorf(v1.CodeConflict, "conflict on %s", in.Text)
		}
		return echo{Text: "re:" + in.Text}, nil
	}, func() any { return &echo{} })
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out echo
	if err := natsrpc.Call(ctx, nc, "t.echo", echo{Text: "hi"}, &out); err != nil || out.Text != "re:hi" {
		t.Fatalf("got %+v %v", out, err)
	}
	if !sawDeadline {
		t.Fatal("handler did not get the caller's deadline")
	}
	err = natsrpc.Call(ctx, nc, "t.echo", echo{Text: "fail"}, &out)
	if e := v1.AsError(err); e.Code != v1.CodeConflict || e.Message != "conflict on fail" {
		t.Fatalf("got %#v", err)
	}
	err = natsrpc.Call(ctx, nc, "t.nobody", echo{}, &out)
	if !v1.IsCode(err, v1.CodeUnavailable) {
		t.Fatalf("no responders: got %v", err)
	}
}
