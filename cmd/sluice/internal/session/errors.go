package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/sluice-io/sluice/api"
)

// HTTPError is a request the server refused, in the CLI's words:
// "<status>: <the server's message>".
type HTTPError struct {
	Status  int
	Message string
	err     error
}

// Error is "<status>: <message>".
func (e *HTTPError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

// Unwrap is the client's error (an *api.Error, or an
// *api.UnsupportedError around one).
func (e *HTTPError) Unwrap() error { return e.err }

// ConnectError is a request that reached no server: main exits with code
// 3 for it.
type ConnectError struct {
	URL string
	Err error
}

// Error names the URL, why, and what to do about it.
func (e *ConnectError) Error() string {
	why := e.Err.Error()
	var d *net.DNSError
	switch {
	case errors.Is(e.Err, syscall.ECONNREFUSED):
		why = "connection refused"
	case errors.As(e.Err, &d):
		why = "no such host"
	}
	return fmt.Sprintf("cannot reach Sluice at %s: %s — is it running? (sluice dev / make run)", e.URL, why)
}

// Unwrap is the transport's error.
func (e *ConnectError) Unwrap() error { return e.Err }

// Err is a typed client's error in the CLI's words: a refused request an
// *HTTPError, a server never reached a *ConnectError (exit code 3); any
// other error as it is.
func Err(err error) error {
	var he *HTTPError
	var cle *ConnectError
	if err == nil || errors.As(err, &he) || errors.As(err, &cle) {
		return err // in the CLI's words already
	}
	var ae *api.Error
	if errors.As(err, &ae) {
		return &HTTPError{Status: int(ae.Code), Message: ae.Message, err: err}
	}
	var ce *api.ConnError
	var d *net.DNSError
	if errors.As(err, &ce) && (ce.Refused() || errors.As(ce.Err, &d)) && !errors.Is(err, context.Canceled) {
		return &ConnectError{URL: ce.Address, Err: ce.Err}
	}
	return err
}

// IsStatus reports whether err is a refused request with that status.
func IsStatus(err error, status int) bool {
	var he *HTTPError
	return errors.As(err, &he) && he.Status == status
}
