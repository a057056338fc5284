package natsrpc_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/natsrpc"
)

type echo struct {
	Text string `json:"text"`
}

// remaining is what a handler saw: the time left until its context's
// deadline, and whether it had one.
type remaining struct {
	left time.Duration
	ok   bool
}

// serve starts an embedded NATS server and mounts an echo endpoint on
// t.echo that reports the time its context had left on seen.
func serve(t *testing.T) (*nats.Conn, chan remaining) {
	t.Helper()
	nc, svc := service(t, 0)
	seen := make(chan remaining, 1)
	err := natsrpc.Mount(svc, "echo", "t.echo", func(ctx context.Context, req any) (any, error) {
		dl, ok := ctx.Deadline()
		seen <- remaining{time.Until(dl), ok}
		in := req.(*echo)
		if in.Text == "fail" {
			return nil, api.Errorf(api.CodeConflict, "conflict on %s", in.Text)
		}
		return echo{Text: "re:" + in.Text}, nil
	}, func() any { return &echo{} })
	if err != nil {
		t.Fatal(err)
	}
	return nc, seen
}

// service starts an embedded NATS server and a micro service on it; a
// maxPayload above 0 replaces NATS's default max_payload.
func service(t *testing.T, maxPayload int32) (*nats.Conn, micro.Service) {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, MaxPayload: maxPayload})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(5 * time.Second) {
		t.Fatal("nats not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	svc, err := micro.AddService(nc, micro.Config{Name: "test", Version: "0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return nc, svc
}

// within fails unless got lies in (want-slack, want].
func within(t *testing.T, what string, got remaining, want time.Duration) {
	t.Helper()
	const slack = time.Second
	if !got.ok || got.left > want || got.left <= want-slack {
		t.Errorf("%s: handler had %v left (deadline %v), want just under %v", what, got.left, got.ok, want)
	}
}

func TestCallRoundTripAndErrors(t *testing.T) {
	nc, seen := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out echo
	if err := natsrpc.Call(ctx, nc, "t.echo", echo{Text: "hi"}, &out); err != nil || out.Text != "re:hi" {
		t.Fatalf("got %+v %v", out, err)
	}
	within(t, "5s call", <-seen, 5*time.Second)
	err := natsrpc.Call(ctx, nc, "t.echo", echo{Text: "fail"}, &out)
	if e := api.AsError(err); e.Code != api.CodeConflict || e.Message != "conflict on fail" {
		t.Fatalf("got %#v", err)
	}
	<-seen
	err = natsrpc.Call(ctx, nc, "t.nobody", echo{}, &out)
	if !api.IsCode(err, api.CodeUnavailable) {
		t.Fatalf("no responders: got %v", err)
	}
	// Without a deadline the call, and so the handler, gets the default.
	if err := natsrpc.Call(context.Background(), nc, "t.echo", echo{Text: "x"}, &out); err != nil {
		t.Fatal(err)
	}
	within(t, "call without a deadline", <-seen, 30*time.Second)
	// A deadline that already passed is not sent at all.
	past, cancelPast := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancelPast()
	if err := natsrpc.Call(past, nc, "t.echo", echo{Text: "late"}, &out); !api.IsCode(err, api.CodeTimeout) {
		t.Fatalf("call past its deadline: got %v, want a timeout", err)
	}
	select {
	case r := <-seen:
		t.Fatalf("a call past its deadline reached the handler (%v left)", r.left)
	default:
	}
}

// skewedCtx is a context as a host whose clock is skew off sees it: its
// deadline reads skew later than here, and it ends when its parent does.
type skewedCtx struct {
	context.Context
	skew time.Duration
}

// Deadline implements context.Context.
func (c skewedCtx) Deadline() (time.Time, bool) {
	dl, ok := c.Context.Deadline()
	return dl.Add(c.skew), ok
}

// TestCallerClockSkew puts the caller on a host whose clock is hours off:
// its deadline, read on that clock, is 3s away, and the handler — on a
// clock of its own — gets 3s, where an absolute deadline would have given it
// hours, or nothing.
func TestCallerClockSkew(t *testing.T) {
	nc, seen := serve(t)
	for _, skew := range []time.Duration{6 * time.Hour, -6 * time.Hour} {
		t.Run(skew.String(), func(t *testing.T) {
			clock := func() time.Time { return time.Now().Add(skew) }
			parent, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			ctx := skewedCtx{parent, skew}
			var out echo
			if err := natsrpc.Call(ctx, nc, "t.echo", echo{Text: "skew"}, &out, natsrpc.WithClock(clock)); err != nil {
				t.Fatal(err)
			}
			within(t, "skewed caller", <-seen, 3*time.Second)
		})
	}
}

// TestServerTrustsOnlyTheTimeout sends raw requests: a valid timeout is
// used, and an absolute deadline (what protocol sluice.v1 sent) or a bad
// timeout is ignored in favour of the default, however far off it is.
func TestServerTrustsOnlyTheTimeout(t *testing.T) {
	nc, seen := serve(t)
	now := time.Now()
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"timeout", map[string]string{natsrpc.TimeoutHeader: "1500"}, 1500 * time.Millisecond},
		{"timeout beats an absolute deadline", map[string]string{natsrpc.TimeoutHeader: "2000",
			"Sluice-Deadline": strconv.FormatInt(now.Add(6*time.Hour).UnixMilli(), 10)}, 2 * time.Second},
		{"absolute deadline hours ago", map[string]string{"Sluice-Deadline": strconv.FormatInt(now.Add(-6*time.Hour).UnixMilli(), 10)}, 30 * time.Second},
		{"absolute deadline hours ahead", map[string]string{"Sluice-Deadline": strconv.FormatInt(now.Add(6*time.Hour).UnixMilli(), 10)}, 30 * time.Second},
		{"negative timeout", map[string]string{natsrpc.TimeoutHeader: "-5"}, 30 * time.Second},
		{"garbage timeout", map[string]string{natsrpc.TimeoutHeader: "soon"}, 30 * time.Second},
		{"no header", nil, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := nats.NewMsg("t.echo")
			msg.Data = []byte(`{"text":"raw"}`)
			for k, v := range tc.headers {
				msg.Header.Set(k, v)
			}
			if _, err := nc.RequestMsg(msg, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			within(t, tc.name, <-seen, tc.want)
		})
	}
}

// TestConcurrentlyHandlesRequestsAsTheyArrive: an endpoint mounted
// Concurrently answers a request while an earlier one is still in hand
// (mounted plainly, it would wait behind it, its timeout started late), and
// refuses at once, as unavailable, one more than its limit.
func TestConcurrentlyHandlesRequestsAsTheyArrive(t *testing.T) {
	nc, svc := service(t, 0)
	held, release := make(chan struct{}, 2), make(chan struct{})
	defer close(release)
	err := natsrpc.Mount(svc, "hold", "t.hold", func(ctx context.Context, req any) (any, error) {
		if req.(*echo).Text == "hold" {
			held <- struct{}{}
			<-release
		}
		return echo{Text: "done"}, nil
	}, func() any { return &echo{} }, natsrpc.Concurrently(2))
	if err != nil {
		t.Fatal(err)
	}
	call := func(text string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return natsrpc.Call(ctx, nc, "t.hold", echo{Text: text}, &echo{})
	}
	go func() { _ = call("hold") }()
	<-held
	if err := call("quick"); err != nil {
		t.Fatalf("a request beside one in hand: %v", err)
	}
	go func() { _ = call("hold") }()
	<-held
	if err := call("quick"); !api.IsCode(err, api.CodeUnavailable) {
		t.Fatalf("a request beyond the limit: got %v, want unavailable at once", err)
	}
}
