// Package natsrpc carries go-kit endpoints over NATS request/reply. Servers
// mount endpoints on a nats.go micro service (which brings PING/INFO/STATS
// discovery and the standard error headers); clients call them with Call.
// Unlike go-kit's own NATS transport it keeps the caller's deadline, sent in
// a header, and carries errors as *v1.Error through micro's error headers.
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

	v1 "github.com/sluice-io/sluice/api/v1"
)

// DeadlineHeader carries the caller's deadline as Unix milliseconds.
const DeadlineHeader = "Sluice-Deadline"

// defaultTimeout bounds a handler whose caller sent no deadline.
const defaultTimeout = 30 * time.Second

// Mount adds ep to svc as endpoint name on subject. newRequest returns a
// pointer for the request JSON to decode into; ep receives that pointer.
func Mount(svc micro.Service, name, subject string, ep endpoint.Endpoint, newRequest func() any) error {
	h := micro.HandlerFunc(func(req micro.Request) {
		ctx, cancel := requestContext(req.Headers())
		defer cancel()
		in := newRequest()
		if err := json.Unmarshal(req.Data(), in); err != nil {
			respondError(req, v1.Errorf(v1.CodeBadRequest, "decode %s request: %v", name, err))
			return
		}
		out, err := ep(ctx, in)
		if err != nil {
			respondError(req, v1.AsError(err))
			return
		}
		if err := req.RespondJSON(out); err != nil {
			respondError(req, v1.Errorf(v1.CodeInternal, "encode %s reply: %v", name, err))
		}
	})
	if err := svc.AddEndpoint(name, h, micro.WithEndpointSubject(subject)); err != nil {
		return fmt.Errorf("mount %s on %s: %w", name, subject, err)
	}
	return nil
}

func requestContext(h micro.Headers) (context.Context, context.CancelFunc) {
	if ms, err := strconv.ParseInt(h.Get(DeadlineHeader), 10, 64); err == nil {
		return context.WithDeadline(context.Background(), time.UnixMilli(ms))
	}
	return context.WithTimeout(context.Background(), defaultTimeout)
}

func respondError(req micro.Request, e *v1.Error) {
	// The error travels in micro's headers; the body repeats it as JSON so a
	// client that reads only bodies still sees it.
	body, _ := json.Marshal(e)
	_ = req.Error(strconv.Itoa(int(e.Code)), e.Message, body)
}

// Call sends req to subject and decodes the reply into resp. The context's
// deadline bounds the wait and is passed to the server. A missing responder
// is a *v1.Error with CodeUnavailable; a server error comes back as the
// *v1.Error the server returned.
func Call(ctx context.Context, nc *nats.Conn, subject string, req, resp any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode request for %s: %w", subject, err)
	}
	msg := nats.NewMsg(subject)
	msg.Data = data
	if dl, ok := ctx.Deadline(); ok {
		msg.Header.Set(DeadlineHeader, strconv.FormatInt(dl.UnixMilli(), 10))
	} else {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultTimeout)
		defer cancel()
	}
	reply, err := nc.RequestMsgWithContext(ctx, msg)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return v1.Errorf(v1.CodeUnavailable, "no responder on %s", subject)
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
			return &v1.Error{Code: v1.CodeTimeout, Message: fmt.Sprintf("request on %s timed out", subject)}
		}
		return fmt.Errorf("request on %s: %w", subject, err)
	}
	if code := reply.Header.Get(micro.ErrorCodeHeader); code != "" {
		n, _ := strconv.Atoi(code)
		if n == 0 {
			n = int(v1.CodeInternal)
		}
		return &v1.Error{Code: v1.Code(n), Message: reply.Header.Get(micro.ErrorHeader)}
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(reply.Data, resp); err != nil {
		return fmt.Errorf("decode reply from %s: %w", subject, err)
	}
	return nil
}
