package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// JWTConfig configures bearer JWTs from an identity provider.
type JWTConfig struct {
	// JWKS is a file path or an http(s) URL of the provider's JWKS.
	JWKS string
	// Issuer and Audience, when set, must be the token's iss and one of its aud.
	Issuer   string
	Audience string
	// RolesClaim names the claim that carries the roles (default "roles"):
	// a list of strings, or one string of space-separated entries, each
	// "<role>" or "<role>:<pattern>[,<pattern>…]". Entries that name no
	// role Sluice knows are ignored: a provider puts other roles there too.
	RolesClaim string
	// Client fetches a JWKS URL (nil: a client with a 10s timeout).
	Client *http.Client
}

// DefaultRolesClaim is JWTConfig.RolesClaim's default.
const DefaultRolesClaim = "roles"

// jwtVerifier checks JWTs against a JWKS.
type jwtVerifier struct {
	keys   *keySet
	parser *jwt.Parser
	claim  string
	// tenants resolves grants over tenants (Config.Tenants).
	tenants func(string) ([]string, bool)
	// fingerprint is JWTConfig.fingerprint of the settings.
	fingerprint string
}

// The signing methods taken: asymmetric ones only, so that a public key
// can never be used as an HMAC secret ("alg confusion").
var jwtMethods = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}

func newJWTVerifier(ctx context.Context, cfg JWTConfig) (*jwtVerifier, error) {
	client := cfg.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	keys, err := newKeySet(ctx, cfg.JWKS, client)
	if err != nil {
		return nil, err
	}
	// iat is checked when present, as the docs say: jwt leaves it alone
	// unless asked, and a token issued in the future is a forged or a
	// badly clocked one.
	opts := []jwt.ParserOption{jwt.WithValidMethods(jwtMethods), jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithLeeway(30 * time.Second)}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	claim := cfg.RolesClaim
	if claim == "" {
		claim = DefaultRolesClaim
	}
	return &jwtVerifier{keys: keys, parser: jwt.NewParser(opts...), claim: claim}, nil
}

// verify checks a token and returns its principal; the error says why a
// token is refused.
func (v *jwtVerifier) verify(ctx context.Context, token string) (*Principal, error) {
	claims := jwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return v.keys.key(ctx, kid)
	})
	if err != nil {
		return nil, jwtReason(err)
	}
	sub, _ := claims["sub"].(string)
	if sub == "" {
		return nil, errors.New("the JWT has no sub claim to name its principal")
	}
	p := &Principal{Name: sub, Via: ViaJWT, Grants: rolesFromClaim(claims[v.claim], v.tenants), jwtConfig: v.fingerprint}
	if exp, err := claims.GetExpirationTime(); err == nil && exp != nil {
		p.expires = exp.Time // required by the parser: always there
	}
	return p, nil
}

// jwtReason words jwt's error for a 401 message.
func jwtReason(err error) error {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return errors.New("the JWT has expired")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		// jwt's text says which: a method not taken (e.g. HS256), or a
		// signature the key does not verify.
		return fmt.Errorf("the JWT's signature does not verify with the JWKS keys (%w)", err)
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return errors.New("the JWT's audience is not the one configured")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return errors.New("the JWT's issuer is not the one configured")
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return errors.New("the JWT is not valid yet")
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return errors.New("the JWT was issued in the future (iat), beyond the 30 s of leeway")
	}
	return fmt.Errorf("the JWT is not valid: %w", err)
}

// rolesFromClaim reads the roles claim (see JWTConfig.RolesClaim): each
// entry "role", "role:pattern,…" or "role:@tenant,…". An entry that does
// not parse, or names a tenant that tenants does not know, grants nothing
// — never everything.
func rolesFromClaim(v any, tenants func(string) ([]string, bool)) []Grant {
	var entries []string
	switch c := v.(type) {
	case string:
		entries = strings.Fields(c)
	case []any:
		for _, e := range c {
			if s, ok := e.(string); ok {
				entries = append(entries, s)
			}
		}
	}
	var grants []Grant
	for _, e := range entries {
		name, patterns, scoped := strings.Cut(e, ":")
		role, err := ParseRole(name)
		if err != nil {
			continue
		}
		g := Grant{Role: role}
		if scoped {
			ok := true
			for _, p := range strings.Split(patterns, ",") {
				if t, isTenant := strings.CutPrefix(p, "@"); isTenant && t != "" {
					g.Tenants = append(g.Tenants, t)
					continue
				}
				if p == "" || CheckPattern(p) != nil {
					ok = false
					break
				}
				g.Connectors = append(g.Connectors, p)
			}
			if g.Tenants != nil && (g.Connectors != nil || expandTenants(&g, tenants) != nil) {
				ok = false // mixed, or an unknown tenant
			}
			if !ok {
				continue // a malformed pattern grants nothing, rather than everything
			}
		}
		grants = append(grants, g)
	}
	return grants
}
