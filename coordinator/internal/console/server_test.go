package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/sluice-io/sluice/coordinator/internal/auth"
	"github.com/sluice-io/sluice/coordinator/internal/session"
)

// apiStub stands for the REST API behind the console: it answers 418 so
// that a test sees which requests reach it.
var apiStub = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusTeapot)
	_, _ = io.WriteString(w, "api")
})

// server is the console with sign-in on, over an auth file of one
// operator, alice, whose password is "pw".
func server(t *testing.T) *httptest.Server {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	f, err := auth.ParseFile([]byte(fmt.Sprintf("principals:\n  - {name: alice, password_bcrypt: %q, grants: [{role: operator}]}\n", h)))
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.NewAuthenticator(context.Background(), auth.Config{File: f})
	if err != nil {
		t.Fatal(err)
	}
	m, err := session.New(session.RandomKey(), 0, a)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(Mount(apiStub, Options{Sessions: Sessions{Authenticator: a, Manager: m}}))
	t.Cleanup(s.Close)
	return s
}

// send makes a request of the console and reads the whole answer.
func send(t *testing.T, s *httptest.Server, method, path, contentType, body string, cookies ...*http.Cookie) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(data)
}

// restError decodes an error answer, failing unless it is the REST API's
// {"error_code", "message"} with the status as its code.
func restError(t *testing.T, res *http.Response, body string) string {
	t.Helper()
	var e struct {
		Code    int    `json:"error_code"`
		Message string `json:"message"`
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("the error's Content-Type is %q, want application/json", ct)
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Code != res.StatusCode || e.Message == "" {
		t.Errorf("the error body %q is not {error_code: %d, message}", body, res.StatusCode)
	}
	return e.Message
}

// TestSecurityHeadersOnEveryAnswer: the page, its files, a deep link, a
// missing file, the session endpoint and a refused method all carry the
// CSP (own files only, no inline script, no framing) and its companions.
func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	s := server(t)
	for _, tc := range []struct{ method, path, ctype, body string }{
		{"GET", "/ui/", "", ""},
		{"GET", "/ui/connectors/x/offsets", "", ""},
		{"GET", "/ui/js/main.js", "", ""},
		{"GET", "/ui/css/console.css", "", ""},
		{"GET", "/ui/js/nope.js", "", ""},
		{"GET", "/ui/session", "", ""},
		{"POST", "/ui/session", "application/json", `{"user": "alice", "password": "wrong"}`},
		{"POST", "/ui/", "", ""},
	} {
		res, _ := send(t, s, tc.method, tc.path, tc.ctype, tc.body)
		h := res.Header
		if got := h.Get("Content-Security-Policy"); got != contentSecurityPolicy {
			t.Errorf("%s %s: CSP %q, want %q", tc.method, tc.path, got, contentSecurityPolicy)
		}
		for name, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"} {
			if got := h.Get(name); got != want {
				t.Errorf("%s %s: %s is %q, want %q", tc.method, tc.path, name, got, want)
			}
		}
	}
	for _, part := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(contentSecurityPolicy, part) {
			t.Errorf("the CSP lacks %q", part)
		}
	}
	if strings.Contains(contentSecurityPolicy, "unsafe-") {
		t.Errorf("the CSP allows something unsafe: %s", contentSecurityPolicy)
	}
}

// TestDeepLinksServeThePage: any path under /ui/ without a file extension
// is the page itself (its script routes it); /ui goes to /ui/; anything
// else is the REST API's.
func TestDeepLinksServeThePage(t *testing.T) {
	s := server(t)
	_, page := send(t, s, "GET", "/ui/", "", "")
	if !strings.Contains(page, `<main id="main"`) || !strings.Contains(page, `src="/ui/js/main.js"`) {
		t.Fatalf("/ui/ is not the console's page: %.200s", page)
	}
	for _, p := range []string{"/ui/connectors/orders", "/ui/connectors/a%2Fb/offsets", "/ui/agents", "/ui/audit?principal=alice", "/ui/no/such/page"} {
		res, body := send(t, s, "GET", p, "", "")
		if res.StatusCode != 200 || body != page || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("GET %s: %d %s, want the page (200, text/html)", p, res.StatusCode, res.Header.Get("Content-Type"))
		}
	}
	if res, body := send(t, s, "HEAD", "/ui/agents", "", ""); res.StatusCode != 200 || body != "" {
		t.Errorf("HEAD /ui/agents: %d with %d bytes, want 200 and no body", res.StatusCode, len(body))
	}
	res, _ := send(t, s, "GET", "/ui", "", "")
	if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/ui/" {
		t.Errorf("GET /ui: %d to %q, want 301 to /ui/", res.StatusCode, res.Header.Get("Location"))
	}
	for _, p := range []string{"/connectors", "/uix", "/"} {
		if res, body := send(t, s, "GET", p, "", ""); res.StatusCode != http.StatusTeapot || body != "api" {
			t.Errorf("GET %s: %d %q, want the REST API's answer", p, res.StatusCode, body)
		}
	}
	res, body := send(t, s, "GET", "/ui/js/main.js", "", "")
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Type"), "javascript") || !strings.Contains(body, "import") {
		t.Errorf("GET /ui/js/main.js: %d %s, want the script", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

// TestUnknownFileAndMethod: a missing file is a 404 and a write to the
// files a 405, both as the REST API's JSON errors.
func TestUnknownFileAndMethod(t *testing.T) {
	s := server(t)
	res, body := send(t, s, "GET", "/ui/js/pages/nope.js", "", "")
	if res.StatusCode != 404 {
		t.Fatalf("a missing file: %d %s, want 404", res.StatusCode, body)
	}
	if msg := restError(t, res, body); msg != "The console has no file js/pages/nope.js" {
		t.Errorf("a missing file's message is %q", msg)
	}
	res, body = send(t, s, "PUT", "/ui/js/main.js", "", "x")
	if res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD" {
		t.Fatalf("PUT on a file: %d (Allow %q), want 405 allowing GET, HEAD", res.StatusCode, res.Header.Get("Allow"))
	}
	restError(t, res, body)
}

// TestSignInAndOut: a wrong password is a 401 with the REST API's message;
// a body that is not JSON a 415 (another site's form cannot send JSON
// without a preflight); the right password opens a session whose cookie
// GET /ui/session then reads; signing out needs the session's CSRF token
// and clears the cookie.
func TestSignInAndOut(t *testing.T) {
	s := server(t)
	res, body := send(t, s, "POST", "/ui/session", "application/json", `{"user": "alice", "password": "wrong"}`)
	if res.StatusCode != 401 {
		t.Fatalf("a wrong password: %d %s, want 401", res.StatusCode, body)
	}
	if msg := restError(t, res, body); msg != `The Basic credentials were refused: unknown user "alice" or wrong password` {
		t.Errorf("a wrong password's message is %q", msg)
	}
	if len(res.Cookies()) != 0 {
		t.Errorf("a refused sign-in set %v", res.Cookies())
	}
	for _, ct := range []string{"application/x-www-form-urlencoded", "text/plain", ""} {
		res, body := send(t, s, "POST", "/ui/session", ct, `user=alice&password=pw`)
		if res.StatusCode != 415 {
			t.Errorf("a sign-in as %q: %d %s, want 415", ct, res.StatusCode, body)
		} else {
			restError(t, res, body)
		}
	}
	for _, bad := range []string{`{"user": "alice", "password": "pw", "token": "t"}`, `{}`, `{"user": "alice", "pasword": "pw"}`, `not json`} {
		if res, body := send(t, s, "POST", "/ui/session", "application/json", bad); res.StatusCode != 400 {
			t.Errorf("a sign-in with %s: %d %s, want 400", bad, res.StatusCode, body)
		}
	}

	res, body = send(t, s, "POST", "/ui/session", "application/json; charset=utf-8", `{"user": "alice", "password": "pw"}`)
	if res.StatusCode != 200 {
		t.Fatalf("the right password: %d %s", res.StatusCode, body)
	}
	var in sessionInfo
	if err := json.Unmarshal([]byte(body), &in); err != nil || !in.Auth || !in.SignedIn || in.User == nil || in.User.Kind != "User alice" || in.CSRF == "" || in.Expires == nil {
		t.Fatalf("the sign-in answered %s", body)
	}
	cookies := res.Cookies()
	if len(cookies) != 1 || cookies[0].Name != session.CookieName || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("the sign-in set %+v, want an HttpOnly, SameSite=Strict session cookie", cookies)
	}
	_, body = send(t, s, "GET", "/ui/session", "", "", cookies...)
	var again sessionInfo
	if err := json.Unmarshal([]byte(body), &again); err != nil || !again.SignedIn || again.CSRF != in.CSRF || again.User.Name != "alice" {
		t.Fatalf("GET /ui/session with the cookie: %s", body)
	}
	if len(again.User.Grants) != 1 || again.User.Grants[0].Role != "operator" {
		t.Errorf("the session's grants are %+v, want alice's operator", again.User.Grants)
	}

	// A cookie that does not verify is no session, and GET says why.
	_, body = send(t, s, "GET", "/ui/session", "", "", &http.Cookie{Name: session.CookieName, Value: "forged.mac"})
	var forged sessionInfo
	if err := json.Unmarshal([]byte(body), &forged); err != nil || forged.SignedIn || !strings.Contains(forged.Reason, "does not verify") {
		t.Errorf("GET /ui/session with a forged cookie: %s, want signed out with the reason", body)
	}

	// Signing out is a write: without the token, another site could
	// sign the user out.
	res, body = send(t, s, "DELETE", "/ui/session", "", "", cookies...)
	if res.StatusCode != 403 {
		t.Fatalf("a sign-out without the CSRF token: %d %s, want 403", res.StatusCode, body)
	}
	req, _ := http.NewRequest("DELETE", s.URL+"/ui/session", nil)
	req.Header.Set(session.CSRFHeader, in.CSRF)
	req.AddCookie(cookies[0])
	out, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out.Body.Close()
	if out.StatusCode != 204 || len(out.Cookies()) != 1 || out.Cookies()[0].MaxAge >= 0 {
		t.Fatalf("the sign-out: %d setting %+v, want 204 and the cookie expired", out.StatusCode, out.Cookies())
	}
	// Without a session, signing out is a no-op.
	if res, _ := send(t, s, "DELETE", "/ui/session", "", ""); res.StatusCode != 204 {
		t.Errorf("a sign-out without a session: %d, want 204", res.StatusCode)
	}
	res, _ = send(t, s, "PUT", "/ui/session", "", "")
	if res.StatusCode != 405 || res.Header.Get("Allow") != "GET, POST, DELETE" {
		t.Errorf("PUT /ui/session: %d (Allow %q), want 405", res.StatusCode, res.Header.Get("Allow"))
	}
}

// TestSignInWithAuthOff: with REST authentication off the console needs
// no sign-in and says so.
func TestSignInWithAuthOff(t *testing.T) {
	s := httptest.NewServer(Mount(apiStub, Options{}))
	defer s.Close()
	_, body := send(t, s, "GET", "/ui/session", "", "")
	var in sessionInfo
	if err := json.Unmarshal([]byte(body), &in); err != nil || in.Auth || in.SignedIn {
		t.Errorf("GET /ui/session with auth off: %s, want auth false", body)
	}
	res, body := send(t, s, "POST", "/ui/session", "application/json", `{"user": "alice", "password": "pw"}`)
	if res.StatusCode != 409 {
		t.Errorf("a sign-in with auth off: %d %s, want 409", res.StatusCode, body)
	}
}
