// Package opsserver is the HTTP listener a process offers its operators
// and orchestrator, beside its real work:
//
//	GET /metrics  the process's Prometheus registry, in the text format
//	GET /healthz  200 while the process is not wedged (a liveness probe):
//	              WithLiveness says when it is
//	GET /readyz   200 when ready, else 503 with a JSON body saying why;
//	              WithChecks lists checks beside it that do not decide it
//	              (control-plane connectivity)
//
// It serves nothing else, so it can be exposed to a Prometheus server or a
// kubelet without exposing anything that changes state. WithProfiling adds
// Go's profiles, for an operator who asks for them:
//
//	GET /debug/pprof/           the index; /debug/pprof/heap, goroutine, allocs, …
//	GET /debug/pprof/profile    a CPU profile (?seconds=N, 30 by default)
//	GET /debug/pprof/trace      an execution trace (?seconds=N)
//	GET, POST /debug/pprof/symbol  symbol lookup for pprof
//
// The command line (/debug/pprof/cmdline) is left out: it may hold a
// credential given as a flag.
package opsserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ReadyFunc reports why the process is not ready, or nil. It must answer
// quickly: a probe waits for it. A nil ReadyFunc is always ready.
type ReadyFunc func(ctx context.Context) error

// Status is the JSON body of /healthz and /readyz.
type Status struct {
	// Status is "ok", "wedged", "ready" or "not ready".
	Status string `json:"status"`
	// Reasons say why the process is not ready (or wedged), one per
	// failed check.
	Reasons []string `json:"reasons,omitempty"`
	// Checks are the WithChecks checks of a /readyz answer, passed or
	// not: they show what readiness deliberately ignores.
	Checks []Check `json:"checks,omitempty"`
}

// Check is one informational check of a /readyz answer.
type Check struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Message says what failed, and since when if known.
	Message string `json:"message,omitempty"`
}

// readyTimeout bounds one readiness check.
const readyTimeout = 2 * time.Second

// Server is a running listener.
type Server struct {
	srv *http.Server
	ln  net.Listener
}

// Option changes what Handler serves.
type Option func(*config)

type config struct {
	mux    *http.ServeMux
	checks func(ctx context.Context) []Check
	live   func() error
}

// WithChecks adds checks to every /readyz answer that do not decide it:
// what an operator wants to see (is the control plane reachable) but that
// must not take the process out of service.
func WithChecks(checks func(ctx context.Context) []Check) Option {
	return func(c *config) { c.checks = checks }
}

// WithLiveness makes /healthz answer 503 while wedged returns an error:
// the process's own loops stopped turning. It must answer at once and must
// not depend on anything outside the process (NATS, Kafka): a liveness
// probe that fails restarts the container, which cures only a wedge.
func WithLiveness(wedged func() error) Option {
	return func(c *config) { c.live = wedged }
}

// WithProfiling serves Go's profiles under /debug/pprof/ beside the three
// paths (see the package comment).
func WithProfiling() Option {
	return func(c *config) {
		mux := c.mux
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/cmdline", http.NotFound)
	}
}

// Handler serves the three paths: g's metrics, liveness and ready's answer,
// and what opts add.
func Handler(g prometheus.Gatherer, ready ReadyFunc, opts ...Option) http.Handler {
	if ready == nil {
		ready = func(context.Context) error { return nil }
	}
	mux := http.NewServeMux()
	c := &config{mux: mux}
	for _, opt := range opts {
		opt(c)
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if c.live != nil {
			if err := c.live(); err != nil {
				writeStatus(w, http.StatusServiceUnavailable, Status{Status: "wedged", Reasons: reasons(err)})
				return
			}
		}
		writeStatus(w, http.StatusOK, Status{Status: "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		var checks []Check
		if c.checks != nil {
			checks = c.checks(ctx)
		}
		if err := ready(ctx); err != nil {
			writeStatus(w, http.StatusServiceUnavailable, Status{Status: "not ready", Reasons: reasons(err), Checks: checks})
			return
		}
		writeStatus(w, http.StatusOK, Status{Status: "ready", Checks: checks})
	})
	return mux
}

// reasons splits a joined error (errors.Join) into one reason per failed
// check.
func reasons(err error) []string {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range joined.Unwrap() {
			out = append(out, reasons(e)...)
		}
		return out
	}
	return []string{err.Error()}
}

func writeStatus(w http.ResponseWriter, code int, s Status) {
	w.Header().Set("Content-Type", "application/json")
	// Probes must never be cached: each answer is the state of now.
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(s)
}

// Start listens on addr (host:port; port 0 picks a free one) and serves
// Handler(g, ready, opts...) until Close.
func Start(addr string, g prometheus.Gatherer, ready ReadyFunc, opts ...Option) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener %s: %w", addr, err)
	}
	s := &Server{ln: ln, srv: &http.Server{Handler: Handler(g, ready, opts...), ReadHeaderTimeout: 5 * time.Second}}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, letting requests under way finish until ctx ends.
func (s *Server) Close(ctx context.Context) error {
	if err := s.srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	return nil
}
