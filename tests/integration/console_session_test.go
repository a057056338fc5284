package integration

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/wait"
)

// consoleSignIn posts creds to base's /ui/session and returns the answer.
func consoleSignIn(t *testing.T, base string, creds map[string]string) sluicetest.Response {
	t.Helper()
	return sluicetest.DoWith(t, base, "POST", "/ui/session", creds)
}

// sessionOf is the Cookie header of a sign-in's answer and its CSRF token.
func sessionOf(t *testing.T, r sluicetest.Response) (cookie, csrf string) {
	t.Helper()
	var info struct {
		CSRF string `json:"csrf"`
	}
	r.JSON(t, &info)
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "sluice_session" {
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure {
				t.Errorf("session cookie over plain HTTP: HttpOnly %v, SameSite %v, Path %q, Secure %v; want HttpOnly, Strict, /, not Secure", c.HttpOnly, c.SameSite, c.Path, c.Secure)
			}
			return "sluice_session=" + c.Value, info.CSRF
		}
	}
	t.Fatalf("no session cookie in %v", r.Header)
	return "", ""
}

// TestConsoleSessions signs in to the console as the browser does and uses
// the session on the REST API: on the coordinator that issued it and on
// another one sharing the key, writes only with the CSRF token, the
// caller's role and audit trail as with credentials, and the session ended
// when the auth file changes the principal's password.
func TestConsoleSessions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	veraHash := bcryptOf(t, "v") // unchanged below: vera's session outlives ada's change
	entries := func(adaPassword string) []byte {
		return []byte(fmt.Sprintf(`principals:
  - {name: ada, password_bcrypt: %q, grants: [{role: admin}]}
  - {name: vera, password_bcrypt: %q, grants: [{role: viewer}]}
  - {name: ci, token_sha256: %q, grants: [{role: operator}]}
`, bcryptOf(t, adaPassword), veraHash, fmt.Sprintf("%x", sha256.Sum256([]byte("ci-token")))))
	}
	authFile := writeFile(t, dir, "auth.yaml", entries("a"))
	keyFile := writeFile(t, dir, "forward.key", []byte(strings.Repeat("k", 40)))
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, RESTSecurity: coordinator.RESTSecurity{AuthFile: authFile, ForwardKeyFile: keyFile}})
	c.Headers = basicAuth("ada", "a")
	_, other := c.StartExtraCoordinator()

	// A wrong password: 401 with the API's message, no cookie.
	bad := consoleSignIn(t, c.URL, map[string]string{"user": "ada", "password": "nope"})
	if bad.Status != 401 || !strings.Contains(string(bad.Body), "wrong password") || bad.Header.Get("Set-Cookie") != "" {
		t.Fatalf("wrong password: %d %s (Set-Cookie %q)", bad.Status, bad.Body, bad.Header.Get("Set-Cookie"))
	}
	ada, csrf := sessionOf(t, wantStatus(t, consoleSignIn(t, c.URL, map[string]string{"user": "ada", "password": "a"}), 200))

	// Reads with the cookie alone, on both coordinators.
	for _, base := range []string{c.URL, other} {
		wantStatus(t, sluicetest.DoWith(t, base, "GET", "/connectors", nil, "Cookie", ada), 200)
	}
	// A write without the CSRF token is refused and changes nothing.
	name := c.Name("src")
	writeLines(t, c.WorkDir+"/in.txt", []string{"x"})
	create := map[string]any{"name": name, "config": fileSourceCfg("in.txt", c.Name("t"))}
	r := sluicetest.DoWith(t, c.URL, "POST", "/connectors", create, "Cookie", ada)
	if r.Status != 403 || !strings.Contains(string(r.Body), "X-Sluice-CSRF") {
		t.Fatalf("write without CSRF: %d %s, want 403 naming X-Sluice-CSRF", r.Status, r.Body)
	}
	wantStatus(t, sluicetest.DoWith(t, c.URL, "GET", "/connectors/"+name, nil, "Cookie", ada), 404)
	// With it, through the other coordinator (a follower forwards it):
	// created, and audited under ada.
	wantStatus(t, sluicetest.DoWith(t, other, "POST", "/connectors", create, "Cookie", ada, "X-Sluice-CSRF", csrf), 201)
	var trail struct {
		Records []api.AuditRecord `json:"records"`
	}
	c.Must(200, "GET", "/sluice/audit?limit=1000", nil).JSON(t, &trail)
	found := false
	for _, rec := range trail.Records {
		found = found || rec.Method == "POST" && rec.Path == "/connectors" && rec.Status == 201 && rec.Principal == "ada"
	}
	if !found {
		t.Errorf("no audit record of ada's create through the console session: %+v", trail.Records)
	}

	// A viewer's session cannot write, CSRF token or not.
	vera, veraCSRF := sessionOf(t, wantStatus(t, consoleSignIn(t, c.URL, map[string]string{"user": "vera", "password": "v"}), 200))
	r = sluicetest.DoWith(t, c.URL, "PUT", "/connectors/"+name+"/pause", nil, "Cookie", vera, "X-Sluice-CSRF", veraCSRF)
	if r.Status != 403 {
		t.Fatalf("viewer's pause: %d %s, want 403", r.Status, r.Body)
	}
	// A token signs in too.
	sessionOf(t, wantStatus(t, consoleSignIn(t, c.URL, map[string]string{"token": "ci-token"}), 200))

	// The console's own 401s carry no Basic challenge (the browser would
	// open its own dialog); other clients' still do.
	r = sluicetest.DoWith(t, c.URL, "GET", "/connectors", nil, "X-Sluice-Console", "1")
	if r.Status != 401 || r.Header.Get("WWW-Authenticate") != "" {
		t.Errorf("console's 401: %d, WWW-Authenticate %q; want 401 without a challenge", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	if r = sluicetest.DoWith(t, c.URL, "GET", "/connectors", nil); r.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("a client's 401 lost its challenge")
	}

	// The auth file changes ada's password: her session ends on both
	// coordinators, the old password stops working, the new one works.
	if err := os.WriteFile(authFile, entries("a2"), 0o600); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 30*time.Second, func() (bool, string) {
		r := sluicetest.DoWith(t, other, "GET", "/connectors", nil, "Cookie", ada)
		return r.Status == 401 && strings.Contains(string(r.Body), "revoked"), fmt.Sprintf("%d %s", r.Status, r.Body)
	})
	wantStatus(t, sluicetest.DoWith(t, c.URL, "GET", "/connectors", nil, "Cookie", ada), 401)
	wantStatus(t, sluicetest.DoWith(t, c.URL, "GET", "/connectors", nil, basicAuth("ada", "a")...), 401)
	wantStatus(t, sluicetest.DoWith(t, c.URL, "GET", "/connectors", nil, basicAuth("ada", "a2")...), 200)
	// vera's entry did not change: her session goes on.
	wantStatus(t, sluicetest.DoWith(t, c.URL, "GET", "/connectors", nil, "Cookie", vera), 200)

	// Sign-out overwrites the cookie with an expired one.
	r = wantStatus(t, sluicetest.DoWith(t, c.URL, "DELETE", "/ui/session", nil, "Cookie", vera, "X-Sluice-CSRF", veraCSRF), 204)
	if sc := r.Header.Get("Set-Cookie"); !strings.Contains(sc, "sluice_session=;") || !strings.Contains(sc, "Max-Age=0") {
		t.Errorf("sign-out's Set-Cookie %q does not clear the session", sc)
	}
}

// wantStatus fails the test unless r has status want; it returns r.
func wantStatus(t *testing.T, r sluicetest.Response, want int) sluicetest.Response {
	t.Helper()
	if r.Status != want {
		t.Fatalf("got %s, want %d", r, want)
	}
	return r
}
