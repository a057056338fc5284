package httpapi

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
)

// follower is a Leadership that never leads and names url as the leader.
type follower struct{ url string }

func (f follower) Leader() (bool, v1.LeaderLease) {
	return false, v1.LeaderLease{Term: 3, ID: "coordinator-x", URL: f.url}
}
func (follower) CatchUp(context.Context) error { return nil }
func (follower) Ready() bool                   { return true }

// TestForwardFailures: a write forwarded to a leader that cannot be reached
// is a retryable 409 and the service never sees it; one the leader dropped
// after receiving it answers Kafka Connect's forwarding 500, saying the
// request may have been applied.
func TestForwardFailures(t *testing.T) {
	// A port with nothing behind it: the dial is refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + l.Addr().String()
	l.Close()

	// A leader that reads the request, then dies without answering.
	var received atomic.Int32
	dropping := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer dropping.Close()

	for _, tc := range []struct {
		name, leader string
		code         int
		message      string
		reached      int32
	}{
		{"leader unreachable", deadURL, http.StatusConflict, msgNoLeader, 0},
		{"leader dropped the request", dropping.URL, http.StatusInternalServerError, msgForwardIOError, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			received.Store(0)
			f := newFake()
			srv := httptest.NewServer(NewHandler(f, WithLeaderRouting(follower{url: tc.leader})))
			defer srv.Close()
			resp, err := http.Post(srv.URL+"/connectors", "application/json",
				strings.NewReader(`{"name":"a","config":{"connector.class":"FileStreamSource"}}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct {
				Code    int    `json:"error_code"`
				Message string `json:"message"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.code || e.Code != tc.code || !strings.HasPrefix(e.Message, tc.message) {
				t.Errorf("answer %d %+v, want %d with a message starting %q", resp.StatusCode, e, tc.code, tc.message)
			}
			if tc.code == http.StatusInternalServerError && !strings.Contains(e.Message, "may have applied the request") {
				t.Errorf("message %q does not say the outcome is unknown", e.Message)
			}
			if got := received.Load(); got != tc.reached {
				t.Errorf("leader received %d requests, want %d", got, tc.reached)
			}
			if _, called := f.called("CreateConnector"); called {
				t.Error("a follower served a write itself")
			}
		})
	}
}

// stalledFollower is a follower whose catching up with the topics hangs:
// its broker is slow or unreachable.
type stalledFollower struct{ follower }

func (stalledFollower) CatchUp(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestHealthDoesNotWaitForCatchUp: GET /health answers from memory at once,
// also on a follower that cannot catch up with the topics, so a probe with
// Kubernetes' one-second timeout gets its answer.
func TestHealthDoesNotWaitForCatchUp(t *testing.T) {
	f := newFake()
	srv := httptest.NewServer(NewHandler(f, WithLeaderRouting(stalledFollower{})))
	defer srv.Close()
	client := &http.Client{Timeout: time.Second}
	resp, err := client.Get(srv.URL + "/health")
	if err != nil {
		t.Fatalf("GET /health on a follower that cannot catch up: %v", err)
	}
	resp.Body.Close()
	if _, called := f.called("Health"); !called {
		t.Fatalf("GET /health answered %d without asking the service", resp.StatusCode)
	}
}
