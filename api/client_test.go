package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// server is an httptest server whose handler a test sets, counting the
// requests it gets.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// newTestClient is a client of cfg whose waits between attempts take no
// time (recorded in waits, when not nil).
func newTestClient(t *testing.T, cfg Config, waits *[]time.Duration) *Client {
	t.Helper()
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	c.sleep = func(ctx context.Context, d time.Duration) error {
		if waits != nil {
			mu.Lock()
			*waits = append(*waits, d)
			mu.Unlock()
		}
		return ctx.Err()
	}
	return c
}

// writeError answers as the server does: {"error_code","message"}.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error_code": status, "message": msg})
}

// TestErrorDecoding: a non-2xx answer is an *Error whose Code is the
// status and whose Message is the server's, verbatim, whatever the body.
func TestErrorDecoding(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		body   string
		want   Error
	}{
		{"error document", 404, `{"error_code":404,"message":"Connector x not found"}`, Error{404, "Connector x not found"}},
		{"message kept verbatim", 400, `{"error_code":400,"message":"  Invalid <JSON> & more \n"}`, Error{400, "  Invalid <JSON> & more \n"}},
		{"null message", 500, `{"error_code":500,"message":null}`, Error{500, ""}},
		{"unknown fields", 409, `{"error_code":409,"message":"Connector x already exists","extra":[1]}`, Error{409, "Connector x already exists"}},
		{"no JSON", 502, "<html>bad gateway</html>\n", Error{502, "<html>bad gateway</html>"}},
		{"empty body", 401, "", Error{401, "401 Unauthorized"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			})
			c := newTestClient(t, Config{Address: s.URL, Retry: &NoRetry}, nil)
			_, err := c.Connectors().Get(context.Background(), "x")
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v, want an *Error", err, err)
			}
			if *e != tt.want {
				t.Fatalf("error %+v, want %+v", *e, tt.want)
			}
			if !IsCode(err, tt.want.Code) {
				t.Fatalf("IsCode(%d) false", tt.want.Code)
			}
		})
	}
}

// TestErrorIsTheServersOwn: the error a refused call returns is the
// *Error itself, not a wrapper, so a type switch works too.
func TestErrorIsTheServersOwn(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, 409, "Connector a already exists")
	})
	c := newTestClient(t, Config{Address: s.URL}, nil)
	_, err := c.Connectors().Create(context.Background(), CreateConnectorRequest{Name: "a", Config: map[string]string{}})
	if e, ok := err.(*Error); !ok || e.Code != CodeConflict || e.Message != "Connector a already exists" {
		t.Fatalf("error %T %v", err, err)
	}
	if s.hits.Load() != 1 {
		t.Fatalf("%d requests: a 409 that is no failover is not retried", s.hits.Load())
	}
}

// TestUnsupported: a server without the endpoint (Jersey's bare 404 or
// 405) is an UnsupportedError naming the call, around the server's
// *Error; a connector that is not found is not.
func TestUnsupported(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sluice/agents":
			writeError(w, 404, "HTTP 404 Not Found")
		case "/connectors/a/config":
			writeError(w, 405, "HTTP 405 Method Not Allowed")
		default:
			writeError(w, 404, "Connector a not found")
		}
	})
	c := newTestClient(t, Config{Address: s.URL}, nil)
	ctx := context.Background()
	_, err := c.Fleet().Agents(ctx)
	if !IsUnsupported(err) || !IsCode(err, CodeNotFound) {
		t.Fatalf("agents: %T %v, want an UnsupportedError of a 404", err, err)
	}
	want := "sluice: the server at " + s.URL + ` does not serve GET /sluice/agents (it answered "HTTP 404 Not Found"): it is older than this client, or not Sluice`
	if err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
	if _, err := c.Connectors().PatchConfig(ctx, "a", nil); !IsUnsupported(err) || !IsCode(err, CodeMethodNotAllow) {
		t.Fatalf("patch: %v, want an UnsupportedError of a 405", err)
	}
	if _, err := c.Connectors().Get(ctx, "a"); IsUnsupported(err) || !IsCode(err, CodeNotFound) {
		t.Fatalf("get: %v, want a plain 404", err)
	}
}

// TestRetries: what is sent again, and what is not, by the answer and by
// whether the call is safe to repeat.
func TestRetries(t *testing.T) {
	ctx := context.Background()
	createCall := func(c *Client) error {
		_, err := c.Connectors().Create(ctx, CreateConnectorRequest{Name: "a", Config: map[string]string{}})
		return err
	}
	getCall := func(c *Client) error { _, err := c.Connectors().Get(ctx, "a"); return err }
	for _, tt := range []struct {
		name   string
		status int
		msg    string
		send   func(*Client) error
		hits   int64 // with the first two answers failing, the third 2xx
	}{
		{"starting, create", 503, MsgStarting, createCall, 3},
		{"no leader, create", 409, MsgNoLeader, createCall, 3},
		{"conflicting forward, create", 409, MsgConflicting, createCall, 3},
		{"stale, create", 409, MsgStale, createCall, 3},
		{"Kafka Connect rebalance, create", 500, MsgRebalanceExpected, createCall, 3},
		{"broker outage, get", 503, "Request x was interrupted", getCall, 3},
		{"broker outage, create", 503, "Request create_connector was interrupted: …; it may or may not have been applied", createCall, 1},
		{"gateway timeout, get", 504, "upstream timed out", getCall, 3},
		{"gateway timeout, create", 504, "upstream timed out", createCall, 1},
		{"other conflict, create", 409, "Connector a already exists", createCall, 1},
		{"server error, get", 500, "boom", getCall, 1},
		{"bad request, get", 400, "bad", getCall, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int64
			s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) <= 2 {
					writeError(w, tt.status, tt.msg)
					return
				}
				w.WriteHeader(200)
				_, _ = io.WriteString(w, `{"name":"a","config":{},"tasks":[],"type":"source"}`)
			})
			var waits []time.Duration
			c := newTestClient(t, Config{Address: s.URL}, &waits)
			err := tt.send(c)
			if got := s.hits.Load(); got != tt.hits {
				t.Fatalf("%d requests, want %d (error %v)", got, tt.hits, err)
			}
			if (tt.hits == 3) != (err == nil) {
				t.Fatalf("error %v after %d requests", err, tt.hits)
			}
			if len(waits) != int(tt.hits-1) {
				t.Fatalf("waited %d times, want %d", len(waits), tt.hits-1)
			}
		})
	}
}

// TestBackoff: waits double from MinBackoff up to MaxBackoff, jittered
// down by at most a fifth, and stop at MaxAttempts; the call returns the
// last answer.
func TestBackoff(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) { writeError(w, 503, MsgStarting) })
	var waits []time.Duration
	policy := RetryPolicy{MaxAttempts: 6, MinBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond}
	c := newTestClient(t, Config{Address: s.URL, Retry: &policy}, &waits)
	_, err := c.Connectors().List(context.Background())
	if !IsCode(err, CodeUnavailable) || s.hits.Load() != 6 {
		t.Fatalf("error %v after %d requests, want the 503 after 6", err, s.hits.Load())
	}
	nominal := []time.Duration{100, 200, 400, 500, 500}
	if len(waits) != len(nominal) {
		t.Fatalf("waits %v", waits)
	}
	for i, d := range waits {
		want := nominal[i] * time.Millisecond
		if d > want || d < want-want/5 {
			t.Fatalf("wait %d is %v, want %v less at most a fifth (all: %v)", i, d, want, waits)
		}
	}
}

// TestRetryAfter: a Retry-After header sets the wait, bounded by
// MaxBackoff.
func TestRetryAfter(t *testing.T) {
	var n atomic.Int64
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "2")
			writeError(w, 503, MsgStarting)
			return
		}
		_, _ = io.WriteString(w, `["a"]`)
	})
	var waits []time.Duration
	c := newTestClient(t, Config{Address: s.URL, Retry: &RetryPolicy{MaxBackoff: 5 * time.Second}}, &waits)
	if names, err := c.Connectors().List(context.Background()); err != nil || len(names) != 1 {
		t.Fatalf("%v %v", names, err)
	}
	if len(waits) != 1 || waits[0] != 2*time.Second {
		t.Fatalf("waits %v, want [2s]", waits)
	}
}

// TestDeadlineEndsRetries: the context bounds a call and its retries; the
// error carries both the deadline and the last answer.
func TestDeadlineEndsRetries(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) { writeError(w, 409, MsgNoLeader) })
	c, err := NewClient(Config{Address: s.URL, Retry: &RetryPolicy{MaxAttempts: 1000, MinBackoff: 20 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = c.Connectors().Pause(ctx, "a")
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("took %v past a 300ms deadline", el)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !IsCode(err, CodeConflict) {
		t.Fatalf("error %v: want the deadline and the last 409 in its chain", err)
	}
	if s.hits.Load() < 2 {
		t.Fatalf("%d requests: the 409 was not retried", s.hits.Load())
	}
}

// TestDeadlineKeepsTheLastAnswer: a deadline that ends an attempt in
// flight still returns the answer before it, which says why the call did
// not succeed in time.
func TestDeadlineKeepsTheLastAnswer(t *testing.T) {
	var n atomic.Int64
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			writeError(w, 409, MsgNoLeader)
			return
		}
		<-r.Context().Done() // the second attempt hangs until the client gives up
	})
	c := newTestClient(t, Config{Address: s.URL}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := c.Connectors().Pause(ctx, "a")
	if !errors.Is(err, context.DeadlineExceeded) || !IsCode(err, CodeConflict) || n.Load() != 2 {
		t.Fatalf("error %v after %d requests: want the deadline and the 409 before it", err, n.Load())
	}
}

// TestDeadlineEndsASlowCall: a deadline ends a request the server does
// not answer.
func TestDeadlineEndsASlowCall(t *testing.T) {
	release := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c := newTestClient(t, Config{Address: s.URL}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Connectors().List(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the deadline", err)
	}
}

// deadAddress is an address where nothing listens.
func deadAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestConnectionRefused: no coordinator at the address is a ConnError
// naming it, retried (a restart or a failover) for any call, even a
// create: the request never left.
func TestConnectionRefused(t *testing.T) {
	addr := deadAddress(t)
	var waits []time.Duration
	c := newTestClient(t, Config{Address: addr, Retry: &RetryPolicy{MaxAttempts: 3}}, &waits)
	_, err := c.Connectors().Create(context.Background(), CreateConnectorRequest{Name: "a"})
	var ce *ConnError
	if !errors.As(err, &ce) || !ce.Refused() {
		t.Fatalf("error %T %v, want a refused *ConnError", err, err)
	}
	want := "sluice: POST /connectors: cannot reach http://" + addr + ": connection refused"
	if err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
	if len(waits) != 2 {
		t.Fatalf("waited %d times, want 2 (3 attempts)", len(waits))
	}
}

// TestFailover: a refused connection moves the client to the next
// address at once, and it stays there.
func TestFailover(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `["a"]`) })
	dead := "http://" + deadAddress(t)
	var waits []time.Duration
	c := newTestClient(t, Config{Address: dead, Addresses: []string{s.URL}}, &waits)
	for i := 0; i < 2; i++ {
		if _, err := c.Connectors().List(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if s.hits.Load() != 2 || len(waits) != 0 || c.Address() != s.URL {
		t.Fatalf("%d requests, waits %v, address %s", s.hits.Load(), waits, c.Address())
	}
}

// TestBrokenConnection: a connection that breaks after the request went
// out leaves its outcome unknown: a read is sent again, a create is not.
func TestBrokenConnection(t *testing.T) {
	var n atomic.Int64
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		_, _ = io.WriteString(w, `{"name":"a","config":{},"tasks":[],"type":"source"}`)
	})
	c := newTestClient(t, Config{Address: s.URL}, nil)
	if _, err := c.Connectors().Get(context.Background(), "a"); err != nil || s.hits.Load() != 2 {
		t.Fatalf("get: %v after %d requests, want success after 2", err, s.hits.Load())
	}
	n.Store(0)
	s.hits.Store(0)
	_, err := c.Connectors().Create(context.Background(), CreateConnectorRequest{Name: "a"})
	var ce *ConnError
	if !errors.As(err, &ce) || ce.Refused() || s.hits.Load() != 1 {
		t.Fatalf("create: %v after %d requests, want one unrefused ConnError", err, s.hits.Load())
	}
}

// TestRequests: what the client sends: method, escaped path, query,
// headers, body.
func TestRequests(t *testing.T) {
	type seen struct {
		method, rawPath, query, ctype, ua, reason, auth string
		body                                            string
	}
	got := make(chan seen, 1)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get("Content-Type"), r.Header.Get("User-Agent"),
			r.Header.Get(ReasonHeader), r.Header.Get("Authorization"), string(body)}
		w.WriteHeader(http.StatusNoContent)
	})
	c := newTestClient(t, Config{Address: s.URL, UserAgent: "test/1", Token: "tok"}, nil)
	ctx := WithReason(context.Background(), "INC-42")
	_, _ = c.Connectors().Restart(ctx, "a/b c", RestartOptions{IncludeTasks: true, OnlyFailed: true})
	want := seen{"POST", "/connectors/a%2Fb%20c/restart", "includeTasks=true&onlyFailed=true", "", "test/1", "INC-42", "Bearer tok", ""}
	if g := <-got; g != want {
		t.Fatalf("sent %+v, want %+v", g, want)
	}
	_, _ = c.Offsets().Alter(ctx, "a", []ConnectorOffset{{Partition: map[string]any{"filename": "f"}, Offset: map[string]any{"position": 5}}})
	want = seen{"PATCH", "/connectors/a/offsets", "", "application/json", "test/1", "INC-42", "Bearer tok",
		`{"offsets":[{"partition":{"filename":"f"},"offset":{"position":5}}]}`}
	if g := <-got; g != want {
		t.Fatalf("sent %+v, want %+v", g, want)
	}
	_ = c.Admin().SetClusterLoggerLevel(context.Background(), "org.x", "DEBUG")
	want = seen{"PUT", "/admin/loggers/org.x", "scope=cluster", "application/json", "test/1", "", "Bearer tok", `{"level":"DEBUG"}`}
	if g := <-got; g != want {
		t.Fatalf("sent %+v, want %+v", g, want)
	}
}

// TestBasicAuth: Username and Password go as HTTP Basic; giving a token
// too is refused.
func TestBasicAuth(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cret" {
			writeError(w, 401, "Give a user and a password")
			return
		}
		_, _ = io.WriteString(w, `[]`)
	})
	c := newTestClient(t, Config{Address: s.URL, Username: "alice", Password: "s3cret"}, nil)
	if _, err := c.Connectors().List(context.Background()); err != nil {
		t.Fatal(err)
	}
	c = newTestClient(t, Config{Address: s.URL, Username: "alice", Password: "wrong"}, nil)
	if _, err := c.Connectors().List(context.Background()); !IsCode(err, 401) || s.hits.Load() != 2 {
		t.Fatalf("error %v after %d requests, want one 401", err, s.hits.Load())
	}
	if _, err := NewClient(Config{Username: "a", Token: "t"}); err == nil {
		t.Fatal("Username and Token together were taken")
	}
	if _, err := NewClient(Config{Password: "p"}); err == nil {
		t.Fatal("a Password without a Username was taken")
	}
}

// TestAnswers: the bodies and statuses the typed methods read.
func TestAnswers(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "PUT /connectors/new/config":
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"name":"new","config":{"k":"v"},"tasks":[],"type":"sink","future":1}`)
		case "PUT /connectors/old/config":
			_, _ = io.WriteString(w, `{"name":"old","config":{"k":"v"},"tasks":[],"type":"sink"}`)
		case "POST /connectors/a/restart":
			w.WriteHeader(http.StatusAccepted)
			_, _ = io.WriteString(w, `{"name":"a","connector":{"state":"RESTARTING","worker_id":"w"},"tasks":[],"type":"source"}`)
		case "GET /connectors/a/offsets":
			_, _ = io.WriteString(w, `{"offsets":[{"partition":{"p":1},"offset":{"position":18446744073709551616}}]}`)
		case "GET /connectors/a/topics":
			_, _ = io.WriteString(w, `{"a":{"topics":["t1","t2"]}}`)
		case "GET /health":
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"status":"starting","message":"Worker is still starting up.","role":"follower"}`)
		case "GET /metrics":
			_, _ = io.WriteString(w, "# HELP x\nx 1\n")
		}
	})
	c := newTestClient(t, Config{Address: s.URL}, nil)
	ctx := context.Background()
	if info, created, err := c.Connectors().PutConfig(ctx, "new", map[string]string{"k": "v"}); err != nil || !created || info.Type != "sink" {
		t.Fatalf("put new: %+v %v %v", info, created, err)
	}
	if _, created, err := c.Connectors().PutConfig(ctx, "old", nil); err != nil || created {
		t.Fatalf("put old: %v %v", created, err)
	}
	if st, err := c.Connectors().Restart(ctx, "a", RestartOptions{IncludeTasks: true}); err != nil || st == nil || st.Connector.State != StateRestarting {
		t.Fatalf("restart: %+v %v", st, err)
	}
	off, err := c.Offsets().Get(ctx, "a")
	if err != nil || off.Offsets[0].Offset["position"] != json.Number("18446744073709551616") {
		t.Fatalf("offsets: %+v %v: want the number as written", off, err)
	}
	if topics, err := c.Connectors().Topics(ctx, "a"); err != nil || strings.Join(topics, ",") != "t1,t2" {
		t.Fatalf("topics %v %v", topics, err)
	}
	h, err := c.Admin().Health(ctx)
	if !IsCode(err, CodeUnavailable) || h.Status != "starting" || h.Role != "follower" || s.hits.Load() != 6 {
		t.Fatalf("health %+v %v after %d requests: want the document, the 503, and no retry", h, err, s.hits.Load())
	}
	if m, err := c.Admin().Metrics(ctx); err != nil || !strings.Contains(m, "x 1") {
		t.Fatalf("metrics %q %v", m, err)
	}
}

// TestNormalizeAddress: what a user types becomes a base URL.
func TestNormalizeAddress(t *testing.T) {
	for _, tt := range []struct {
		in   string
		tls  bool
		want string
	}{
		{"127.0.0.1:8083", false, "http://127.0.0.1:8083"},
		{"localhost:8083/", false, "http://localhost:8083"},
		{"sluice.example.com:8083", true, "https://sluice.example.com:8083"},
		{"http://h:1", true, "http://h:1"},
		{" https://h:1/base/ ", false, "https://h:1/base"},
	} {
		if got, err := NormalizeAddress(tt.in, tt.tls); err != nil || got != tt.want {
			t.Errorf("NormalizeAddress(%q, %v) = %q, %v; want %q", tt.in, tt.tls, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "ftp://h:1", "http://", "h:1?x=1", "http://h:1/%zz", "http://u:p@h:1"} {
		if got, err := NormalizeAddress(bad, false); err == nil {
			t.Errorf("NormalizeAddress(%q) = %q, want an error", bad, got)
		}
		if _, err := NewClient(Config{Address: bad}); err == nil && bad != "" {
			t.Errorf("NewClient took address %q", bad)
		}
	}
	c, err := NewClient(Config{})
	if err != nil || c.Address() != DefaultAddress {
		t.Fatalf("default address %q %v", c.Address(), err)
	}
}

// TestRequestBodies: optional members are left out as the server expects
// them to be; an empty initial_offsets list is sent, as it means "wipe".
func TestRequestBodies(t *testing.T) {
	bodies := make(chan string, 1)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- string(b)
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{}`)
	})
	c := newTestClient(t, Config{Address: s.URL}, nil)
	ctx := context.Background()
	cfg := map[string]string{"k": "v"}
	for _, tt := range []struct {
		name string
		send func() error
		want string
	}{
		{"create without offsets", func() error {
			_, err := c.Connectors().Create(ctx, CreateConnectorRequest{Name: "a", Config: cfg})
			return err
		}, `{"name":"a","config":{"k":"v"}}`},
		{"create wiping offsets", func() error {
			_, err := c.Connectors().Create(ctx, CreateConnectorRequest{Name: "a", Config: cfg, InitialState: StatePaused, InitialOffsets: []ConnectorOffset{}})
			return err
		}, `{"name":"a","config":{"k":"v"},"initial_state":"PAUSED","initial_offsets":[]}`},
		{"rollout with the defaults", func() error {
			_, err := c.Fleet().CreateRollout(ctx, RolloutRequest{Selector: Selector{Match: "a*"}, Patch: map[string]*string{"x": nil}})
			return err
		}, `{"match":"a*","patch":{"x":null}}`},
		{"rollout in full", func() error {
			_, err := c.Fleet().CreateRollout(ctx, RolloutRequest{Selector: Selector{Names: []string{"a"}}, Patch: map[string]*string{},
				Batches: []json.RawMessage{json.RawMessage(`"25%"`)}, Health: RolloutHealth{MaxFailedTasks: 1}, OnFailure: "rollback"})
			return err
		}, `{"names":["a"],"patch":{},"batches":["25%"],"health":{"running_for":"","max_failed_tasks":1},"on_failure":"rollback"}`},
		{"bulk", func() error {
			_, err := c.Fleet().StopConnectors(ctx, Selector{Names: []string{"a", "b"}})
			return err
		}, `{"names":["a","b"]}`},
	} {
		if err := tt.send(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := <-bodies; got != tt.want {
			t.Errorf("%s: sent %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestRaw: a request as the caller shapes it, its answer as the server
// sent it, with the typed calls' errors and retries.
func TestRaw(t *testing.T) {
	var n atomic.Int64
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.URL.Path == "/flaky" && n.Add(1) == 1:
			writeError(w, 503, "Request x was interrupted")
		case r.URL.Path == "/gone":
			writeError(w, 404, "HTTP 404 Not Found")
		default:
			w.Header().Set("X-Seen", r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Content-Type"))
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write(append([]byte(`{"echo": `), append(body, '}')...))
		}
	})
	c := newTestClient(t, Config{Address: s.URL}, nil)
	ctx := context.Background()
	resp, err := c.Raw(ctx, http.MethodPost, "/x/a%2Fb?dry_run=true", []byte(`{"b":  1}`))
	if err != nil || resp.Status != 202 || string(resp.Body) != `{"echo": {"b":  1}}` || resp.Header.Get("X-Seen") != "POST /x/a%2Fb?dry_run=true application/json" {
		t.Fatalf("raw: %+v %s %v", resp, resp.Body, err)
	}
	if resp, err = c.Raw(ctx, http.MethodPut, "x", map[string]int{"n": 1}); err != nil || string(resp.Body) != `{"echo": {"n":1}}` {
		t.Fatalf("raw of a value: %s %v", resp.Body, err)
	}
	if _, err := c.Raw(ctx, http.MethodGet, "/flaky", nil); err != nil || n.Load() != 2 {
		t.Fatalf("a GET after an unknown outcome: %v after %d", err, n.Load())
	}
	n.Store(0)
	if _, err := c.Raw(ctx, http.MethodPost, "/flaky", nil); !IsCode(err, CodeUnavailable) {
		t.Fatalf("a POST after an unknown outcome: %v, want the 503 unretried", err)
	}
	if _, err := c.Raw(ctx, http.MethodGet, "/gone", nil); !IsUnsupported(err) {
		t.Fatalf("an unrouted path: %v", err)
	}
}
