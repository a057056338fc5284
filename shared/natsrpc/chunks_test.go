package natsrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/wire"
	"github.com/sluice-io/sluice/sluicetest/wait"
)

// chunkPayload is the max_payload of the server these tests run on.
const chunkPayload = 16 << 10

// serveChunked starts a NATS server with a small max_payload and mounts an
// echo endpoint on t.echo through an Assembler serving t.chunk.
func serveChunked(t *testing.T, opts natsrpc.AssemblerOptions) *nats.Conn {
	t.Helper()
	nc, svc := service(t, chunkPayload)
	a := natsrpc.NewAssembler(opts)
	err := a.Mount(svc, "echo", "t.echo", func(ctx context.Context, req any) (any, error) {
		in := req.(*echo)
		if strings.HasPrefix(in.Text, "fail") {
			return nil, api.Errorf(api.CodeConflict, "refused %d bytes", len(in.Text))
		}
		return echo{Text: "re:" + in.Text[:10]}, nil
	}, func() any { return &echo{} })
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Serve(svc, "chunk", "t.chunk"); err != nil {
		t.Fatal(err)
	}
	return nc
}

// TestChunkedCall sends requests of every size class through a server
// whose max_payload is small: each arrives whole, errors of the endpoint
// come back, and a request without a chunk endpoint is refused naming the
// limit instead of NATS's bare error.
func TestChunkedCall(t *testing.T) {
	nc := serveChunked(t, natsrpc.AssemblerOptions{MaxBytes: 256 << 10})
	for _, tc := range []struct {
		name  string
		text  string
		opts  []natsrpc.CallOption
		code  api.Code
		reply string
		msg   string
	}{
		{"fits one message", "small-text", []natsrpc.CallOption{natsrpc.ChunkVia("t.chunk")}, 0, "re:small-text", ""},
		{"just over the limit", strings.Repeat("a", chunkPayload), []natsrpc.CallOption{natsrpc.ChunkVia("t.chunk")}, 0, "re:aaaaaaaaaa", ""},
		{"many chunks", strings.Repeat("b", 10*chunkPayload+7), []natsrpc.CallOption{natsrpc.ChunkVia("t.chunk")}, 0, "re:bbbbbbbbbb", ""},
		{"endpoint error", "fail" + strings.Repeat("c", 3*chunkPayload), []natsrpc.CallOption{natsrpc.ChunkVia("t.chunk")}, api.CodeConflict, "", "refused 49156 bytes"},
		{"no chunk endpoint named", strings.Repeat("d", 2*chunkPayload), nil, api.CodeTooLarge, "",
			"request of 32779 bytes on t.echo exceeds the NATS server's max_payload of 16384 bytes"},
		{"beyond what the receiver holds", strings.Repeat("e", 300<<10), []natsrpc.CallOption{natsrpc.ChunkVia("t.chunk")}, api.CodeTooLarge, "",
			"chunked request of 307211 bytes on t.echo: this receiver puts together requests of at most 262144 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var out echo
			err := natsrpc.Call(ctx, nc, "t.echo", echo{Text: tc.text}, &out, tc.opts...)
			if tc.code == 0 {
				if err != nil || out.Text != tc.reply {
					t.Fatalf("got %+v, %v; want %q", out, err, tc.reply)
				}
				return
			}
			if e := api.AsError(err); e.Code != tc.code || e.Message != tc.msg {
				t.Fatalf("got %v, want %d %q", err, tc.code, tc.msg)
			}
		})
	}
}

// TestAbandonedChunksAreDropped: a request whose chunks stop arriving is
// never applied, and the room it held is given back once it has waited its
// idle time, so that it cannot crowd out later requests for long. A chunk
// that does not continue its stream drops the stream.
func TestAbandonedChunksAreDropped(t *testing.T) {
	nc := serveChunked(t, natsrpc.AssemblerOptions{MaxBytes: 64 << 10, Idle: 300 * time.Millisecond})
	send := func(c wire.RequestChunk) error {
		data, _ := json.Marshal(c)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		msg := nats.NewMsg("t.chunk")
		msg.Data = data
		msg.Header.Set(natsrpc.TimeoutHeader, "5000")
		reply, err := nc.RequestMsgWithContext(ctx, msg)
		if err != nil {
			return err
		}
		if code := reply.Header.Get(micro.ErrorCodeHeader); code != "" {
			return &api.Error{Message: code + " " + reply.Header.Get(micro.ErrorHeader)}
		}
		return nil
	}
	// The first chunk of a 60 KiB request, then nothing.
	if err := send(wire.RequestChunk{Stream: "abandoned", Subject: "t.echo", Size: 60 << 10, Data: []byte(`{"text":"`)}); err != nil {
		t.Fatal(err)
	}
	whole := echo{Text: strings.Repeat("f", 30<<10)}
	call := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return natsrpc.Call(ctx, nc, "t.echo", whole, &echo{}, natsrpc.ChunkVia("t.chunk"))
	}
	if err := call(); !api.IsCode(err, api.CodeUnavailable) {
		t.Fatalf("while another request holds the room: got %v, want %d", err, api.CodeUnavailable)
	}
	wait.Eventually(t, 5*time.Second, func() (bool, string) {
		err := call()
		return err == nil, fmt.Sprintf("the abandoned request's room was not given back: %v", err)
	})
	// A chunk out of sequence drops its stream: its next chunk is refused.
	if err := send(wire.RequestChunk{Stream: "gap", Subject: "t.echo", Size: 100, Data: []byte("{")}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []wire.RequestChunk{
		{Stream: "gap", Subject: "t.echo", Size: 100, Seq: 2, Data: []byte("x")},
		{Stream: "gap", Subject: "t.echo", Size: 100, Seq: 1, Data: []byte("x")},
		{Stream: "other", Subject: "t.nothing", Size: 100, Data: []byte("x")},
	} {
		if err := send(c); err == nil {
			t.Errorf("chunk %+v was taken, want it refused", c)
		}
	}
}

// TestChunkSubjectBindsRequestSubject: on wildcard subjects, a request put
// together from chunks sent on t.chunk.<x> is handed only to the endpoint
// at t.echo.<x>; one naming t.echo.<y> is refused. The endpoint sees the
// whole request, its subject and the signature of its messages.
func TestChunkSubjectBindsRequestSubject(t *testing.T) {
	nc, svc := service(t, chunkPayload)
	a := natsrpc.NewAssembler(natsrpc.AssemblerOptions{})
	err := a.Mount(svc, "echo", "t.echo.*", func(ctx context.Context, req any) (any, error) {
		got, ok := natsrpc.ReceivedFrom(ctx)
		if !ok {
			return nil, api.Errorf(api.CodeInternal, "no request in the context")
		}
		want, _ := json.Marshal(req)
		if !json.Valid(got.Data) || len(got.Data) != len(want) {
			return nil, api.Errorf(api.CodeInternal, "received %d bytes, want %d", len(got.Data), len(want))
		}
		return echo{Text: got.Subject + " " + got.Headers.Get(wire.SignatureHeader)}, nil
	}, func() any { return &echo{} })
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Serve(svc, "chunk", "t.chunk.*"); err != nil {
		t.Fatal(err)
	}
	sign := natsrpc.SignWith(func(subject string, body []byte) (string, error) { return "sig-" + subject, nil })
	big := echo{Text: strings.Repeat("g", 3*chunkPayload)}
	for _, tc := range []struct {
		name, subject, chunk string
		req                  echo
		want                 string
		code                 api.Code
	}{
		{"one message", "t.echo.x", "t.chunk.x", echo{Text: "small"}, "t.echo.x sig-t.echo.x", 0},
		{"chunks of the same token", "t.echo.x", "t.chunk.x", big, "t.echo.x sig-t.echo.x", 0},
		{"chunks of another token", "t.echo.y", "t.chunk.x", big, "", api.CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var out echo
			err := natsrpc.Call(ctx, nc, tc.subject, tc.req, &out, natsrpc.ChunkVia(tc.chunk), sign)
			if tc.code != 0 {
				if !api.IsCode(err, tc.code) {
					t.Fatalf("got %+v, %v; want code %d", out, err, tc.code)
				}
				return
			}
			if err != nil || out.Text != tc.want {
				t.Fatalf("got %+v, %v; want %q", out, err, tc.want)
			}
		})
	}
}
