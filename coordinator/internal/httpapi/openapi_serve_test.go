package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/brokerwatch"
)

// starting is a follower that has not finished starting.
type starting struct{ follower }

func (starting) Ready() bool { return false }

// downBrokers is a BrokerGate whose brokers are away.
type downBrokers struct{}

func (downBrokers) BrokerOutage() (brokerwatch.Outage, bool) { return brokerwatch.Outage{}, true }

func (downBrokers) BrokerDown() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// TestOpenAPIServed: GET /openapi.json answers the document as JSON on any
// coordinator — a follower, one still starting — without asking the
// leader; it needs credentials where GET /health does, and is open where
// --rest-auth-open-probes opens the probes.
func TestOpenAPIServed(t *testing.T) {
	var leaderCalls atomic.Int32
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaderCalls.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(leader.Close)
	authn := testAuthenticator(t)
	servers := []struct {
		name string
		opts []Option
		// open: answered without credentials.
		open bool
	}{
		{"no security", nil, true},
		{"follower", []Option{WithLeaderRouting(follower{url: leader.URL})}, true},
		{"starting follower", []Option{WithLeaderRouting(starting{follower{url: leader.URL}})}, true},
		{"authentication", []Option{WithSecurity(Security{Authenticator: authn}), WithLeaderRouting(follower{url: leader.URL})}, false},
		{"authentication, open probes", []Option{WithSecurity(Security{Authenticator: authn, OpenProbes: true}), WithLeaderRouting(follower{url: leader.URL})}, true},
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			srv := httptest.NewServer(NewHandler(newFake().services(), s.opts...))
			t.Cleanup(srv.Close)
			for _, creds := range []string{"", basicHeader("vera", "pw-vera")} {
				got := do(t, srv, http.MethodGet, openAPIPath, "", "Authorization", creds)
				probe := do(t, srv, http.MethodGet, "/health", "", "Authorization", creds)
				if creds == "" && !s.open {
					if got.status != http.StatusUnauthorized || probe.status != http.StatusUnauthorized {
						t.Errorf("without credentials: %d %s (GET /health: %d), want 401 for both", got.status, got.body, probe.status)
					}
					continue
				}
				if got.status != http.StatusOK || got.body+"\n" != string(api.OpenAPI()) {
					t.Fatalf("credentials %q: %d, %d bytes, want 200 and the document", creds, got.status, len(got.body))
				}
				if ct := got.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				if probe.status == http.StatusUnauthorized {
					t.Errorf("credentials %q: GET /health is 401 where the document is open", creds)
				}
			}
			// Any media type, as the probes: a scraper may send one.
			if got := do(t, srv, http.MethodGet, openAPIPath, "", "Content-Type", "text/plain", "Authorization", basicHeader("vera", "pw-vera")); got.status != http.StatusOK {
				t.Errorf("with Content-Type text/plain: %d %s", got.status, got.body)
			}
		})
	}
	if n := leaderCalls.Load(); n != 0 {
		t.Errorf("the leader was asked %d times", n)
	}
}

// withQuery adds a query parameter to path.
func withQuery(path, param string) string {
	if strings.Contains(path, "?") {
		return path + "&" + param
	}
	return path + "?" + param
}

// TestOpenAPIErrorsObserved calls every route the ways that make the
// server refuse it — a bad Content-Type, a body that is not JSON, an
// unknown query parameter, no credentials, a caller without the role, a
// coordinator starting, no leader, no brokers, a service that fails — and
// checks the document lists each status it answered for that route, and
// that the routes the document gives a body or a 415 read a body and
// answer 415.
func TestOpenAPIErrorsObserved(t *testing.T) {
	doc := committedOpenAPI(t)
	authn := testAuthenticator(t)
	server := func(f *fake, opts ...Option) *httptest.Server {
		srv := httptest.NewServer(NewHandler(f.services(), opts...))
		t.Cleanup(srv.Close)
		return srv
	}
	plain := server(newFake())
	secured := server(newFake(), WithSecurity(Security{Authenticator: authn}))
	openProbes := server(newFake(), WithSecurity(Security{Authenticator: authn, OpenProbes: true}))
	notReady := server(newFake(), WithLeaderRouting(starting{}))
	noLeader := server(newFake(), WithLeaderRouting(follower{}))
	noBrokers := server(newFake(), WithBrokerGate(downBrokers{}))
	for _, rt := range routes() {
		t.Run(rt.op, func(t *testing.T) {
			listed := documentedStatuses(t, doc, rt)
			method, path, body := requestFor(rt, "team-a-1")
			check := func(what string, got reply) reply {
				t.Helper()
				if !listed[got.status] {
					t.Errorf("%s: %s %s answered %d %s, which the document does not list", what, method, path, got.status, got.body)
				}
				return got
			}
			f := newFake()
			ok := check("a good request", do(t, server(f), method, path, body))
			if ok.status >= 300 && rt.op != "health" {
				t.Fatalf("a good request: %d %s", ok.status, ok.body)
			}
			check("an unknown query parameter", do(t, plain, method, withQuery(path, "zz=1"), body))
			got := check("Content-Type text/plain", do(t, plain, method, path, body, "Content-Type", "text/plain"))
			if (got.status == http.StatusUnsupportedMediaType) != listed[http.StatusUnsupportedMediaType] {
				t.Errorf("Content-Type text/plain: %d; the document lists 415: %v", got.status, listed[http.StatusUnsupportedMediaType])
			}
			check("a Content-Type that does not parse", do(t, plain, method, path, body, "Content-Type", "a b"))
			got = check("a body that is not JSON", do(t, plain, method, path, "{"))
			readsJSON := got.status == http.StatusBadRequest && strings.Contains(got.body, "Invalid JSON")
			if readsJSON != hasRequestBody(doc, rt) {
				t.Errorf("a body that is not JSON: %d %s; the document has a request body: %v", got.status, got.body, hasRequestBody(doc, rt))
			}
			check("a body without Content-Type", do(t, plain, method, path, "{}", "Content-Type", ""))
			check("no credentials", do(t, secured, method, path, body))
			check("a viewer", do(t, secured, method, path, body, "Authorization", basicHeader("vera", "pw-vera")))
			got = check("no credentials, open probes", do(t, openProbes, method, path, body))
			if open := got.status != http.StatusUnauthorized; open != probeOps[rt.op] {
				t.Errorf("no credentials with open probes: %d; a probe: %v", got.status, probeOps[rt.op])
			}
			check("a coordinator starting", do(t, notReady, method, path, body))
			check("no known leader", do(t, noLeader, method, path, body))
			check("no brokers", do(t, noBrokers, method, path, body))
			if len(f.calls) > 0 {
				failing := newFake()
				failing.panicOn = f.calls[len(f.calls)-1]
				check("a service that fails", do(t, server(failing), method, path, body))
			}
		})
	}
}
