package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/auth"
)

// seen records the caller and the forwarded mark the leader's Service saw.
type seen struct {
	mu        sync.Mutex
	principal string
	forwarded bool
}

func (s *seen) hold(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.principal, _ = auth.PrincipalFrom(ctx)
	s.forwarded = auth.ForwardedFrom(ctx)
	return nil
}

// TestForwardedIdentity sends writes through a follower to a leader, with
// and without a forward key: the leader authorizes the original caller
// either way (re-authenticating its credentials without a key), marks the
// request forwarded only when the signed identity verified, and ignores an
// identity header a client sends.
func TestForwardedIdentity(t *testing.T) {
	key, err := auth.NewForwardKey([]byte(strings.Repeat("f", 32)))
	if err != nil {
		t.Fatal(err)
	}
	a := testAuthenticator(t)
	tom := basicHeader("tom", "pw-tom")
	for _, tc := range []struct {
		name string
		key  *auth.ForwardKey
	}{{"signed identity", key}, {"credentials forwarded", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			var s seen
			lf := newFake()
			lf.hold = s.hold
			leader := httptest.NewServer(NewHandler(lf.services(), WithSecurity(Security{Authenticator: a, ForwardKey: tc.key})))
			t.Cleanup(leader.Close)
			ff := newFake()
			follower := httptest.NewServer(NewHandler(ff.services(), WithLeaderRouting(follower{url: leader.URL}), WithSecurity(Security{Authenticator: a, ForwardKey: tc.key})))
			t.Cleanup(follower.Close)

			got := do(t, follower, "PUT", "/connectors/team-a-1/config", `{}`, "Authorization", tom)
			if got.status != 200 {
				t.Fatalf("tom's write through the follower: %d %s", got.status, got.body)
			}
			if s.principal != "tom" || s.forwarded != (tc.key != nil) {
				t.Errorf("the leader saw principal %q, forwarded %v", s.principal, s.forwarded)
			}
			if _, ok := ff.called("PutConnectorConfig"); ok {
				t.Error("the follower applied the write itself")
			}
			got = do(t, follower, "PUT", "/connectors/b/config", `{}`, "Authorization", tom)
			if got.status != 403 || !strings.Contains(got.body, "User tom may not PUT /connectors/b/config") {
				t.Errorf("tom's write on another team's connector through the follower: %d %s", got.status, got.body)
			}
			if got := do(t, follower, "PUT", "/connectors/team-a-1/config", `{}`); got.status != 401 {
				t.Errorf("anonymous through the follower: %d %s", got.status, got.body)
			}
		})
	}

	// A client sending a signed-looking identity (here a real one, signed
	// for another request) straight to the leader gains nothing.
	var s seen
	lf := newFake()
	lf.hold = s.hold
	leader := httptest.NewServer(NewHandler(lf.services(), WithSecurity(Security{Authenticator: a, ForwardKey: key})))
	t.Cleanup(leader.Close)
	admin := &auth.Principal{Name: "ada", Via: auth.ViaBasic, Grants: []auth.Grant{{Role: auth.RoleAdmin}}}
	replayed := key.Sign(admin, "PUT", "/connectors/other/config", time.Now())
	got := do(t, leader, "PUT", "/connectors/b/config", `{}`, "Authorization", tom, auth.IdentityHeader, replayed, ForwardedHeader, "1")
	if got.status != 403 || s.principal != "" {
		t.Errorf("tom with a replayed admin identity: %d %s (leader saw %q)", got.status, got.body, s.principal)
	}
	got = do(t, leader, "PUT", "/connectors/team-a-1/config", `{}`, "Authorization", tom, auth.IdentityHeader, replayed)
	if got.status != 200 || s.principal != "tom" || s.forwarded {
		t.Errorf("tom with a replayed identity on his own connector: %d %s (leader saw %q, forwarded %v)", got.status, got.body, s.principal, s.forwarded)
	}
}

// TestBearerChallenge checks a refused bearer token is a 401 with a Bearer
// challenge and the reason.
func TestBearerChallenge(t *testing.T) {
	srv := httptest.NewServer(NewHandler(newFake().services(), WithSecurity(Security{Authenticator: testAuthenticator(t)})))
	t.Cleanup(srv.Close)
	got := do(t, srv, "GET", "/connectors", "", "Authorization", "Bearer a.b.c")
	if got.status != 401 || !strings.Contains(got.header.Get("Www-Authenticate"), "Basic realm") ||
		!strings.Contains(strings.Join(got.header.Values("Www-Authenticate"), ","), `Bearer realm="sluice"`) ||
		!strings.Contains(got.body, "looks like a JWT, but no JWKS is configured") {
		t.Errorf("%d %v %s", got.status, got.header, got.body)
	}
}

// TestForwardToUntrustedLeader: a leader whose certificate the follower
// does not trust never sees the write; the answer says so and names the
// flag to fix it.
func TestForwardToUntrustedLeader(t *testing.T) {
	lf := newFake()
	leader := httptest.NewTLSServer(NewHandler(lf.services()))
	t.Cleanup(leader.Close)
	follower := httptest.NewServer(NewHandler(newFake().services(), WithLeaderRouting(follower{url: leader.URL})))
	t.Cleanup(follower.Close)
	got := do(t, follower, "PUT", "/connectors/a/pause", "")
	if got.status != 500 || !strings.Contains(got.body, "its TLS certificate is not trusted") || !strings.Contains(got.body, "--rest-forward-ca") {
		t.Fatalf("%d %s", got.status, got.body)
	}
	if _, ok := lf.called("PauseConnector"); ok {
		t.Error("the leader applied it")
	}
}

// TestCallerSlot: a layer between the slot and authentication (where the
// audit trail sits) sees the caller and the verified forward mark after
// serving, and can tell a verified forward before serving.
func TestCallerSlot(t *testing.T) {
	key, _ := auth.NewForwardKey([]byte(strings.Repeat("f", 32)))
	sec := Security{Authenticator: testAuthenticator(t), ForwardKey: key}
	inner := authenticate(sec, slog.New(slog.DiscardHandler), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	var name string
	var ok, forwardedBefore, forwardedAfter bool
	h := callerSlot(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forwardedBefore = key.Forwarded(r)
		inner.ServeHTTP(w, r)
		name, ok = auth.PrincipalFrom(r.Context())
		forwardedAfter = auth.Forwarded(r)
	}))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	do(t, srv, "PUT", "/connectors/a/pause", "", "Authorization", basicHeader("tom", "pw-tom"))
	if name != "tom" || !ok || forwardedBefore || forwardedAfter {
		t.Errorf("direct: principal %q %v, forwarded %v/%v", name, ok, forwardedBefore, forwardedAfter)
	}
	p := &auth.Principal{Name: "robot", Via: auth.ViaCertificate}
	do(t, srv, "PUT", "/connectors/a/pause", "", auth.IdentityHeader, key.Sign(p, "PUT", "/connectors/a/pause", time.Now()))
	if name != "robot" || !forwardedBefore || !forwardedAfter {
		t.Errorf("forwarded: principal %q, forwarded %v/%v", name, forwardedBefore, forwardedAfter)
	}
	do(t, srv, "PUT", "/connectors/a/pause", "", ForwardedHeader, "1", "Authorization", basicHeader("tom", "pw-tom"))
	if forwardedBefore || forwardedAfter {
		t.Error("a bare X-Sluice-Forwarded counted as a forward")
	}
}
