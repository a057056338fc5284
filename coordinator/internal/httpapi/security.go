package httpapi

// Authentication and authorization of REST calls (docs/security.md):
//
//	request ─► authenticate: a verified forward's signed identity, else
//	              credentials (Basic, bearer token or JWT, client
//	              certificate) ──none or bad──► 401 + WWW-Authenticate
//	              │   (open probes with --rest-auth-open-probes: skipped)
//	              ▼
//	           leader routing: a follower forwards a write with the
//	              caller's identity signed under the forward key
//	              ▼
//	           route: the caller holds the route's role? ──no──► 403
//	              ▼
//	           endpoint: a connector route checks the name's patterns
//	              (──no──► 403); GET /connectors lists what it may see;
//	              a call over many connectors (bulk, maintenance,
//	              rollouts) hands its service the same check as an allow
//	              function (grantCheck), asked of each connector resolved

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/auth"
	"github.com/sluice-io/sluice/coordinator/internal/session"
)

// Security configures authentication and authorization. The zero value
// turns both off: every caller may do everything, as Kafka Connect without
// a security extension.
type Security struct {
	// Authenticator finds callers (nil: no authentication).
	Authenticator *auth.Authenticator
	// ForwardKey signs the identity a follower forwards with a write, and
	// verifies it on the leader (nil: a follower forwards the caller's own
	// credentials, which the leader checks again; a client-certificate
	// caller then cannot write through a follower).
	ForwardKey *auth.ForwardKey
	// Tenancy finds a connector's tenant, for grants over tenants (nil: no
	// tenants).
	Tenancy func(connector string) (tenant string, ok bool)
	// OpenProbes leaves the probe routes (probeOps: GET /, /health,
	// /readyz, /metrics, /openapi.json) open to anyone.
	OpenProbes bool
	// ForwardTransport sends forwarded writes to the leader (nil:
	// http.DefaultTransport); with TLS it holds the CA the leader's
	// certificate is verified against.
	ForwardTransport http.RoundTripper
	// Sessions verifies the console's session cookies, taken from a
	// request that sends no Authorization header (nil: none are).
	Sessions *session.Manager
}

// WithSecurity turns on authentication and authorization.
func WithSecurity(s Security) Option {
	return func(o *options) { o.security = s }
}

// authenticate establishes the caller of every request (see the diagram
// above) and puts it in the request's context.
func authenticate(sec Security, logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, forwarded := verifiedForward(sec, logger, r)
		if p == nil && sec.Authenticator != nil && !(sec.OpenProbes && isProbe(r)) {
			var err error
			if p, err = fromSession(sec.Sessions, r); p == nil && err == nil {
				p, err = sec.Authenticator.Authenticate(r, r.TLS)
			}
			var denied *auth.DeniedError
			if errors.As(err, &denied) {
				writeError(w, forbidden(denied.Message))
				return
			}
			if err != nil {
				logger.InfoContext(r.Context(), "rest call unauthenticated", "remote", r.RemoteAddr,
					"method", r.Method, "path", r.URL.Path, "reason", err.Error())
				if !session.FromConsole(r) {
					for _, c := range sec.Authenticator.Challenge() {
						w.Header().Add("WWW-Authenticate", c)
					}
				}
				writeError(w, &api.Error{Code: api.Code(http.StatusUnauthorized), Message: err.Error()})
				return
			}
		}
		r = r.WithContext(auth.WithPrincipal(r.Context(), p.WithTenancy(sec.Tenancy), forwarded))
		if r.Header.Get(auth.IdentityHeader) != "" {
			// A forwarded identity is read here once: nothing behind
			// may take the header for anything, and a forward sets it
			// anew. (WithContext shares the header map: copy it.)
			r.Header = r.Header.Clone()
			r.Header.Del(auth.IdentityHeader)
		}
		next.ServeHTTP(w, r)
	})
}

// fromSession is the caller of a request that carries a console session
// instead of credentials: nil, nil when it carries none (or an
// Authorization header, which wins). A write must carry the session's
// CSRF token: without it the answer is a DeniedError (403).
func fromSession(m *session.Manager, r *http.Request) (*auth.Principal, error) {
	if m == nil || r.Header.Get("Authorization") != "" {
		return nil, nil
	}
	s, err := m.Read(r)
	switch {
	case errors.Is(err, session.ErrNoSession):
		return nil, nil
	case err != nil:
		return nil, &auth.Unauthenticated{Message: err.Error()}
	}
	if err := s.CheckCSRF(r); err != nil {
		return nil, &auth.DeniedError{Message: err.Error()}
	}
	return s.Principal, nil
}

// callerSlot gives every request a slot for its caller (auth.WithSlot),
// which authenticate fills in.
func callerSlot(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, auth.WithSlot(r))
	})
}

// verifiedForward is the identity a forward from another coordinator
// carries, when the forward key verifies it. A header that does not verify
// is ignored, and logged: a client may send anything.
func verifiedForward(sec Security, logger *slog.Logger, r *http.Request) (*auth.Principal, bool) {
	h := r.Header.Get(auth.IdentityHeader)
	if h == "" || sec.ForwardKey == nil {
		return nil, false
	}
	p, err := sec.ForwardKey.Verify(h, r.Method, r.URL.RequestURI(), time.Now())
	if err != nil {
		logger.WarnContext(r.Context(), "ignored a forwarded identity that does not verify", "remote", r.RemoteAddr,
			"method", r.Method, "path", r.URL.Path, "reason", err.Error())
		return nil, false
	}
	return p, true
}

// isProbe reports whether r is for one of the probe routes (probeOps).
// It runs before routing, so it matches the routes' paths itself.
func isProbe(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && probePaths[r.URL.Path]
}

// probePaths are the paths of the probe routes, from the route table.
var probePaths = func() map[string]bool {
	paths := map[string]bool{}
	for _, rt := range routes() {
		if probeOps[rt.op] {
			_, path, _ := strings.Cut(rt.pattern, " ")
			paths[strings.Replace(path, "{$}", "", 1)] = true
		}
	}
	return paths
}()

// signForward puts the caller's signed identity on a write forwarded to
// the leader.
func signForward(sec Security, in *http.Request, out *http.Request) {
	out.Header.Del(auth.IdentityHeader)
	if sec.ForwardKey != nil {
		out.Header.Set(auth.IdentityHeader, sec.ForwardKey.Sign(auth.Caller(in.Context()), out.Method, out.URL.RequestURI(), time.Now()))
	}
}

// requireRole refuses, before its body is read, a request whose caller
// holds the route's role for no connector at all.
func requireRole(rt route, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := auth.Caller(r.Context()); p != nil && !p.HasRole(rt.role) {
			writeError(w, forbidden(p.Denied(r.Method, r.URL.Path, rt.role, "")))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func forbidden(msg string) *api.Error {
	return &api.Error{Code: api.Code(http.StatusForbidden), Message: msg}
}

// authorize is the endpoint middleware of a route that acts on one
// connector: the caller's grants must cover the connector's name. On
// GET /connectors it drops from the answer the connectors the caller may
// not see. With tenants, a validate naming a connector is judged as that
// connector's (it resolves that tenant's secrets).
func authorize(rt route, tenants bool) endpoint.Middleware {
	return func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, request any) (any, error) {
			if auth.Caller(ctx) == nil {
				return next(ctx, request)
			}
			if rt.connectorScoped() {
				name, _ := connectorOf(request)
				check := grantCheck(ctx, rt.role)
				if err := check(name); err != nil {
					return nil, forbidden(err.Error())
				}
				// A move creates its target, and a restore reads another
				// connector's history: the grants must cover those too.
				for _, other := range otherConnectors(request) {
					if err := check(other); err != nil {
						return nil, forbidden(err.Error())
					}
				}
			}
			// Under tenants, a config validated under a connector's name
			// resolves that connector's tenant's secrets: the caller must
			// hold the route's role for it, as for a create. (Without
			// tenants no secret belongs to anyone, and a validate names
			// what it likes, as in Kafka Connect.)
			if v, ok := request.(validateRequest); ok && tenants && api.TrimName(v.config["name"]) != "" {
				if err := grantCheck(ctx, rt.role)(api.TrimName(v.config["name"])); err != nil {
					return nil, forbidden(err.Error())
				}
			}
			resp, err := next(ctx, request)
			if rt.op == "list_connectors" {
				resp = visibleOnly(auth.Caller(ctx), resp)
			}
			return resp, err
		}
	}
}

// connectorOf is the connector a decoded request names.
func connectorOf(request any) (string, bool) {
	switch r := request.(type) {
	case nameRequest:
		return r.name, true
	case taskRequest:
		return r.name, true
	case putConfigRequest:
		return r.name, true
	case patchConfigRequest:
		return r.name, true
	case restartRequest:
		return r.name, true
	case deleteRequest:
		return r.name, true
	case alterOffsetsRequest:
		return r.name, true
	case api.CreateConnectorRequest:
		return r.Name, true
	case previewRequest:
		return r.name, true
	case resetToRequest:
		return r.name, true
	case historyRequest:
		return r.name, true
	case historyEntryRequest:
		return r.name, true
	case undoRequest:
		return r.name, true
	case signalRequest:
		return r.name, true
	case restoreRequest:
		return r.name, true
	case moveRequest:
		return r.name, true
	case configHistoryRequest:
		return r.name, true
	case configEntryRequest:
		return r.name, true
	}
	return "", false
}

// otherConnectors are the connectors a request acts on besides the one
// its path names.
func otherConnectors(request any) []string {
	switch r := request.(type) {
	case moveRequest:
		return []string{r.req.To} // trimmed by its decoder, as the herder names it
	case restoreRequest:
		return []string{r.req.From} // trimmed by its decoder too
	}
	return nil
}

// visibleOnly is a GET /connectors answer without the connectors p may not
// see.
func visibleOnly(p *auth.Principal, resp any) any {
	switch list := resp.(type) {
	case []string:
		out := make([]string, 0, len(list))
		for _, n := range list {
			if p.Allows(auth.RoleViewer, n) {
				out = append(out, n)
			}
		}
		return out
	case map[string]api.ConnectorExpanded:
		for n := range list {
			if !p.Allows(auth.RoleViewer, n) {
				delete(list, n) // the endpoint made this map for the answer
			}
		}
	}
	return resp
}

// tlsConnKey keys the TLS connection a request arrived on in its context.
type tlsConnKey struct{}
