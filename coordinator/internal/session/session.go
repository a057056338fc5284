// Package session signs the console's sign-in sessions into a cookie that
// any coordinator holding the same key verifies, and reads them back from
// requests (docs/console.md, "Sign-in and sessions").
//
// A session is stateless: the cookie carries who signed in, how, when it
// ends, its CSRF token, and — for principals of the auth file — a
// fingerprint of their entry, so that a changed password, token or grant,
// or a removed principal, ends every session of theirs at once. A JWT's
// session carries the token's principal and ends when the token would.
package session

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/auth"
)

// CookieName is the session cookie's name.
const CookieName = "sluice_session"

// CSRFHeader carries a session's CSRF token on every write a browser
// sends with the cookie: a page of another site can make the browser send
// the cookie (were it not SameSite=Strict) but cannot read the token.
const CSRFHeader = "X-Sluice-CSRF"

// ConsoleHeader marks the console's own requests. A 401 to them carries
// no WWW-Authenticate challenge, which would make the browser open its
// own sign-in dialog over the console's.
const ConsoleHeader = "X-Sluice-Console"

// FromConsole reports whether r was sent by the console: it says so, or
// carries a session.
func FromConsole(r *http.Request) bool {
	if r.Header.Get(ConsoleHeader) != "" {
		return true
	}
	_, err := r.Cookie(CookieName)
	return err == nil
}

// DefaultTTL is how long a session lasts unless configured otherwise.
const DefaultTTL = 8 * time.Hour

// minKey is the shortest session key taken, in bytes.
const minKey = 32

// Session is a verified sign-in.
type Session struct {
	// Principal is who signed in, as the auth file has them now.
	Principal *auth.Principal
	// Expires is when the session ends.
	Expires time.Time
	// CSRF is the token writes must carry in CSRFHeader.
	CSRF string
}

// payload is what the cookie signs.
type payload struct {
	Via         string          `json:"v"`
	Name        string          `json:"n"`
	Fingerprint string          `json:"f,omitempty"` // the entry's, or the JWT settings'
	Principal   *auth.Principal `json:"p,omitempty"` // JWT principals
	Expires     int64           `json:"e"`
	CSRF        string          `json:"c"`
}

// Manager issues and verifies sessions.
type Manager struct {
	key   []byte
	ttl   time.Duration
	authn *auth.Authenticator
	now   func() time.Time
}

// New is a Manager signing with key (at least 32 bytes; share it between
// coordinators so that each verifies the others' sessions), whose sessions
// last ttl (0: DefaultTTL), checking auth-file principals against authn.
func New(key []byte, ttl time.Duration, authn *auth.Authenticator) (*Manager, error) {
	if len(key) < minKey {
		return nil, fmt.Errorf("the session key has %d bytes, fewer than %d", len(key), minKey)
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Manager{key: deriveKey(key), ttl: ttl, authn: authn, now: time.Now}, nil
}

// deriveKey separates the session key from other uses of the same secret
// (coordinators may sign sessions with their forward key).
func deriveKey(key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("sluice-console-session-v1"))
	return m.Sum(nil)
}

// RandomKey is a fresh key, for a coordinator given none: its sessions
// then verify on itself only, and end when it restarts.
func RandomKey() []byte {
	k := make([]byte, minKey)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return k
}

// TTL is how long a session lasts.
func (m *Manager) TTL() time.Duration { return m.ttl }

// Issue signs p in: it sets the session cookie on w and returns the
// session. A JWT's session ends when the token does, if that is sooner.
func (m *Manager) Issue(w http.ResponseWriter, r *http.Request, p *auth.Principal) (*Session, error) {
	now := m.now()
	pl := payload{Via: p.Via, Name: p.Name, Expires: now.Add(m.ttl).Unix(), CSRF: randomToken()}
	switch p.Via {
	case auth.ViaBasic, auth.ViaToken:
		// The fingerprint of the entry that checked the credentials, not
		// of a look-up now: a change of the file in between ends the
		// session at once instead of blessing the old credentials.
		if pl.Fingerprint = p.Fingerprint(); pl.Fingerprint == "" {
			return nil, fmt.Errorf("%s is not in the auth file", p.Kind())
		}
	case auth.ViaJWT:
		pl.Principal = p
		pl.Fingerprint = p.Fingerprint()
		if exp := p.Expires(); !exp.IsZero() && exp.Unix() < pl.Expires {
			pl.Expires = exp.Unix()
		}
	default:
		return nil, fmt.Errorf("a session cannot be opened for %s: sign in with a password, a token or a JWT", p.Kind())
	}
	data, _ := json.Marshal(pl) // always marshals
	value := base64.RawURLEncoding.EncodeToString(data)
	value += "." + m.mac(value)
	expires := time.Unix(pl.Expires, 0)
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: value, Path: "/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	return &Session{Principal: p, Expires: expires, CSRF: pl.CSRF}, nil
}

// Clear ends the browser's session: the cookie is overwritten, expired.
func (m *Manager) Clear(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}

// ErrNoSession is Read's answer to a request without a session cookie.
var ErrNoSession = errors.New("no session")

// Read verifies r's session cookie. The error says why a cookie is not
// taken (ErrNoSession: there is none).
func (m *Manager) Read(r *http.Request) (*Session, error) {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return nil, ErrNoSession
	}
	value, sig, ok := strings.Cut(c.Value, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(m.mac(value))) {
		return nil, errors.New("the session does not verify: sign in again")
	}
	data, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil {
		return nil, fmt.Errorf("the session does not decode: %w", err)
	}
	var pl payload
	if err := json.Unmarshal(data, &pl); err != nil {
		return nil, fmt.Errorf("the session does not parse: %w", err)
	}
	expires := time.Unix(pl.Expires, 0)
	if !m.now().Before(expires) {
		return nil, errors.New("the session has expired: sign in again")
	}
	s := &Session{Expires: expires, CSRF: pl.CSRF}
	switch pl.Via {
	case auth.ViaBasic, auth.ViaToken:
		p, fp, ok := m.authn.Lookup(pl.Via, pl.Name)
		if !ok || !hmac.Equal([]byte(fp), []byte(pl.Fingerprint)) {
			return nil, fmt.Errorf("the session of %s was revoked: the auth file changed its entry: sign in again", (&auth.Principal{Name: pl.Name, Via: pl.Via}).Kind())
		}
		s.Principal = p
	case auth.ViaJWT:
		if pl.Principal == nil {
			return nil, errors.New("the session names no principal: sign in again")
		}
		if fp := m.authn.JWTFingerprint(); fp == "" || !hmac.Equal([]byte(fp), []byte(pl.Fingerprint)) {
			return nil, fmt.Errorf("the session of %s was revoked: this coordinator takes JWTs no more, or under other settings: sign in again", pl.Principal.Kind())
		}
		s.Principal = pl.Principal
	default:
		return nil, errors.New("the session names no principal: sign in again")
	}
	return s, nil
}

// CheckCSRF refuses a write (any method but GET, HEAD and OPTIONS) of r
// that does not carry s's CSRF token.
func (s *Session) CheckCSRF(r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	got := r.Header.Get(CSRFHeader)
	if got == "" {
		return fmt.Errorf("a write with a session cookie must carry the session's CSRF token in %s", CSRFHeader)
	}
	if !hmac.Equal([]byte(got), []byte(s.CSRF)) {
		return fmt.Errorf("the %s header does not match the session's CSRF token: reload the console", CSRFHeader)
	}
	return nil
}

func (m *Manager) mac(value string) string {
	h := hmac.New(sha256.New, m.key)
	h.Write([]byte(value))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

func randomToken() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}
