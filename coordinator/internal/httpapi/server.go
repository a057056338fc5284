package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-io/sluice/api"
)

// Limits bound what one request may hold of the REST server before it is
// answered, so that a slow or endless client is cut off rather than waited
// for (docs/rest-api.md, "Limits"). Zero fields take the defaults.
type Limits struct {
	// ReadHeaderTimeout bounds the time a request's line and headers take
	// to arrive; past it the connection is closed.
	ReadHeaderTimeout time.Duration
	// ReadBodyTimeout bounds the time a request's body takes to arrive once
	// its headers are in; past it the request is answered 408 and the
	// connection closed.
	ReadBodyTimeout time.Duration
	// MaxHeaderBytes bounds the size of a request's line and headers; a
	// larger request is answered 431.
	MaxHeaderBytes int
}

// The default limits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadBodyTimeout   = 30 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
)

// idleTimeout closes a kept-alive connection on which no next request
// starts: an idle client holds a connection no longer than this.
const idleTimeout = 2 * time.Minute

func (l Limits) withDefaults() Limits {
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if l.ReadBodyTimeout <= 0 {
		l.ReadBodyTimeout = DefaultReadBodyTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	return l
}

// Server serves a handler over HTTP/1.1 within Limits, and makes sure that
// every answer is the JSON error body, also the ones net/http writes
// itself for requests it cannot read (see jsonErrorsConn).
type Server struct {
	srv    *http.Server
	limits Limits
}

// NewServer makes a Server for h.
func NewServer(h http.Handler, l Limits) *Server {
	l = l.withDefaults()
	return &Server{limits: l, srv: &http.Server{
		Handler:           boundBody(l.ReadBodyTimeout, h),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}}
}

// Serve serves connections accepted from ln until Shutdown or Close; it
// returns http.ErrServerClosed then.
func (s *Server) Serve(ln net.Listener) error {
	return s.srv.Serve(jsonErrorsListener{Listener: ln, limits: s.limits})
}

// Shutdown stops accepting, waits for the requests being served to finish
// (or ctx to end), then closes every connection.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// Close closes the listener and every connection at once.
func (s *Server) Close() error { return s.srv.Close() }

// bodyTimeoutError is a body read cut off by Limits.ReadBodyTimeout.
type bodyTimeoutError struct{ limit time.Duration }

func (e *bodyTimeoutError) Error() string {
	return fmt.Sprintf("Request body not received in time (limit %s)", e.limit)
}

// apiError is the answer to a request whose body was cut off.
func (e *bodyTimeoutError) apiError() *api.Error {
	return &api.Error{Code: api.Code(http.StatusRequestTimeout), Message: e.Error()}
}

// boundBody gives a request's body limit to arrive, counted from when its
// handler starts, that is once its headers are in. A read past it fails
// with *bodyTimeoutError, which the decoders answer with a 408 naming the
// limit; http.Server.ReadTimeout would fail it with a plain timeout, not
// told apart from any other read error. (net/http lifts the deadline itself
// once the body is read, before it reads ahead for the next request, so a
// long-running handler is not cut off.)
func boundBody(limit time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadline := time.Now().Add(limit)
		if r.Body != nil && r.Body != http.NoBody &&
			http.NewResponseController(w).SetReadDeadline(deadline) == nil {
			r.Body = &timedBody{ReadCloser: r.Body, limit: limit, deadline: deadline}
		}
		next.ServeHTTP(w, r)
	})
}

// timedBody is a request body read under boundBody's deadline.
type timedBody struct {
	io.ReadCloser
	limit    time.Duration
	deadline time.Time
	ended    atomic.Bool // the whole body was read
}

// Read implements io.Reader.
func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		b.ended.Store(true)
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = &bodyTimeoutError{limit: b.limit}
	}
	return n, err
}

// bodyTimedOut is the error of r's body when its bound passed before the
// body ended, nil otherwise. It is for a reader of the body that sees only
// the consequence: net/http cancels a request's context when a read on its
// connection fails, so a forward to the leader fails as cancelled.
func bodyTimedOut(r *http.Request) *bodyTimeoutError {
	body := r.Body
	if rb, ok := body.(*replayBody); ok {
		body = rb.orig // read once already for its audit record
	}
	b, ok := body.(*timedBody)
	if !ok || b.ended.Load() || time.Now().Before(b.deadline) {
		return nil
	}
	return &bodyTimeoutError{limit: b.limit}
}

// jsonErrorsListener hands out connections that turn net/http's own
// plain-text answers into JSON error bodies.
type jsonErrorsListener struct {
	net.Listener
	limits Limits
}

// Accept implements net.Listener.
func (l jsonErrorsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonErrorsConn{Conn: c, limits: l.limits}, nil
}

// jsonErrorsConn is a server connection on which net/http's answers to
// requests it could not read are rewritten into the JSON error body (see
// rewriteServerError). To name what was wrong with such a request, it keeps
// the head of the request being read: what arrived since the last answer,
// up to the end of the headers.
type jsonErrorsConn struct {
	net.Conn
	limits Limits

	mu       sync.Mutex
	head     []byte
	headDone bool
}

// Read implements net.Conn.
func (c *jsonErrorsConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.keepHead(p[:n])
		c.mu.Unlock()
	}
	return n, err
}

// keepHead appends to the kept head until the headers end, and never
// beyond what net/http reads for them (MaxHeaderBytes and its 4 KiB slop).
func (c *jsonErrorsConn) keepHead(b []byte) {
	if c.headDone {
		return
	}
	room := c.limits.MaxHeaderBytes + 4096 - len(c.head)
	if room <= 0 {
		c.headDone = true
		return
	}
	c.head = append(c.head, b[:min(len(b), room)]...)
	c.headDone = headersEnd(c.head)
}

// Write implements net.Conn.
func (c *jsonErrorsConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	head := c.head
	c.head, c.headDone = nil, false
	c.mu.Unlock()
	if answer := rewriteServerError(p, head, c.limits); answer != nil {
		if _, err := c.Conn.Write(answer); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// CloseWrite half-closes the connection, as net/http does before it drops
// a connection whose request was too large, so that the client reads the
// answer before the close.
func (c *jsonErrorsConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
