package session

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/sluice-io/sluice/coordinator/internal/auth"
)

// testKey is a session key of the right length.
var testKey = []byte(strings.Repeat("k", 32))

// hash is pw's bcrypt hash, at the cheapest cost.
func hash(t *testing.T, pw string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// authenticator reads an auth file's YAML.
func authenticator(t *testing.T, yaml string) *auth.Authenticator {
	t.Helper()
	f, err := auth.ParseFile([]byte(yaml))
	if err != nil {
		t.Fatalf("auth file: %v\n%s", err, yaml)
	}
	a, err := auth.NewAuthenticator(context.Background(), auth.Config{File: f})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// login authenticates user:pw with a, as the REST API would.
func login(t *testing.T, a *auth.Authenticator, user, pw string) *auth.Principal {
	t.Helper()
	r := httptest.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, pw)
	p, err := a.Authenticate(r, nil)
	if err != nil {
		t.Fatalf("authenticating %s: %v", user, err)
	}
	return p
}

// issue signs p in with m and returns the cookie the browser would keep.
func issue(t *testing.T, m *Manager, p *auth.Principal, secure bool) (*Session, *http.Cookie) {
	t.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/ui/session", nil)
	if secure {
		r.TLS = &tls.ConnectionState{}
	}
	s, err := m.Issue(w, r, p)
	if err != nil {
		t.Fatalf("issuing a session for %s: %v", p.Kind(), err)
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Name != CookieName {
		t.Fatalf("Issue set the cookies %v, want one %s", cookies, CookieName)
	}
	return s, cookies[0]
}

// request is a request carrying the cookie.
func request(method string, c *http.Cookie) *http.Request {
	r := httptest.NewRequest(method, "/connectors", nil)
	if c != nil {
		r.AddCookie(c)
	}
	return r
}

func newManager(t *testing.T, key []byte, ttl time.Duration, a *auth.Authenticator) *Manager {
	t.Helper()
	m, err := New(key, ttl, a)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const aliceFile = `principals:
  - {name: alice, password_bcrypt: %q, grants: [{role: operator, connectors: ["team-a-*"]}]}
  - {name: bob, password_bcrypt: %q, grants: [{role: viewer}]}
`

// TestIssueAndRead: a session issued for a user reads back, on this
// Manager and on another with the same key (another coordinator), as the
// same principal with its grants, CSRF token and expiry; its cookie is
// HttpOnly, SameSite=Strict, for every path, Secure only under TLS.
func TestIssueAndRead(t *testing.T) {
	a := authenticator(t, fmt.Sprintf(aliceFile, hash(t, "pw"), hash(t, "b")))
	m := newManager(t, testKey, time.Hour, a)
	before := time.Now()
	s, c := issue(t, m, login(t, a, "alice", "pw"), false)
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure {
		t.Errorf("the cookie over HTTP is %+v, want HttpOnly, SameSite=Strict, Path=/ and not Secure", c)
	}
	if d := s.Expires.Sub(before); d < time.Hour-2*time.Second || d > time.Hour+time.Second {
		t.Errorf("the session ends in %v, want the TTL of 1h", d)
	}
	if s.CSRF == "" {
		t.Error("the session has no CSRF token")
	}
	for _, reader := range []*Manager{m, newManager(t, testKey, time.Hour, a)} {
		got, err := reader.Read(request("GET", c))
		if err != nil {
			t.Fatalf("reading the session: %v", err)
		}
		if got.Principal.Name != "alice" || got.Principal.Via != auth.ViaBasic || got.CSRF != s.CSRF || !got.Expires.Equal(s.Expires) {
			t.Errorf("read %+v (principal %+v), want alice's session %+v", got, got.Principal, s)
		}
		if len(got.Principal.Grants) != 1 || got.Principal.Grants[0].Role != auth.RoleOperator {
			t.Errorf("the session's principal has the grants %+v, want the file's operator over team-a-*", got.Principal.Grants)
		}
	}
	if _, c := issue(t, m, login(t, a, "alice", "pw"), true); !c.Secure {
		t.Errorf("the cookie under TLS is not Secure: %+v", c)
	}
}

// TestReadWithoutCookie: no cookie, or an empty one, is ErrNoSession —
// the REST API then asks for credentials as usual.
func TestReadWithoutCookie(t *testing.T) {
	m := newManager(t, testKey, 0, authenticator(t, fmt.Sprintf(aliceFile, hash(t, "pw"), hash(t, "b"))))
	if _, err := m.Read(request("GET", nil)); !errors.Is(err, ErrNoSession) {
		t.Errorf("no cookie: %v, want ErrNoSession", err)
	}
	if _, err := m.Read(request("GET", &http.Cookie{Name: CookieName, Value: ""})); !errors.Is(err, ErrNoSession) {
		t.Errorf("an empty cookie: %v, want ErrNoSession", err)
	}
	if m.TTL() != DefaultTTL {
		t.Errorf("a TTL of 0 is %v, want the default %v", m.TTL(), DefaultTTL)
	}
}

// TestExpired: a session is refused from its expiry on.
func TestExpired(t *testing.T) {
	a := authenticator(t, fmt.Sprintf(aliceFile, hash(t, "pw"), hash(t, "b")))
	m := newManager(t, testKey, time.Minute, a)
	s, c := issue(t, m, login(t, a, "alice", "pw"), false)
	m.now = func() time.Time { return s.Expires.Add(-time.Second) }
	if _, err := m.Read(request("GET", c)); err != nil {
		t.Fatalf("a second before its expiry: %v", err)
	}
	m.now = func() time.Time { return s.Expires }
	if _, err := m.Read(request("GET", c)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("at its expiry the session reads with %v, want an expired error", err)
	}
}

// TestTampered: a cookie whose payload or signature was changed, or that
// another key signed, does not verify — a user cannot grant themselves
// another principal or a later expiry.
func TestTampered(t *testing.T) {
	a := authenticator(t, fmt.Sprintf(aliceFile, hash(t, "pw"), hash(t, "b")))
	m := newManager(t, testKey, time.Hour, a)
	_, c := issue(t, m, login(t, a, "bob", "b"), false)
	value, sig, _ := strings.Cut(c.Value, ".")
	data, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil {
		t.Fatal(err)
	}
	var pl map[string]any
	if err := json.Unmarshal(data, &pl); err != nil {
		t.Fatal(err)
	}
	pl["n"] = "alice"
	forged, _ := json.Marshal(pl)
	_, other := issue(t, newManager(t, []byte(strings.Repeat("x", 32)), time.Hour, a), login(t, a, "bob", "b"), false)
	for name, v := range map[string]string{
		"another principal": base64.RawURLEncoding.EncodeToString(forged) + "." + sig,
		"a changed mac":     value + "." + strings.Repeat("A", len(sig)),
		"no mac":            value,
		"another key":       other.Value,
	} {
		_, err := m.Read(request("GET", &http.Cookie{Name: CookieName, Value: v}))
		if err == nil || errors.Is(err, ErrNoSession) || !strings.Contains(err.Error(), "does not verify") {
			t.Errorf("%s: read with %v, want a session that does not verify", name, err)
		}
	}
}

// TestRevokedWhenAuthFileChanges: a session ends when its principal's
// entry changes — another password, other grants, the principal removed —
// and survives a file whose entry for it is the same.
func TestRevokedWhenAuthFileChanges(t *testing.T) {
	pw, b := hash(t, "pw"), hash(t, "b")
	a := authenticator(t, fmt.Sprintf(aliceFile, pw, b))
	_, c := issue(t, newManager(t, testKey, time.Hour, a), login(t, a, "alice", "pw"), false)
	for name, file := range map[string]string{
		"a new password": fmt.Sprintf(aliceFile, hash(t, "pw2"), b),
		"other grants":   strings.Replace(fmt.Sprintf(aliceFile, pw, b), `connectors: ["team-a-*"]`, `connectors: ["*"]`, 1),
		"removed":        fmt.Sprintf("principals:\n  - {name: bob, password_bcrypt: %q, grants: [{role: viewer}]}\n", b),
	} {
		m := newManager(t, testKey, time.Hour, authenticator(t, file))
		_, err := m.Read(request("GET", c))
		if err == nil || !strings.Contains(err.Error(), "revoked") || !strings.Contains(err.Error(), "alice") {
			t.Errorf("%s: the session reads with %v, want it revoked, naming alice", name, err)
		}
	}
	// Only bob's entry changed: alice stays signed in.
	same := authenticator(t, fmt.Sprintf(aliceFile, pw, hash(t, "b2")))
	if _, err := newManager(t, testKey, time.Hour, same).Read(request("GET", c)); err != nil {
		t.Errorf("a file that changed another principal ends alice's session: %v", err)
	}
}

// TestTokenSession: a bearer token of the auth file opens a session of its
// principal, revoked when the token changes.
func TestTokenSession(t *testing.T) {
	sum := func(tok string) string { s := sha256.Sum256([]byte(tok)); return hex.EncodeToString(s[:]) }
	file := "principals:\n  - {name: ci, token_sha256: %q, grants: [{role: admin}]}\n"
	a := authenticator(t, fmt.Sprintf(file, sum("tok-1")))
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer tok-1")
	p, err := a.Authenticate(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, c := issue(t, newManager(t, testKey, time.Hour, a), p, false)
	got, err := newManager(t, testKey, time.Hour, a).Read(request("GET", c))
	if err != nil || got.Principal.Kind() != "Token ci" {
		t.Fatalf("the token's session reads as %+v, %v", got, err)
	}
	rotated := authenticator(t, fmt.Sprintf(file, sum("tok-2")))
	if _, err := newManager(t, testKey, time.Hour, rotated).Read(request("GET", c)); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("after the token changed the session reads with %v, want it revoked", err)
	}
}

// TestJWTSessionEndsWithToken: a JWT's session carries the token's
// principal (no auth file to look it up in) and ends when the token does,
// before the TTL — or at once on a coordinator whose JWT settings differ.
func TestJWTSessionEndsWithToken(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	point, err := key.PublicKey.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	n := (len(point) - 1) / 2
	b64 := base64.RawURLEncoding.EncodeToString
	jwks, _ := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "kid": "k1", "use": "sig", "x": b64(point[1 : 1+n]), "y": b64(point[1+n:]),
	}}})
	file := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(file, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := auth.NewAuthenticator(context.Background(), auth.Config{JWT: &auth.JWTConfig{JWKS: file}})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(10 * time.Minute).Truncate(time.Second)
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"sub": "carol", "exp": exp.Unix(), "roles": []string{"viewer"}})
	tok.Header["kid"] = "k1"
	signed, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer "+signed)
	p, err := a.Authenticate(r, nil)
	if err != nil {
		t.Fatalf("authenticating the JWT: %v", err)
	}
	m := newManager(t, testKey, 8*time.Hour, a)
	s, c := issue(t, m, p, false)
	if !s.Expires.Equal(exp) || !c.Expires.Equal(exp) {
		t.Errorf("the JWT's session ends at %v (cookie %v), want the token's exp %v", s.Expires, c.Expires, exp)
	}
	got, err := m.Read(request("GET", c))
	if err != nil || got.Principal.Name != "carol" || got.Principal.Via != auth.ViaJWT || len(got.Principal.Grants) != 1 {
		t.Fatalf("the JWT's session reads as %+v, %v", got, err)
	}
	// A coordinator that takes no JWTs (or under other settings) does
	// not take the JWT's session either.
	noJWT := newManager(t, testKey, 8*time.Hour, authenticator(t, fmt.Sprintf(aliceFile, hash(t, "pw"), hash(t, "b"))))
	if _, err := noJWT.Read(request("GET", c)); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("on a coordinator without JWTs the session reads with %v, want it revoked", err)
	}
	m.now = func() time.Time { return exp }
	if _, err := m.Read(request("GET", c)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("at the token's exp the session reads with %v, want it expired", err)
	}
}

// TestIssueRefusals: a key too short makes no Manager; a principal that
// is neither the file's nor a JWT's (a client certificate) gets no
// session; nor does a principal the file no longer has.
func TestIssueRefusals(t *testing.T) {
	if _, err := New(make([]byte, 31), 0, nil); err == nil {
		t.Error("New took a key of 31 bytes")
	}
	a := authenticator(t, fmt.Sprintf(aliceFile, hash(t, "pw"), hash(t, "b")))
	m := newManager(t, testKey, time.Hour, a)
	for _, p := range []*auth.Principal{
		{Name: "deployer", Via: auth.ViaCertificate},
		{Name: "mallory", Via: auth.ViaBasic},
	} {
		w := httptest.NewRecorder()
		if _, err := m.Issue(w, httptest.NewRequest("POST", "/ui/session", nil), p); err == nil {
			t.Errorf("Issue opened a session for %s", p.Kind())
		}
		if len(w.Result().Cookies()) != 0 {
			t.Errorf("a refused Issue for %s set a cookie", p.Kind())
		}
	}
}

// TestCheckCSRF: reads pass without the token; a write needs the
// session's own token in X-Sluice-CSRF.
func TestCheckCSRF(t *testing.T) {
	s := &Session{CSRF: "the-token"}
	for _, method := range []string{"GET", "HEAD", "OPTIONS"} {
		if err := s.CheckCSRF(httptest.NewRequest(method, "/connectors", nil)); err != nil {
			t.Errorf("%s without a token: %v", method, err)
		}
	}
	for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		r := httptest.NewRequest(method, "/connectors", nil)
		if err := s.CheckCSRF(r); err == nil || !strings.Contains(err.Error(), CSRFHeader) {
			t.Errorf("%s without a token: %v, want a refusal naming %s", method, err, CSRFHeader)
		}
		r.Header.Set(CSRFHeader, "another-token")
		if err := s.CheckCSRF(r); err == nil || !strings.Contains(err.Error(), "does not match") {
			t.Errorf("%s with another token: %v, want a refusal", method, err)
		}
		r.Header.Set(CSRFHeader, "the-token")
		if err := s.CheckCSRF(r); err != nil {
			t.Errorf("%s with the token: %v", method, err)
		}
	}
}

// TestClear: signing out overwrites the cookie with an expired one of the
// same attributes.
func TestClear(t *testing.T) {
	m := newManager(t, testKey, time.Hour, nil)
	w := httptest.NewRecorder()
	m.Clear(w, httptest.NewRequest("DELETE", "/ui/session", nil))
	c := w.Result().Cookies()
	if len(c) != 1 || c[0].Name != CookieName || c[0].Value != "" || c[0].MaxAge >= 0 || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode || c[0].Path != "/" {
		t.Errorf("Clear set %+v, want an expired, empty, HttpOnly, SameSite=Strict %s for /", c, CookieName)
	}
}

// TestFromConsole: the console's requests are known by their header or
// their session cookie (a 401 to them carries no challenge).
func TestFromConsole(t *testing.T) {
	r := httptest.NewRequest("GET", "/connectors", nil)
	if FromConsole(r) {
		t.Error("a bare request is taken for the console's")
	}
	r.Header.Set(ConsoleHeader, "1")
	if !FromConsole(r) {
		t.Errorf("a request with %s is not taken for the console's", ConsoleHeader)
	}
	if !FromConsole(request("GET", &http.Cookie{Name: CookieName, Value: "x"})) {
		t.Error("a request with a session cookie is not taken for the console's")
	}
}
