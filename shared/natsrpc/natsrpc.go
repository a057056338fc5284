// Package natsrpc carries go-kit endpoints over NATS request/reply. Servers
// mount endpoints on a nats.go micro service (which brings PING/INFO/STATS
// discovery and the standard error headers); clients call them with Call.
// Unlike go-kit's own NATS transport it keeps the caller's deadline and
// carries errors as *api.Error through micro's error headers.
//
// The deadline travels as the time left, not as a point in time: hosts'
// clocks need not agree. The caller converts its deadline into a timeout
// when it sends; the server starts its own timer of that length when the
// request reaches the handler. So the server gives up no earlier than the
// caller, and later by the time the request took to reach the handler — in
// transit, waiting behind earlier requests of the same endpoint (unless it
// is mounted Concurrently), or waiting in a process that was paused. A
// server that must not act on a request its caller already gave up on
// needs a guard of its own (an agent checks that its lease with the leader
// is current).
//
// Every message must fit the NATS server's max_payload, which the
// connection reports: a larger request travels in chunks to an Assembler
// (chunks.go), or is refused before sending with a *api.Error naming the
// limit, never with NATS's bare "maximum payload exceeded".
package natsrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-kit/kit/endpoint"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// TimeoutHeader carries the time the caller still waits for the reply, in
// whole milliseconds, measured when the request is sent.
const TimeoutHeader = "Sluice-Timeout"

// defaultTimeout bounds a handler whose caller sent no timeout, and a call
// whose context has no deadline.
const defaultTimeout = 30 * time.Second

// MountOption configures Mount.
type MountOption func(*mountOptions)

type mountOptions struct {
	slots chan struct{} // nil: one request at a time
}

// Concurrently has the endpoint handle up to n requests at once, each from
// the moment it arrives, instead of one after the other. A request that
// waited behind others would start its caller's timeout only when its turn
// came, and could be acted on after its caller gave up and went elsewhere.
// A request that arrives while n are in hand is refused at once as
// unavailable, so that its caller can try another server rather than wait.
// Endpoints mounted with the same option share its n.
func Concurrently(n int) MountOption {
	slots := make(chan struct{}, max(n, 1))
	return func(o *mountOptions) { o.slots = slots }
}

// Mount adds ep to svc as endpoint name on subject. newRequest returns a
// pointer for the request JSON to decode into; ep receives that pointer, and
// a context that ends when the caller's timeout, counted from the moment
// the handler starts, has passed. Without Concurrently, requests are handled
// one at a time, in the order they arrive.
func Mount(svc micro.Service, name, subject string, ep endpoint.Endpoint, newRequest func() any, opts ...MountOption) error {
	var o mountOptions
	for _, opt := range opts {
		opt(&o)
	}
	h := micro.HandlerFunc(func(req micro.Request) {
		ctx, cancel := requestContext(req.Headers())
		ctx = withReceived(ctx, Received{Subject: req.Subject(), Data: req.Data(), Headers: req.Headers()})
		if o.slots == nil {
			defer cancel()
			serve(ctx, req, name, req.Data(), ep, newRequest)
			return
		}
		select {
		case o.slots <- struct{}{}:
		default:
			cancel()
			respondError(req, api.Errorf(api.CodeUnavailable, "%s on %s is busy: %d requests in hand", name, subject, cap(o.slots)))
			return
		}
		go func() {
			defer func() { <-o.slots }()
			defer cancel()
			serve(ctx, req, name, req.Data(), ep, newRequest)
		}()
	})
	if err := svc.AddEndpoint(name, h, micro.WithEndpointSubject(subject)); err != nil {
		return fmt.Errorf("mount %s on %s: %w", name, subject, err)
	}
	return nil
}

// serve decodes data, the request for endpoint name, runs ep on it and
// answers req with the reply or the error.
func serve(ctx context.Context, req micro.Request, name string, data []byte, ep endpoint.Endpoint, newRequest func() any) {
	in := newRequest()
	if err := json.Unmarshal(data, in); err != nil {
		respondError(req, api.Errorf(api.CodeBadRequest, "decode %s request: %v", name, err))
		return
	}
	// A request of the wire validates itself (wire.Validator) before any
	// endpoint, or guard, sees it.
	if v, ok := in.(wire.Validator); ok {
		if err := v.Validate(); err != nil {
			respondError(req, api.AsError(err))
			return
		}
	}
	out, err := ep(ctx, in)
	if err != nil {
		respondError(req, api.AsError(err))
		return
	}
	if err := req.RespondJSON(out); err != nil {
		respondError(req, api.Errorf(api.CodeInternal, "encode %s reply: %v", name, err))
	}
}

// requestContext bounds a handler by the caller's timeout, timed on this
// process's own (monotonic) clock: no wall clock is read, so neither the
// caller's clock nor this host's can skew it. A request without a valid
// timeout — from a caller of an older protocol, which sent an absolute
// deadline instead — gets the default: a point in time read off another
// host's clock is never trusted.
func requestContext(h micro.Headers) (context.Context, context.CancelFunc) {
	if ms, err := strconv.ParseInt(h.Get(TimeoutHeader), 10, 64); err == nil && ms > 0 {
		return context.WithTimeout(context.Background(), time.Duration(ms)*time.Millisecond)
	}
	return context.WithTimeout(context.Background(), defaultTimeout)
}

func respondError(req micro.Request, e *api.Error) {
	// The error travels in micro's headers; the body repeats it as JSON so a
	// client that reads only bodies still sees it.
	body, _ := json.Marshal(e)
	_ = req.Error(strconv.Itoa(int(e.Code)), e.Message, body)
}

// CallOption configures one Call.
type CallOption func(*callOptions)

type callOptions struct {
	now     func() time.Time
	chunk   string
	sign    Signer
	observe func(subject string, took time.Duration, err error)
}

// Observe has Call report every NATS request it sends — the request, or
// each of its chunks (on the chunk subject) — with the subject it went to,
// the time until its reply and the error it ended with: for metrics.
func Observe(fn func(subject string, took time.Duration, err error)) CallOption {
	return func(o *callOptions) { o.observe = fn }
}

// Signer signs a request: it returns the value of wire.SignatureHeader for
// the request's body sent on subject.
type Signer func(subject string, body []byte) (string, error)

// SignWith has Call sign its request with sign, whole and before it is cut
// into chunks; every message of the request carries the signature, and the
// receiver checks it on the request put together (Received).
func SignWith(sign Signer) CallOption {
	return func(o *callOptions) { o.sign = sign }
}

// WithClock sets the clock the caller's context deadline is read against
// (default time.Now): the deadline minus now is the timeout sent. Tests use
// it to put the caller on a host whose clock is hours off.
func WithClock(now func() time.Time) CallOption {
	return func(o *callOptions) { o.now = now }
}

// ChunkVia lets Call send a request that does not fit one NATS message in
// chunks to subject, the receiver's chunk endpoint (an Assembler's; see
// wire.RequestChunk). Without it such a request is refused before sending.
func ChunkVia(subject string) CallOption {
	return func(o *callOptions) { o.chunk = subject }
}

// headerRoom is what a request's headers take of the NATS max_payload,
// which counts headers and data together: the timeout and signature
// headers and NATS's framing need well under it.
const headerRoom = 256

// Call sends req to subject and decodes the reply into resp. The context's
// deadline bounds the wait, and the time left until it is sent to the
// server (TimeoutHeader); without a deadline the call waits at most 30s. A
// missing responder is a *api.Error with CodeUnavailable, a deadline that
// passes (before sending or while waiting) one with CodeTimeout; a server
// error comes back as the *api.Error the server returned. A request larger
// than the NATS server's max_payload goes in chunks when ChunkVia names a
// chunk endpoint, and is otherwise refused with CodeTooLarge naming the
// limit.
func Call(ctx context.Context, nc *nats.Conn, subject string, req, resp any, opts ...CallOption) error {
	o := callOptions{now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode request for %s: %w", subject, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultTimeout)
		defer cancel()
		o.now = time.Now // the deadline just set is on this clock
	}
	// Every request states the sender's protocol level; its receiver
	// refuses one of another level (wire.ProtocolLevel).
	hdr := nats.Header{}
	hdr.Set(wire.LevelHeader, strconv.Itoa(wire.ProtocolLevel))
	if o.sign != nil {
		sig, err := o.sign(subject, data)
		if err != nil {
			return fmt.Errorf("sign request for %s: %w", subject, err)
		}
		hdr.Set(wire.SignatureHeader, sig)
	}
	var reply *nats.Msg
	if limit := nc.MaxPayload(); limit > 0 && int64(len(data))+headerRoom > limit {
		if o.chunk == "" {
			return api.Errorf(api.CodeTooLarge, "request of %d bytes on %s exceeds the NATS server's max_payload of %d bytes", len(data), subject, limit)
		}
		reply, err = sendChunks(ctx, nc, o, hdr, subject, data, limit)
	} else {
		reply, err = request(ctx, nc, o, hdr, subject, data)
	}
	if err != nil {
		return err
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(reply.Data, resp); err != nil {
		return fmt.Errorf("decode reply from %s: %w", subject, err)
	}
	return nil
}

// request sends data to subject with the time left until ctx's deadline
// and the headers hdr, and returns the reply, or the error it carries.
func request(ctx context.Context, nc *nats.Conn, o callOptions, hdr nats.Header, subject string, data []byte) (reply *nats.Msg, err error) {
	msg := nats.NewMsg(subject)
	msg.Data = data
	for k, v := range hdr {
		msg.Header[k] = v
	}
	dl, _ := ctx.Deadline()
	// Whole milliseconds, rounded down: the server must not outwait the
	// caller by more than the request's transit.
	ms := dl.Sub(o.now()).Milliseconds()
	if ms <= 0 {
		return nil, timedOut(subject)
	}
	msg.Header.Set(TimeoutHeader, strconv.FormatInt(ms, 10))
	if o.observe != nil {
		start := time.Now()
		defer func() { o.observe(subject, time.Since(start), err) }()
	}
	reply, err = nc.RequestMsgWithContext(ctx, msg)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return nil, api.Errorf(api.CodeUnavailable, "no responder on %s", subject)
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
			return nil, timedOut(subject)
		}
		return nil, fmt.Errorf("request on %s: %w", subject, err)
	}
	if code := reply.Header.Get(micro.ErrorCodeHeader); code != "" {
		n, _ := strconv.Atoi(code)
		if n == 0 {
			n = int(api.CodeInternal)
		}
		return nil, &api.Error{Code: api.Code(n), Message: reply.Header.Get(micro.ErrorHeader)}
	}
	return reply, nil
}

func timedOut(subject string) *api.Error {
	return &api.Error{Code: api.CodeTimeout, Message: fmt.Sprintf("request on %s timed out", subject)}
}

// Received is a request as it reached its endpoint: the subject it was
// sent on and its body — for a request that came in chunks, the subject
// its chunks named and the body put together — and the headers of its
// (last) message. An endpoint that checks a signature reads it here.
type Received struct {
	Subject string
	Data    []byte
	Headers micro.Headers
}

type receivedKey struct{}

func withReceived(ctx context.Context, r Received) context.Context {
	return context.WithValue(ctx, receivedKey{}, r)
}

// Level returns the protocol level a request states (wire.LevelHeader);
// 0 when it states none.
func (r Received) Level() int {
	n, err := strconv.Atoi(r.Headers.Get(wire.LevelHeader))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// ReceivedFrom returns the request an endpoint mounted with Mount or an
// Assembler is handling, from the context the endpoint was given.
func ReceivedFrom(ctx context.Context) (Received, bool) {
	r, ok := ctx.Value(receivedKey{}).(Received)
	return r, ok
}
