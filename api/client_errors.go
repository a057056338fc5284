package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"unicode/utf8"
)

// ConnError is a call that got no answer from the coordinator at Address:
// it could not connect, the TLS handshake failed, or the connection broke
// before the whole answer arrived. Err says why.
type ConnError struct {
	// Address is the base URL of the coordinator that failed.
	Address string
	// Method and Path are the request's.
	Method, Path string
	// Err is the transport's error.
	Err error
	// sent reports that the request went out whole before the failure:
	// the server may have applied it.
	sent bool
}

// Error names the call, the address and why: "sluice: GET /connectors:
// cannot reach http://127.0.0.1:8083: connection refused".
func (e *ConnError) Error() string {
	why := e.Err.Error()
	switch {
	case errors.Is(e.Err, syscall.ECONNREFUSED):
		why = "connection refused"
	case isDNS(e.Err):
		why = "no such host"
	}
	return fmt.Sprintf("sluice: %s %s: cannot reach %s: %s", e.Method, e.Path, e.Address, why)
}

// Unwrap is the transport's error.
func (e *ConnError) Unwrap() error { return e.Err }

// Refused reports whether the connection was never made (refused, no
// route, timed out while dialling, unknown host): the coordinator never
// saw the request.
func (e *ConnError) Refused() bool {
	var d *net.DNSError
	if errors.As(e.Err, &d) && d.IsNotFound {
		return false // a wrong name, not a moment to wait out
	}
	return !e.sent && isDial(e.Err)
}

func isDNS(err error) bool {
	var d *net.DNSError
	return errors.As(err, &d)
}

// isDial reports whether err happened while connecting.
func isDial(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial")
}

// unwrapURLError drops net/http's *url.Error, whose text repeats the
// method and URL a ConnError names already.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// UnsupportedError is the answer of a server that does not serve a call:
// an older Sluice without the endpoint, or Kafka Connect asked for one of
// Sluice's own. It wraps the server's *Error (a 404 "HTTP 404 Not Found"
// or a 405), so errors.As still finds that.
type UnsupportedError struct {
	// Address is the server that answered.
	Address string
	// Method and Path are the call's.
	Method, Path string
	// Err is the server's answer.
	Err *Error
}

// Error says what the server lacks, and its own words.
func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("sluice: the server at %s does not serve %s %s (it answered %q): it is older than this client, or not Sluice",
		e.Address, e.Method, e.Path, e.Err.Message)
}

// Unwrap is the server's *Error.
func (e *UnsupportedError) Unwrap() error { return e.Err }

// IsUnsupported reports whether err is an UnsupportedError: the server
// lacks the call's endpoint or method.
func IsUnsupported(err error) bool {
	var u *UnsupportedError
	return errors.As(err, &u)
}

// unrouted reports whether e is the answer of a server that has no route
// for a request: Jersey's (and Sluice's, which copies it) bare status
// text, which no resource method answers with.
func unrouted(e *Error) bool {
	switch e.Code {
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return e.Message == fmt.Sprintf("HTTP %d %s", int(e.Code), http.StatusText(int(e.Code)))
	}
	return false
}

// maxErrorText bounds the part of a body that is not an error document
// (a proxy's HTML page) that an Error quotes.
const maxErrorText = 512

// errorFromBody is the *Error of a non-2xx answer: its status as Code and
// the body's "message" verbatim; for a body that is no error document, its
// text (cut) or else the status text.
func errorFromBody(status int, body []byte) *Error {
	var eb struct {
		ErrorCode int     `json:"error_code"`
		Message   *string `json:"message"`
	}
	if json.Unmarshal(body, &eb) == nil && (eb.Message != nil || eb.ErrorCode != 0) {
		e := &Error{Code: Code(status)}
		if eb.Message != nil { // null: an exception without a message
			e.Message = *eb.Message
		}
		return e
	}
	text := strings.TrimSpace(string(body))
	if len(text) > maxErrorText {
		cut := maxErrorText
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	if text == "" {
		text = fmt.Sprintf("%d %s", status, http.StatusText(status))
	}
	return &Error{Code: Code(status), Message: text}
}

// statusError is one attempt's non-2xx answer, with what deciding a retry
// needs.
type statusError struct {
	err    *Error
	header http.Header
	body   []byte
	base   string
	cl     call
}

// Error is the server's message.
func (e *statusError) Error() string { return e.err.Error() }

// Unwrap is the server's *Error.
func (e *statusError) Unwrap() error { return e.err }

// final is the error a call returns for this answer: the *Error itself,
// or an UnsupportedError around it.
func (e *statusError) final() error {
	if unrouted(e.err) {
		return &UnsupportedError{Address: e.base, Method: e.cl.method, Path: e.cl.path, Err: e.err}
	}
	return e.err
}
