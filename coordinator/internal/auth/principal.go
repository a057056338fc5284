// Package auth authenticates REST callers and decides what they may do:
// principals from an auth file (HTTP Basic users with bcrypt hashes, bearer
// tokens stored as SHA-256 hashes, client-certificate names), JWTs from an
// identity provider, roles limited to connector name patterns, and the
// signed identity one coordinator forwards to another.
package auth

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
)

// Role is what a grant lets its holder do. Roles are ordered: each one may
// do everything the ones below it may.
type Role int

// The roles, least first. RoleNone is no role: it is what an unknown name
// parses to, and no grant holds it.
const (
	RoleNone Role = iota
	// RoleViewer may read: every GET.
	RoleViewer
	// RoleOperator may also create connectors, change their configs, pause,
	// resume, stop and restart them.
	RoleOperator
	// RoleAdmin may do everything: offsets changes, deletes, log levels and
	// Sluice's own endpoints too.
	RoleAdmin
)

var roleNames = map[Role]string{RoleViewer: "viewer", RoleOperator: "operator", RoleAdmin: "admin"}

// String is the role's name as the auth file and JWTs spell it.
func (r Role) String() string {
	if n, ok := roleNames[r]; ok {
		return n
	}
	return "none"
}

// ParseRole parses a role name (viewer, operator, admin; any case).
func ParseRole(s string) (Role, error) {
	for r, n := range roleNames {
		if strings.EqualFold(s, n) {
			return r, nil
		}
	}
	return RoleNone, fmt.Errorf("unknown role %q: the roles are viewer, operator and admin", s)
}

// Grant gives a role, for every connector or only for the connectors whose
// name matches one of Connectors (path.Match patterns, e.g. "team-a-*").
type Grant struct {
	Role       Role     `json:"role"`
	Connectors []string `json:"connectors,omitempty"`
	// Tenants, when set, are the tenants the grant is over: Connectors
	// then are their connector patterns, as the tenants file gives them.
	Tenants []string `json:"tenants,omitempty"`
}

// CheckPattern reports whether p is a pattern path.Match takes.
func CheckPattern(p string) error {
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("connector pattern %q: %w", p, err)
	}
	return nil
}

// covers reports whether the grant holds role for connector; connector ""
// asks for the role itself, whatever the connector (routes that name none).
// A grant over tenants holds for the connectors whose tenant — the first in
// the tenants file whose patterns match, as tenantOf finds it — is one of
// them: patterns alone would let a grant over "payments" (payments-*) reach
// "payments-eu-x", which belongs to tenant payments-eu.
func (g Grant) covers(role Role, connector string, anyConnector bool, tenantOf func(string) (string, bool)) bool {
	if g.Role < role {
		return false
	}
	if anyConnector {
		return true
	}
	if len(g.Tenants) > 0 {
		if tenantOf == nil {
			return false // no tenants known here: a grant over tenants covers nothing
		}
		t, ok := tenantOf(connector)
		return ok && slices.Contains(g.Tenants, t)
	}
	if len(g.Connectors) == 0 {
		return true
	}
	for _, p := range g.Connectors {
		if ok, _ := path.Match(p, connector); ok {
			return true
		}
	}
	return false
}

// String shows the grant as the 403 messages name it: "operator" or
// "operator for connectors team-a-*".
func (g Grant) String() string {
	if len(g.Tenants) > 0 {
		return g.Role.String() + " for tenants " + strings.Join(g.Tenants, ", ")
	}
	if len(g.Connectors) == 0 {
		return g.Role.String()
	}
	return g.Role.String() + " for connectors " + strings.Join(g.Connectors, ", ")
}

// Principal is an authenticated caller.
type Principal struct {
	// Name is the user, token, certificate or JWT subject name.
	Name string `json:"name"`
	// Via says how the caller proved it: basic, token, certificate or jwt.
	Via    string  `json:"via"`
	Grants []Grant `json:"grants"`
	// tenantOf finds a connector's tenant, for grants over tenants
	// (WithTenancy); nil: such grants cover nothing.
	tenantOf func(connector string) (string, bool)
	// expires is when the credential stops being valid (a JWT's exp);
	// zero: never. It is not forwarded: a forward is checked on its own
	// clock (forwardSkew).
	expires time.Time
	// entry is the auth file's entry the principal was authenticated
	// by (nil: a JWT or a forwarded identity), for Fingerprint.
	entry *Entry
	// jwtConfig is the fingerprint of the JWT settings a JWT principal
	// was verified under.
	jwtConfig string
}

// WithTenancy is p whose grants over tenants find a connector's tenant with
// tenantOf (the coordinator's tenants file). Every principal a request
// carries — authenticated here or forwarded — gets it.
func (p *Principal) WithTenancy(tenantOf func(connector string) (string, bool)) *Principal {
	if p == nil || tenantOf == nil {
		return p
	}
	c := *p
	c.tenantOf = tenantOf
	return &c
}

// Kind is how messages name the principal: "User alice", "Token ci", …
func (p *Principal) Kind() string {
	switch p.Via {
	case ViaToken:
		return "Token " + p.Name
	case ViaCertificate:
		return "Certificate " + p.Name
	case ViaJWT:
		return "JWT subject " + p.Name
	}
	return "User " + p.Name
}

// How a principal authenticated.
const (
	ViaBasic       = "basic"
	ViaToken       = "token"
	ViaCertificate = "certificate"
	ViaJWT         = "jwt"
)

// HasRole reports whether p holds role for some connectors at least: the
// check made before a request's body is read. Routes that name no
// connector (plugins, validate, loggers) take it as the whole check.
func (p *Principal) HasRole(role Role) bool {
	for _, g := range p.Grants {
		if g.covers(role, "", true, nil) {
			return true
		}
	}
	return false
}

// Allows reports whether p holds role for the connector named.
func (p *Principal) Allows(role Role, connector string) bool {
	for _, g := range p.Grants {
		if g.covers(role, connector, false, p.tenantOf) {
			return true
		}
	}
	return false
}

// Unrestricted reports whether p holds role for every connector: a grant
// without connector patterns or tenants. Records that name no connector (agents,
// cluster-wide operations) are shown only to such a caller.
func (p *Principal) Unrestricted(role Role) bool {
	for _, g := range p.Grants {
		if g.Role >= role && len(g.Connectors) == 0 && len(g.Tenants) == 0 {
			return true
		}
	}
	return false
}

// grantsText lists p's grants for messages: "operator for connectors
// team-a-*; viewer", or "no role".
func (p *Principal) grantsText() string {
	if len(p.Grants) == 0 {
		return "no role"
	}
	parts := make([]string, len(p.Grants))
	for i, g := range p.Grants {
		parts[i] = g.String()
	}
	return strings.Join(parts, "; ")
}

// Denied is the 403 message for p calling method path without the role, on
// the connector named (or "" for a route that names none).
func (p *Principal) Denied(method, urlPath string, role Role, connector string) string {
	what := fmt.Sprintf("the role %s is needed", role)
	if connector != "" {
		what = fmt.Sprintf("the role %s for connector %s is needed", role, connector)
	}
	return fmt.Sprintf("%s may not %s %s: %s, and %s has %s", p.Kind(), method, urlPath, what, p.Name, p.grantsText())
}

// CheckConnector is the per-connector check for an operation over several
// connectors (a selector, a rollout, a drain's moves): nil when the caller
// of ctx may act with role on connector, or the 403 message to report in
// that connector's result. Without a caller in ctx (authentication off),
// everything is allowed.
func CheckConnector(ctx context.Context, role Role, method, urlPath, connector string) error {
	st, ok := ctx.Value(stateKey{}).(*state)
	if !ok || st.principal == nil {
		return nil
	}
	if st.principal.Allows(role, connector) {
		return nil
	}
	return &DeniedError{Message: st.principal.Denied(method, urlPath, role, connector)}
}

// DeniedError is a refusal: its message says who may not do what and why.
type DeniedError struct{ Message string }

// Error implements error.
func (e *DeniedError) Error() string { return e.Message }

// state is what a request's context carries about its caller.
type state struct {
	principal *Principal // nil: authentication is off, or the route is open
	forwarded bool       // a verified forward from another coordinator
	slot      bool       // made by WithSlot, filled in by WithPrincipal
}

type stateKey struct{}

// WithPrincipal returns ctx carrying p (nil: authentication is off or the
// route is open) and whether the request is a verified forward. When ctx
// already holds a slot (WithSlot), the slot is filled in, so that the
// layer outside that made it sees the caller once the request is served.
func WithPrincipal(ctx context.Context, p *Principal, forwarded bool) context.Context {
	if st, ok := ctx.Value(stateKey{}).(*state); ok && st.slot {
		st.principal, st.forwarded = p, forwarded
		return ctx
	}
	return context.WithValue(ctx, stateKey{}, &state{principal: p, forwarded: forwarded})
}

// WithSlot returns r with an empty slot for its caller: a layer outside
// authentication (the audit trail) passes it on, and after serving reads
// PrincipalFrom and ForwardedFrom of its context — http.Request.WithContext
// inside makes new requests, whose values an outer layer would not see.
func WithSlot(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), stateKey{}, &state{slot: true}))
}

// Caller is the principal ctx carries, or nil.
func Caller(ctx context.Context) *Principal {
	if st, ok := ctx.Value(stateKey{}).(*state); ok {
		return st.principal
	}
	return nil
}

// PrincipalFrom is the name of the authenticated caller of ctx; ok is
// false when the request carried none (authentication off, an open route).
func PrincipalFrom(ctx context.Context) (name string, ok bool) {
	if p := Caller(ctx); p != nil {
		return p.Name, true
	}
	return "", false
}

// Forwarded reports whether r arrived forwarded by another coordinator,
// verified by the forward key's signature: a client cannot make it true.
// Without a forward key it is never true.
func Forwarded(r *http.Request) bool { return ForwardedFrom(r.Context()) }

// ForwardedFrom is Forwarded for the context of a request, as go-kit
// endpoints and the Service see it.
func ForwardedFrom(ctx context.Context) bool {
	st, ok := ctx.Value(stateKey{}).(*state)
	return ok && st.forwarded
}
