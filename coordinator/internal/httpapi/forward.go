package httpapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// ForwardedHeader marks a request one coordinator forwarded to another.
const ForwardedHeader = "X-Sluice-Forwarded"

// Kafka Connect's 409s for requests that cannot reach the leader.
const (
	msgNoLeader    = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
	msgConflicting = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
)

// Leadership is what request routing needs to know about the cluster.
type Leadership interface {
	// Leader reports whether this coordinator leads, and the current lease.
	Leader() (bool, wire.LeaderLease)
	// CatchUp reads the config and status topics to their end.
	CatchUp(ctx context.Context) error
	// Ready reports whether the coordinator finished starting.
	Ready() bool
}

// msgStarting is GET /health's word while starting, used for every other
// request too until the coordinator can answer.
const msgStarting = "Worker is still starting up."

// answeredAtOnce are the paths served at once, also while starting:
// liveness and readiness probes and metrics scrapes must not wait for a
// slow broker to catch up. /health answers from memory (503 "starting"
// itself while starting), /readyz bounds its own catch-up and says why it
// is not ready, /metrics serves what the process knows, and /openapi.json
// is the same on every coordinator.
var answeredAtOnce = map[string]bool{"/health": true, "/readyz": true, "/metrics": true, openAPIPath: true}

// WithLeaderRouting makes a follower forward every write to the leader, as
// Kafka Connect workers do, and catch up with the leader's writes before it
// answers a read, so a read right after a write through any coordinator
// sees it.
func WithLeaderRouting(l Leadership) Option {
	return func(o *options) { o.leadership = l }
}

// routeToLeader wraps the API: reads are served here after catching up; writes are
// served here by the leader and forwarded by a follower.
//
//	GET /health, /readyz, /metrics, /openapi.json ─► serve, at once
//	GET ─► follower: catch up ─► serve (GET /connector-plugins: as a write)
//	write ─► leader, or a worker-scope log level: serve
//	      ─► follower: forwarded already? 409 conflicting │ no leader? 409 no known leader
//	                   └─► proxy to the leader ─► 2xx: catch up ─► answer
func routeToLeader(l Leadership, sec Security, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if answeredAtOnce[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		if !l.Ready() {
			writeError(w, &api.Error{Code: api.CodeUnavailable, Message: msgStarting})
			return
		}
		leading, lease := l.Leader()
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && !leaderRead(r) {
			if !leading {
				ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
				_ = l.CatchUp(ctx) // a stale answer beats none; reads are eventually consistent
				cancel()
			}
			next.ServeHTTP(w, r)
			return
		}
		if leading || servedHere(r) {
			next.ServeHTTP(w, r)
			return
		}
		if r.Header.Get(ForwardedHeader) != "" {
			writeError(w, &api.Error{Code: api.CodeConflict, Message: msgConflicting})
			return
		}
		target, err := url.Parse(lease.URL)
		if lease.Term == 0 || lease.URL == "" || err != nil {
			writeError(w, &api.Error{Code: api.CodeConflict, Message: msgNoLeader})
			return
		}
		proxy := &httputil.ReverseProxy{
			Transport: sec.ForwardTransport,
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(target)
				pr.Out.Header.Set(ForwardedHeader, "1")
				signForward(sec, r, pr.Out)
			},
			ModifyResponse: func(resp *http.Response) error {
				if resp.StatusCode < 300 {
					ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
					defer cancel()
					_ = l.CatchUp(ctx)
				}
				return nil
			},
			ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
				if timedOut := bodyTimedOut(r); timedOut != nil {
					// The client's body stopped arriving: the leader got
					// a part of it, which it cannot apply.
					writeError(w, timedOut.apiError())
					return
				}
				writeError(w, forwardError(lease.URL, err))
			},
		}
		proxy.ServeHTTP(w, r)
	})
}

// leaderRead reports whether a read is answered from the leader's memory,
// not from the topics every coordinator follows: the plugins list is what
// the live agents registered, and only the leader holds registrations; a
// connector's gauges are read from its tasks' agents, which take commands
// only from the leader; a sink's lag history is what the leader sampled.
func leaderRead(r *http.Request) bool {
	return r.URL.Path == "/connector-plugins" || r.URL.Path == "/sluice/rebalance" ||
		r.URL.Path == "/sluice/agents" || strings.HasPrefix(r.URL.Path, "/sluice/agents/") ||
		strings.HasPrefix(r.URL.Path, "/sluice/connectors/") && (strings.HasSuffix(r.URL.Path, "/gauges") || strings.HasSuffix(r.URL.Path, "/lag/history"))
}

// forwardError is the answer to a write whose forwarding to the leader at
// url failed with err.
//
// When no connection could be made, the leader never saw the request: it
// has just died and its lease has not yet expired, so the answer is Kafka
// Connect's 409 "no known leader", safe to retry. Any later failure (the
// leader died or dropped the connection after the request was sent) leaves
// the outcome unknown: the leader may have applied the write before it
// died. Claiming a failure would be a lie, so the answer is Kafka Connect's
// 500 for a failed forward, saying that the request may have been applied.
func forwardError(url string, err error) *api.Error {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return &api.Error{Code: api.CodeConflict, Message: msgNoLeader}
	}
	var verify *tls.CertificateVerificationError
	if errors.As(err, &verify) {
		// The handshake failed, so the leader never saw the request: a
		// configuration error to fix, not an outcome to check.
		return &api.Error{Code: api.CodeInternal, Message: fmt.Sprintf("Cannot forward the request to the leader at %s: its TLS certificate is not trusted (%v). The request was not applied; give the coordinators the CA of the leader's certificate (--rest-forward-ca).", url, verify.Err)}
	}
	return &api.Error{Code: api.CodeInternal, Message: fmt.Sprintf("%s%v. The leader at %s may have applied the request before it failed: check the result before retrying.", msgForwardIOError, err, url)}
}

// msgForwardIOError begins Kafka Connect's message for a forward that failed
// in transit.
const msgForwardIOError = "IO Error trying to forward REST request: "
