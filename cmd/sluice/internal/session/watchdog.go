package session

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// watchdog is the RoundTripper of the CLI's requests. It gives a read
// (GET) the connect timeout to start answering — a server that accepts
// connections and never answers is then said at once, not after
// --timeout — and any request of a command without a --timeout its
// request bound; and it turns the transport's failures that a user can act
// on into a *ConnectError that says what to do: a connection or an answer
// that did not come in time, HTTPS spoken to a plain HTTP server, a
// certificate not trusted. Such a failure ends the command (abort): a
// retry would only wait as long again.
type watchdog struct {
	next http.RoundTripper
	// base is the REST API's base URL, as errors name it.
	base string
	// connect is --connect-timeout (0: no limit).
	connect time.Duration
	// request bounds the wait for any request's answer (0: no limit; the
	// command's --timeout bounds it then).
	request time.Duration
	// abort ends the command's context with the error as its cause (nil:
	// no context to end).
	abort func(error)
}

// The causes a request is cancelled with when its answer does not come in
// time: a read's first answer within the connect timeout, any answer
// within the request bound.
var (
	errNoFirstAnswer = errors.New("no first answer")
	errNoAnswer      = errors.New("no answer")
)

// RoundTrip sends req, bounding the wait for its answer's headers.
func (w *watchdog) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	var timers []*time.Timer
	if req.Method == http.MethodGet && w.connect > 0 {
		timers = append(timers, time.AfterFunc(w.connect, func() { cancel(errNoFirstAnswer) }))
	}
	if w.request > 0 {
		timers = append(timers, time.AfterFunc(w.request, func() { cancel(errNoAnswer) }))
	}
	resp, err := w.next.RoundTrip(req.WithContext(ctx))
	for _, t := range timers {
		t.Stop()
	}
	var late *ConnectError
	switch context.Cause(ctx) {
	case errNoFirstAnswer:
		late = &ConnectError{URL: w.base, Err: fmt.Errorf("no answer to %s %s within %s (--connect-timeout)", req.Method, req.URL.Path, w.connect),
			Advice: "is it the URL of Sluice's REST API, and is the server up?"}
	case errNoAnswer:
		late = &ConnectError{URL: w.base, Err: fmt.Errorf("no answer to %s %s within %s", req.Method, req.URL.Path, w.request),
			Advice: "is the server up? --timeout gives the command longer"}
	}
	if late != nil {
		cancel(nil)
		if resp != nil {
			_ = resp.Body.Close()
		}
		return nil, w.fail(late)
	}
	if err != nil {
		cancel(nil)
		return nil, w.failure(req, err)
	}
	// The body is read after RoundTrip returns: the context ends with it.
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: func() { cancel(nil) }}
	return resp, nil
}

// failure is err in the words of a *ConnectError when the user can act on
// it, and ends the command then; any other error as it is.
func (w *watchdog) failure(req *http.Request, err error) error {
	if err == nil {
		return nil
	}
	var rec tls.RecordHeaderError
	var unknownCA x509.UnknownAuthorityError
	var host x509.HostnameError
	var op *net.OpError
	var ce *ConnectError
	switch {
	case errors.As(err, &ce):
		return err
	case req.Context().Err() != nil:
		if errors.Is(req.Context().Err(), context.DeadlineExceeded) {
			return &ConnectError{URL: w.base, Err: fmt.Errorf("no answer to %s %s before --timeout ran out: %w", req.Method, req.URL.Path, context.DeadlineExceeded),
				Advice: "is the server up? --timeout gives it longer"}
		}
		return err // the command's context ended: its own cause says why
	case errors.As(err, &rec):
		plain := "http" + strings.TrimPrefix(w.base, "https")
		return w.fail(&ConnectError{URL: w.base, Err: errors.New("it answers plain HTTP, not HTTPS"), Advice: "use --url " + plain})
	case errors.As(err, &unknownCA):
		return w.fail(&ConnectError{URL: w.base, Err: fmt.Errorf("its certificate is not trusted (%w)", err), Advice: "give --ca with the PEM of the CA that signed it"})
	case errors.As(err, &host):
		return w.fail(&ConnectError{URL: w.base, Err: fmt.Errorf("its certificate is not for this host (%w)", err), Advice: "use --url with a name the certificate has"})
	case errors.As(err, &op) && op.Op == "dial" && op.Timeout():
		return w.fail(&ConnectError{URL: w.base, Err: fmt.Errorf("no connection within %s (--connect-timeout)", w.connect)})
	case isTimeout(err) && strings.Contains(err.Error(), "TLS handshake"):
		return w.fail(&ConnectError{URL: w.base, Err: fmt.Errorf("no TLS handshake within %s (--connect-timeout)", w.connect),
			Advice: "is it HTTPS? a plain HTTP server never answers a handshake: use --url http://…"})
	}
	return err
}

// fail ends the command with ce as its cause, and returns it.
func (w *watchdog) fail(ce *ConnectError) error {
	if w.abort != nil {
		w.abort(ce)
	}
	return ce
}

// isTimeout reports whether err says it is a timeout (net.Error).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// cancelOnClose ends a request's context once its answer's body is closed.
type cancelOnClose struct {
	io.ReadCloser
	once   sync.Once
	cancel func()
}

// Close closes the body, then ends the context.
func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(c.cancel)
	return err
}
