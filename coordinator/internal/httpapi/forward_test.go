package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-io/sluice/shared/wire"
)

// follower is a Leadership that never leads and names url as the leader.
type follower struct{ url string }

func (f follower) Leader() (bool, wire.LeaderLease) {
	return false, wire.LeaderLease{Term: 3, ID: "coordinator-x", URL: f.url}
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
			srv := httptest.NewServer(NewHandler(f.services(), WithLeaderRouting(follower{url: tc.leader})))
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

// TestForwardSlowBody: a write whose body stops arriving at a follower is
// answered 408 by the follower once its body bound passes, not as a failed
// forward.
func TestForwardSlowBody(t *testing.T) {
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer leader.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(NewHandler(newFake().services(), WithLeaderRouting(follower{url: leader.URL})), Limits{ReadBodyTimeout: 200 * time.Millisecond})
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "POST /connectors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if want := errorBody(408, "Request body not received in time (limit 200ms)"); resp.StatusCode != 408 || strings.TrimSpace(string(body)) != want {
		t.Fatalf("got %d %s, want 408 %s", resp.StatusCode, body, want)
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
	srv := httptest.NewServer(NewHandler(f.services(), WithLeaderRouting(stalledFollower{})))
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

// TestFollowerForwardsGauges: a follower forwards GET …/gauges to the
// leader, which alone commands the agents that read them, and answers the
// leader's answer; it serves GET …/lag itself, from Kafka.
func TestFollowerForwardsGauges(t *testing.T) {
	var paths []string
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.EscapedPath())
		_, _ = io.WriteString(w, `{"connector":"a/b","tasks":[{"id":0,"worker_id":"agent-1","gauges":[]}]}`)
	}))
	defer leader.Close()
	f := newFake()
	srv := httptest.NewServer(NewHandler(f.services(), WithLeaderRouting(follower{url: leader.URL})))
	defer srv.Close()
	got := do(t, srv, http.MethodGet, "/sluice/connectors/a%2Fb/gauges", "")
	if got.status != 200 || !strings.Contains(got.body, `"worker_id":"agent-1"`) {
		t.Errorf("GET gauges on a follower: %d %s", got.status, got.body)
	}
	if len(paths) != 1 || paths[0] != "/sluice/connectors/a%2Fb/gauges" {
		t.Errorf("the leader received %q", paths)
	}
	if _, called := f.called("ConnectorGauges"); called {
		t.Error("a follower read the gauges itself")
	}
	do(t, srv, http.MethodGet, "/sluice/connectors/a%2Fb/lag", "")
	if _, called := f.called("ConnectorLag"); !called || len(paths) != 1 {
		t.Errorf("GET lag on a follower: served here %v, forwarded %q", called, paths)
	}
}
