package coordinator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/auth"
	"github.com/sluice-io/sluice/coordinator/internal/httpapi"
	"github.com/sluice-io/sluice/coordinator/internal/session"
	"github.com/sluice-io/sluice/coordinator/internal/tenants"
	"github.com/sluice-io/sluice/shared/secretfile"
	"github.com/sluice-io/sluice/shared/tlsfiles"
)

// RESTSecurity configures HTTPS, authentication and authorization of the
// REST API (docs/security.md). The zero value is plain HTTP open to
// everyone, as before.
type RESTSecurity struct {
	// TLSCert and TLSKey are PEM files of the server's certificate (chain)
	// and key: set, the REST port takes HTTPS only.
	TLSCert string
	TLSKey  string
	// TLSClientCA is a PEM file of the CAs client certificates are verified
	// against; a verified certificate's CN or SAN names a principal of the
	// auth file (client_certificate: true). Certificates stay optional.
	TLSClientCA string
	// ForwardCA is a PEM file of the CAs a follower verifies the leader's
	// certificate against when it forwards a write (empty: the system's).
	ForwardCA string
	// AuthFile lists the principals (empty: none).
	AuthFile string
	// JWKS is a file or URL of an identity provider's keys: bearer JWTs
	// signed with them are taken, with the claims below.
	JWKS          string
	JWTIssuer     string
	JWTAudience   string
	JWTRolesClaim string
	// OpenProbes leaves GET /, GET /health, GET /readyz and GET /metrics
	// open: what probes and Prometheus scrapes call; and GET /openapi.json.
	OpenProbes bool
	// ForwardKeyFile holds the key coordinators sign forwarded identities
	// with; every coordinator of the cluster needs the same one.
	ForwardKeyFile string
	// SessionKeyFile holds the key console sessions are signed with, the
	// same on every coordinator (empty: the forward key's, else a key of
	// this process alone).
	SessionKeyFile string
	// SessionTTL is how long a console sign-in lasts (0: 8 h).
	SessionTTL time.Duration
}

// enabled reports whether callers must authenticate.
func (s RESTSecurity) enabled() bool { return s.AuthFile != "" || s.JWKS != "" }

// restSecurity is a RESTSecurity with its files read and checked.
type restSecurity struct {
	tls *tls.Config // nil: plain HTTP
	api httpapi.Security
	// authFile is the auth file as read at start: the watcher reloads it
	// when the file differs (watchAuthFile).
	authFile []byte
}

// build reads and checks every file s names; an error names the file (and
// the line, for the auth file) and what is wrong with it.
func (s RESTSecurity) build(ctx context.Context, log *slog.Logger, ts *tenants.Tenants) (restSecurity, error) {
	tenants := ts.ConnectorPatterns
	var out restSecurity
	var errs []error
	if (s.TLSCert == "") != (s.TLSKey == "") {
		errs = append(errs, errors.New("--rest-tls-cert and --rest-tls-key go together: give both or neither"))
	} else if s.TLSCert != "" {
		pair, err := tls.LoadX509KeyPair(s.TLSCert, s.TLSKey)
		if err != nil {
			errs = append(errs, fmt.Errorf("REST TLS key pair (--rest-tls-cert %s, --rest-tls-key %s): %w", s.TLSCert, s.TLSKey, err))
		}
		out.tls = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	if s.TLSClientCA != "" {
		pool, err := LoadCertPool("--rest-tls-client-ca", s.TLSClientCA)
		switch {
		case err != nil:
			errs = append(errs, err)
		case out.tls == nil:
			errs = append(errs, errors.New("--rest-tls-client-ca needs --rest-tls-cert and --rest-tls-key: client certificates come over TLS"))
		default:
			out.tls.ClientCAs, out.tls.ClientAuth = pool, tls.VerifyClientCertIfGiven
		}
	}
	forward := http.DefaultTransport.(*http.Transport).Clone()
	if s.ForwardCA != "" {
		pool, err := LoadCertPool("--rest-forward-ca", s.ForwardCA)
		if err != nil {
			errs = append(errs, err)
		}
		forward.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	out.api.ForwardTransport = forward
	out.api.OpenProbes = s.OpenProbes
	if s.ForwardKeyFile != "" {
		key, err := auth.LoadForwardKey(s.ForwardKeyFile)
		if err != nil {
			errs = append(errs, err)
		}
		out.api.ForwardKey = key
	}
	if s.enabled() {
		var cfg auth.Config
		if s.AuthFile != "" {
			f, data, err := auth.ReadFile(s.AuthFile)
			out.authFile = data
			if err == nil {
				err = f.ExpandTenants(tenants)
			}
			if err != nil {
				errs = append(errs, err)
			}
			cfg.File = f
		}
		cfg.Tenants = tenants
		if ts != nil {
			out.api.Tenancy = func(connector string) (string, bool) {
				t, ok := ts.Of(connector)
				if !ok {
					return "", false
				}
				return t.Name, true
			}
		}
		if s.JWKS != "" {
			cfg.JWT = &auth.JWTConfig{JWKS: s.JWKS, Issuer: s.JWTIssuer, Audience: s.JWTAudience, RolesClaim: s.JWTRolesClaim}
		}
		if len(errs) == 0 {
			ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			a, err := auth.NewAuthenticator(ctx, cfg)
			if err != nil {
				errs = append(errs, fmt.Errorf("--rest-jwt-jwks: %w", err))
			}
			out.api.Authenticator = a
		}
	} else if s.TLSClientCA != "" || s.JWTIssuer != "" || s.JWTAudience != "" {
		errs = append(errs, errors.New("--rest-tls-client-ca and --rest-jwt-issuer/--rest-jwt-audience map callers to roles: they need --rest-auth-file or --rest-jwt-jwks"))
	}
	if out.api.Authenticator != nil {
		m, err := s.sessions(log, out.api.Authenticator, out.api.ForwardKey)
		if err != nil {
			errs = append(errs, err)
		}
		out.api.Sessions = m
	}
	if err := errors.Join(errs...); err != nil {
		return out, err
	}
	if s.enabled() && out.tls == nil {
		log.Warn("REST authentication is on over plain HTTP: passwords and tokens cross the network in clear unless a TLS proxy is in front; set --rest-tls-cert and --rest-tls-key")
	}
	if s.TLSClientCA != "" && out.api.ForwardKey == nil {
		log.Warn("client certificates are taken but no --rest-forward-key-file is set: a caller known by its certificate cannot write through a follower (its identity is not forwarded)")
	}
	return out, nil
}

// sessions is the console's session signer: keyed by the session key
// file, else by the forward key (derived apart), else by a key of this
// process alone.
func (s RESTSecurity) sessions(log *slog.Logger, authn *auth.Authenticator, forward *auth.ForwardKey) (*session.Manager, error) {
	var key []byte
	switch {
	case s.SessionKeyFile != "":
		k, err := secretfile.Key(s.SessionKeyFile, 32)
		if err != nil {
			return nil, fmt.Errorf("--ui-session-key-file: %w", err)
		}
		key = k
	case forward != nil:
		key = forward.Derive("sluice-console-session")
	default:
		log.Warn("console sessions are signed with a key of this coordinator alone: set --ui-session-key-file (or --rest-forward-key-file) to the same key on every coordinator, so that each verifies the others' sessions and sessions outlive a restart")
		key = session.RandomKey()
	}
	return session.New(key, s.SessionTTL, authn)
}

// LoadCertPool reads a PEM file of CA certificates; flag names the setting
// it came from, for the error.
func LoadCertPool(flag, path string) (*x509.CertPool, error) {
	pool, err := tlsfiles.CertPool(path)
	switch {
	case errors.Is(err, tlsfiles.ErrNoCertificate):
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return pool, nil
}
