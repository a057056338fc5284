package integration

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

// TestRESTJWT runs a cluster that takes JWTs of an identity provider whose
// JWKS is served on loopback: a token's roles claim grants what it says,
// patterns included, and an expired or wrong-audience token is a 401 that
// says why.
func TestRESTJWT(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	jwks, _ := json.Marshal(map[string]any{"keys": []any{map[string]string{"kty": "RSA", "kid": "k1", "use": "sig",
		"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())}}})
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(jwks) }))
	t.Cleanup(idp.Close)
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, RESTSecurity: coordinator.RESTSecurity{
		JWKS: idp.URL, JWTIssuer: "https://idp.test", JWTAudience: "sluice", JWTRolesClaim: "sluice_roles"}})
	token := func(exp time.Duration, aud string, roles ...any) []string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "svc-team-a", "iss": "https://idp.test", "aud": aud,
			"exp": time.Now().Add(exp).Unix(), "sluice_roles": roles})
		tok.Header["kid"] = "k1"
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return []string{"Authorization", "Bearer " + s}
	}
	teamA := token(time.Hour, "sluice", "operator:team-a-*", "viewer")
	cfg := generatorCfg(c.Name("t"))
	if r := sluicetest.DoWith(t, c.URL, "POST", "/connectors", map[string]any{"name": "team-a-" + c.Name("g"), "config": cfg}, teamA...); r.Status != 201 {
		t.Fatalf("create as team a: %s", r)
	}
	r := sluicetest.DoWith(t, c.URL, "POST", "/connectors", map[string]any{"name": c.Name("g"), "config": cfg}, teamA...)
	if r.Status != 403 || !strings.Contains(r.Message(), "JWT subject svc-team-a may not POST /connectors") {
		t.Fatalf("create another team's as team a: %s", r)
	}
	if r := sluicetest.DoWith(t, c.URL, "GET", "/connectors", nil, teamA...); r.Status != 200 {
		t.Fatalf("list as team a: %s", r)
	}
	for what, tt := range map[string]struct {
		headers []string
		want    string
	}{
		"expired":        {token(-time.Hour, "sluice", "admin"), "the JWT has expired"},
		"wrong audience": {token(time.Hour, "other", "admin"), "audience is not the one configured"},
	} {
		r := sluicetest.DoWith(t, c.URL, "GET", "/connectors", nil, tt.headers...)
		if r.Status != 401 || !strings.Contains(r.Message(), tt.want) || !strings.Contains(r.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s token: %s (WWW-Authenticate %q), want 401 saying %q", what, r, r.Header.Get("WWW-Authenticate"), tt.want)
		}
	}
}
