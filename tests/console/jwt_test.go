package console

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

// identityProvider is a JWKS of one EC key, as an identity provider
// publishes it, and the key to sign tokens with.
type identityProvider struct {
	key  *ecdsa.PrivateKey
	jwks string // the JWKS file
}

func newIdentityProvider(t testing.TB) identityProvider {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	point, err := key.PublicKey.Bytes() // 0x04 ‖ X ‖ Y
	if err != nil {
		t.Fatal(err)
	}
	n := (len(point) - 1) / 2
	enc := base64.RawURLEncoding.EncodeToString
	doc, _ := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "kid": "console-test", "use": "sig", "x": enc(point[1 : 1+n]), "y": enc(point[1+n:]),
	}}})
	file := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	return identityProvider{key: key, jwks: file}
}

// token is a JWT of subject sub with roles, ending at exp.
func (idp identityProvider) token(t testing.TB, sub string, roles []string, exp time.Time) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"sub": sub, "roles": roles, "exp": exp.Unix(), "iat": time.Now().Unix()})
	tok.Header["kid"] = "console-test"
	s, err := tok.SignedString(idp.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSignInWithJWT: a JWT of the identity provider, pasted on the token
// tab, signs its subject in with the token's roles, for no longer than the
// token lasts; a viewer's JWT shows no write button.
func TestSignInWithJWT(t *testing.T) {
	idp := newIdentityProvider(t)
	c := startClusterWith(t, sluicetest.Options{Agents: 1, RESTSecurity: coordinator.RESTSecurity{JWKS: idp.jwks}})
	exp := time.Now().Add(10 * time.Minute).Truncate(time.Second)

	p := openTab(t, c.URL)
	p.open("/ui/signin")
	p.clickButton("form", "Token or JWT")
	p.typeInto("textarea[name=token]", idp.token(t, "carol", []string{"viewer"}, exp))
	p.clickButton("form", "Sign in")
	p.waitText("#who .user", "JWT subject carol")
	p.waitJS("the home page", `location.pathname === '/ui/'`)
	var s struct {
		Expires time.Time `json:"expires"`
	}
	if err := json.Unmarshal([]byte(evalJS[string](p, `fetch('/ui/session').then(r => r.text())`)), &s); err != nil {
		p.failf("GET /ui/session: %v", err)
	}
	if !s.Expires.Equal(exp) {
		p.failf("the JWT's session ends at %v, want the token's exp %v", s.Expires, exp)
	}
	p.waitJS("the fleet home's heading", `document.querySelector('#main h1')`)
	if evalJS[bool](p, button("body", "New connector")+` !== null`) {
		p.failf("a viewer's JWT is shown New connector")
	}
}
