package api

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy says how often and how long a Client sends a call again
// after an answer that says to. Every wait is also bounded by the call's
// context: a deadline ends the retries, and the call returns the context's
// error together with the last answer's.
//
// A call is sent again only after an answer or failure that leaves it
// unapplied, whatever the call:
//
//   - no connection could be made (refused, no route, dial timeout): the
//     coordinator is restarting or gone; the next address, if any, is tried
//     at once;
//   - 503 "Worker is still starting up." (MsgStarting);
//   - 409 "…no known leader URL…" (MsgNoLeader), "…conflicting operation…"
//     (MsgConflicting) or "…stale configuration…" (MsgStale): the write
//     found no leader to apply it, during a failover or a rebalance;
//   - Kafka Connect's 500 "Request cannot be completed because a rebalance
//     is expected" (MsgRebalanceExpected).
//
// Reads, and the writes whose repetition changes nothing more, are also
// sent again when the outcome is unknown: any other 503 (the coordinator
// lost its brokers or its agent), a 502 or 504 (a proxy), or a connection
// that broke after the request went out. Those writes are: PUT and PATCH
// of a config, pause, resume, stop, topics reset, PATCH and DELETE
// …/offsets (the same positions written again; the history records the
// second write too), config validation, the offsets preview, a dry run,
// cordon, uncordon, drain, the bulk pause, resume and stop, and log
// levels. Creates, deletes, restarts, resets by rule, undo, restore,
// move, rebalance, rollouts and maintenance windows are not: a second
// attempt after a first that was applied would fail (409, 404) or act
// twice, so their unknown outcome is returned to the caller to check.
type RetryPolicy struct {
	// MaxAttempts bounds the sends of one call, the first included (0:
	// DefaultRetryPolicy's; 1: never again).
	MaxAttempts int
	// MinBackoff is the first wait, doubled after each attempt up to
	// MaxBackoff (0: DefaultRetryPolicy's). Each wait is jittered down by
	// up to a fifth, so that clients that failed together do not retry
	// together.
	MinBackoff time.Duration
	MaxBackoff time.Duration
}

// DefaultRetryPolicy rides out a coordinator's restart or a leader's
// failover (a few seconds, the leader lease) within about 15 seconds.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 10, MinBackoff: 100 * time.Millisecond, MaxBackoff: 3 * time.Second}

// NoRetry sends every call once.
var NoRetry = RetryPolicy{MaxAttempts: 1}

// withDefaults fills p's zero fields from DefaultRetryPolicy.
func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultRetryPolicy.MaxAttempts
	}
	if p.MinBackoff <= 0 {
		p.MinBackoff = DefaultRetryPolicy.MinBackoff
	}
	if p.MaxBackoff < p.MinBackoff {
		p.MaxBackoff = max(p.MinBackoff, DefaultRetryPolicy.MaxBackoff)
	}
	return p
}

// backoff is the wait after attempt (from 1): the server's Retry-After
// when it gave one (bounded by MaxBackoff), else MinBackoff doubled per
// attempt, jittered.
func (p RetryPolicy) backoff(attempt int, after time.Duration) time.Duration {
	if after > 0 {
		return min(after, p.MaxBackoff)
	}
	d := p.MinBackoff
	for i := 1; i < attempt && d < p.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.MaxBackoff)
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}

// The messages of the answers that leave a request unapplied, which is
// how Kafka Connect's clients tell them from other 409s and 500s (a
// connector that exists already is a 409 too).
const (
	// MsgStarting is the 503 of a coordinator that has not read its topics
	// yet.
	MsgStarting = "Worker is still starting up."
	// MsgNoLeader is the 409 of a write that found no leader to forward to.
	MsgNoLeader = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
	// MsgConflicting is the 409 of a write forwarded to a coordinator that
	// no longer leads.
	MsgConflicting = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
	// MsgStale is the 409 of a write that raced a config change or a
	// change of leadership, and was not applied.
	MsgStale = "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"
	// MsgRebalanceExpected is Kafka Connect's 500 while a worker waits for
	// its group's next assignment.
	MsgRebalanceExpected = "Request cannot be completed because a rebalance is expected"
)

// verdict is what an attempt's failure means for the call.
type verdict int

const (
	// final: return the error.
	final verdict = iota
	// refused: no connection was made; retry, on the next address if any.
	refused
	// unapplied: the server did not apply the request; retry.
	unapplied
	// unknown: it may have been applied; retry only a safe call.
	unknown
)

// classify decides what err, one attempt's failure of cl, means.
func classify(cl call, err error) verdict {
	v := final
	var se *statusError
	var ce *ConnError
	switch {
	case errors.As(err, &ce):
		switch {
		case ce.Refused():
			v = refused
		case ce.sent || !isDNS(ce.Err) && !isTLS(ce.Err):
			v = unknown
		}
	case errors.As(err, &se):
		v = statusVerdict(se.err)
	}
	if v == unknown && !cl.safe {
		return final
	}
	return v
}

// statusVerdict is what a non-2xx answer means for a retry.
func statusVerdict(e *Error) verdict {
	switch int(e.Code) {
	case http.StatusServiceUnavailable:
		if e.Message == MsgStarting {
			return unapplied
		}
		return unknown
	case http.StatusConflict:
		switch e.Message {
		case MsgNoLeader, MsgConflicting, MsgStale:
			return unapplied
		}
	case http.StatusInternalServerError:
		if strings.HasPrefix(e.Message, MsgRebalanceExpected) {
			return unapplied
		}
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		return unknown
	}
	return final
}

// isTLS reports whether err is a failed TLS handshake: a configuration to
// fix, not a moment to wait out.
func isTLS(err error) bool {
	var verify *tls.CertificateVerificationError
	var alert tls.AlertError
	var header tls.RecordHeaderError
	var authority x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return true // the server's TLS alert: it refused the client's certificate, or none
	}
	return errors.As(err, &verify) || errors.As(err, &alert) || errors.As(err, &header) ||
		errors.As(err, &authority) || errors.As(err, &host) || errors.As(err, &invalid)
}

// retryAfter is the wait a 503 or 429 answer's Retry-After header asks for
// (seconds), 0 without one.
func retryAfter(err error) time.Duration {
	var se *statusError
	if !errors.As(err, &se) {
		return 0
	}
	if s, e := strconv.Atoi(se.header.Get("Retry-After")); e == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

// finalError is the error a call returns for one attempt's failure.
func finalError(err error) error {
	var se *statusError
	if errors.As(err, &se) {
		return se.final()
	}
	return err
}
