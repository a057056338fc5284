package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/bcrypt"
)

// Config is what an Authenticator checks callers against.
type Config struct {
	// File is the auth file (nil: none).
	File *File
	// JWT configures identity-provider tokens (nil: none).
	JWT *JWTConfig
	// Tenants returns the connector patterns of a tenant, for a JWT's
	// grants over tenants ("role:@tenant"); nil: no tenants, and such a
	// grant grants nothing. (The file's are expanded by
	// File.ExpandTenants.)
	Tenants func(name string) ([]string, bool)
}

// ExpandTenants checks the file's grants over tenants: a tenant that
// tenants does not know is an error naming the principal.
func (f *File) ExpandTenants(tenants func(string) ([]string, bool)) error {
	for i := range f.Entries {
		e := &f.Entries[i]
		for j := range e.Grants {
			if err := expandTenants(&e.Grants[j], tenants); err != nil {
				return fmt.Errorf("auth file %s: principal %q: %w", f.Path, e.Name, err)
			}
		}
	}
	return nil
}

// expandTenants checks that the tenants a grant is over exist. The grant
// then covers the connectors whose tenant is one of them
// (Principal.WithTenancy), not its tenants' name patterns.
func expandTenants(g *Grant, tenants func(string) ([]string, bool)) error {
	for _, t := range g.Tenants {
		ok := false
		if tenants != nil {
			_, ok = tenants(t)
		}
		if !ok {
			return fmt.Errorf("no tenant %q in the tenants file (--tenants-file)", t)
		}
	}
	return nil
}

// Authenticator finds who sent a request.
type Authenticator struct {
	// file holds the auth file's principals; Reload swaps them whole, so
	// a request sees the file before or after a change, never half of it.
	file atomic.Pointer[principals]
	jwt  *jwtVerifier

	// passed remembers, per user and hash, the SHA-256 of the last password that
	// matched its bcrypt hash: bcrypt is slow by design, and a client
	// sending the same Basic credentials with every request would
	// otherwise spend its cost on each.
	mu     sync.Mutex
	passed map[string][32]byte
}

// principals are an auth file's entries, indexed as requests look them up.
type principals struct {
	users  map[string]*Entry // by name, with a password hash
	tokens map[string]*Entry // by token hash
	certs  map[string]*Entry // by name, client_certificate: true
}

func index(f *File) *principals {
	t := &principals{users: map[string]*Entry{}, tokens: map[string]*Entry{}, certs: map[string]*Entry{}}
	if f == nil {
		return t
	}
	for i := range f.Entries {
		e := &f.Entries[i]
		if e.PasswordHash != nil {
			t.users[e.Name] = e
		}
		if e.TokenHash != "" {
			t.tokens[e.TokenHash] = e
		}
		if e.ClientCertificate {
			t.certs[e.Name] = e
		}
	}
	return t
}

// Reload takes f's principals (a file read again, checked, its tenants
// expanded) in place of the ones before: callers with a removed or
// changed credential are refused from the next request on, and the
// console sessions of a changed principal end (Lookup).
func (a *Authenticator) Reload(f *File) {
	a.file.Store(index(f))
	// A cached password check stands for the old hash: forget them all.
	a.mu.Lock()
	a.passed = map[string][32]byte{}
	a.mu.Unlock()
}

// NewAuthenticator builds an Authenticator; with a JWKS URL it fetches the
// keys, and fails when it cannot.
func NewAuthenticator(ctx context.Context, cfg Config) (*Authenticator, error) {
	a := &Authenticator{passed: map[string][32]byte{}}
	a.file.Store(index(cfg.File))
	if cfg.JWT != nil {
		v, err := newJWTVerifier(ctx, *cfg.JWT)
		if err != nil {
			return nil, err
		}
		v.tenants = cfg.Tenants
		v.fingerprint = cfg.JWT.fingerprint()
		a.jwt = v
	}
	return a, nil
}

// Challenge is the WWW-Authenticate values of a 401: Basic when the file
// has users, Bearer when it has tokens or JWTs are configured.
func (a *Authenticator) Challenge() []string {
	var out []string
	t := a.file.Load()
	if len(t.users) > 0 {
		out = append(out, `Basic realm="sluice", charset="UTF-8"`)
	}
	if len(t.tokens) > 0 || a.jwt != nil {
		out = append(out, `Bearer realm="sluice"`)
	}
	return out
}

// Unauthenticated is a request whose caller could not be established: a
// 401, whose message says why.
type Unauthenticated struct{ Message string }

// Error implements error.
func (e *Unauthenticated) Error() string { return e.Message }

func unauthenticated(format string, args ...any) *Unauthenticated {
	return &Unauthenticated{Message: fmt.Sprintf(format, args...)}
}

// Authenticate finds the caller of r: its Authorization header (Basic or
// Bearer) first, then a verified client certificate of cs (nil: not TLS).
func (a *Authenticator) Authenticate(r *http.Request, cs *tls.ConnectionState) (*Principal, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, cred, _ := strings.Cut(h, " ")
		switch {
		case strings.EqualFold(scheme, "Basic"):
			return a.basic(r)
		case strings.EqualFold(scheme, "Bearer"):
			return a.bearer(r.Context(), strings.TrimSpace(cred))
		default:
			return nil, unauthenticated("The Authorization scheme %q is not supported: use Basic or Bearer", scheme)
		}
	}
	if cs != nil && len(cs.VerifiedChains) > 0 {
		return a.certificate(cs.VerifiedChains[0][0])
	}
	return nil, unauthenticated("Authentication required: no credentials were sent (%s)", a.accepted())
}

// accepted lists the credentials this server takes, for a 401's message.
func (a *Authenticator) accepted() string {
	var ways []string
	t := a.file.Load()
	if len(t.users) > 0 {
		ways = append(ways, "HTTP Basic")
	}
	if len(t.tokens) > 0 {
		ways = append(ways, "a bearer token")
	}
	if a.jwt != nil {
		ways = append(ways, "a bearer JWT")
	}
	if len(t.certs) > 0 {
		ways = append(ways, "a client certificate")
	}
	if len(ways) == 0 {
		return "no principal is configured"
	}
	return "send " + strings.Join(ways, " or ")
}

func (a *Authenticator) basic(r *http.Request) (*Principal, error) {
	user, pw, ok := r.BasicAuth()
	if !ok {
		return nil, unauthenticated("The Basic credentials do not parse: expected base64 of user:password")
	}
	e, known := a.file.Load().users[user]
	if !known {
		// Spend a bcrypt comparison anyway, so that the time taken does
		// not tell unknown users from wrong passwords.
		_ = bcrypt.CompareHashAndPassword(dummyHash(), []byte(pw))
		return nil, unauthenticated("The Basic credentials were refused: unknown user %q or wrong password", user)
	}
	sum := sha256.Sum256([]byte(pw))
	// Keyed by the hash too: a check cached against a hash the file has
	// since replaced (Reload) never stands for the new one.
	key := user + "\x00" + string(e.PasswordHash)
	a.mu.Lock()
	prev, cached := a.passed[key]
	a.mu.Unlock()
	if !cached || subtle.ConstantTimeCompare(prev[:], sum[:]) != 1 {
		if bcrypt.CompareHashAndPassword(e.PasswordHash, []byte(pw)) != nil {
			return nil, unauthenticated("The Basic credentials were refused: unknown user %q or wrong password", user)
		}
		a.mu.Lock()
		a.passed[key] = sum
		a.mu.Unlock()
	}
	return e.principal(ViaBasic), nil
}

func (a *Authenticator) bearer(ctx context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, unauthenticated("The bearer token is empty")
	}
	if a.jwt != nil && strings.Count(token, ".") == 2 {
		p, err := a.jwt.verify(ctx, token)
		if err != nil {
			return nil, unauthenticated("The bearer JWT was refused: %v", err)
		}
		return p, nil
	}
	if e, ok := a.file.Load().tokens[TokenHash(token)]; ok {
		return e.principal(ViaToken), nil
	}
	if a.jwt == nil && strings.Count(token, ".") == 2 {
		return nil, unauthenticated("The bearer token looks like a JWT, but no JWKS is configured (--rest-jwt-jwks), and it is no token of the auth file")
	}
	return nil, unauthenticated("The bearer token was refused: it is no token of the auth file")
}

// certificate maps a verified client certificate to a principal by its
// subject CN, then its SANs (DNS names, email addresses, URIs), in order.
func (a *Authenticator) certificate(c *x509.Certificate) (*Principal, error) {
	names := []string{c.Subject.CommonName}
	names = append(names, c.DNSNames...)
	names = append(names, c.EmailAddresses...)
	for _, u := range c.URIs {
		names = append(names, u.String())
	}
	for _, n := range names {
		if e, ok := a.file.Load().certs[n]; ok && n != "" {
			return e.principal(ViaCertificate), nil
		}
	}
	return nil, unauthenticated("The client certificate (subject %q) names no principal of the auth file with client_certificate: true", c.Subject.String())
}

// dummyHash is a bcrypt hash of the default cost that no password given
// matches in practice (see basic).
var dummyHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("sluice: no such user"), bcrypt.DefaultCost)
	return h
})

func (e *Entry) principal(via string) *Principal {
	return &Principal{Name: e.Name, Via: via, Grants: e.Grants, entry: e}
}
