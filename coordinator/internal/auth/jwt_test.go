package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jwksOf is a JWKS document of the public keys, by kid.
func jwksOf(t *testing.T, keys map[string]crypto.PublicKey) []byte {
	t.Helper()
	var out []map[string]string
	for kid, k := range keys {
		switch k := k.(type) {
		case *rsa.PublicKey:
			out = append(out, map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())})
		case *ecdsa.PublicKey:
			point, err := k.Bytes() // 0x04 ‖ X ‖ Y, each of the curve's size
			if err != nil {
				t.Fatal(err)
			}
			x, y := point[1:1+len(point)/2], point[1+len(point)/2:]
			out = append(out, map[string]string{"kty": "EC", "kid": kid, "crv": k.Curve.Params().Name, "x": b64(x), "y": b64(y)})
		}
	}
	data, err := json.Marshal(map[string]any{"keys": out})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func sign(t *testing.T, method jwt.SigningMethod, kid string, key crypto.PrivateKey, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func bearer(a *Authenticator, token string) (*Principal, error) {
	r := httptest.NewRequest("GET", "/connectors", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	return a.Authenticate(r, nil)
}

// TestJWT checks JWTs signed with RSA and EC keys of a JWKS served over
// HTTP and read from a file: good ones authenticate with the roles of
// their claim; expired, wrongly signed, wrong-audience or wrong-issuer
// ones are refused saying why.
func TestJWT(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	doc := jwksOf(t, map[string]crypto.PublicKey{"r1": &rsaKey.PublicKey, "e1": &ecKey.PublicKey})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(doc) }))
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claims := func(kv ...any) jwt.MapClaims {
		c := jwt.MapClaims{"sub": "alice", "iss": "https://idp", "aud": "sluice", "exp": now.Add(time.Hour).Unix(),
			"groups": []any{"operator:team-a-*,team-c-*", "viewer", "unrelated"}}
		for i := 0; i+1 < len(kv); i += 2 {
			c[kv[i].(string)] = kv[i+1]
		}
		return c
	}
	for _, source := range []string{srv.URL, file} {
		a, err := NewAuthenticator(context.Background(), Config{JWT: &JWTConfig{JWKS: source, Issuer: "https://idp", Audience: "sluice", RolesClaim: "groups"}})
		if err != nil {
			t.Fatal(err)
		}
		wantGrants := []Grant{{Role: RoleOperator, Connectors: []string{"team-a-*", "team-c-*"}}, {Role: RoleViewer}}
		for _, tok := range []string{
			sign(t, jwt.SigningMethodRS256, "r1", rsaKey, claims()),
			// Issued a little ahead of this clock: within the leeway.
			sign(t, jwt.SigningMethodRS256, "r1", rsaKey, claims("iat", now.Add(20*time.Second).Unix())),
			sign(t, jwt.SigningMethodES256, "e1", ecKey, claims()),
		} {
			p, err := bearer(a, tok)
			if err != nil {
				t.Fatalf("%s: good token refused: %v", source, err)
			}
			if p.Name != "alice" || p.Via != ViaJWT || !reflect.DeepEqual(p.Grants, wantGrants) {
				t.Errorf("%s: principal %+v", source, p)
			}
		}
		for name, tt := range map[string]struct{ token, want string }{
			"expired":         {sign(t, jwt.SigningMethodRS256, "r1", rsaKey, claims("exp", now.Add(-time.Hour).Unix())), "the JWT has expired"},
			"wrong signature": {sign(t, jwt.SigningMethodES256, "e1", otherKey, claims()), "signature does not verify"},
			"wrong audience":  {sign(t, jwt.SigningMethodRS256, "r1", rsaKey, claims("aud", "other")), "audience is not the one configured"},
			"wrong issuer":    {sign(t, jwt.SigningMethodRS256, "r1", rsaKey, claims("iss", "https://evil")), "issuer is not the one configured"},
			"unknown kid":     {sign(t, jwt.SigningMethodRS256, "r9", rsaKey, claims()), `no key with kid "r9"`},
			"issued later":    {sign(t, jwt.SigningMethodRS256, "r1", rsaKey, claims("iat", now.Add(time.Hour).Unix())), "the JWT was issued in the future (iat)"},
			"no expiry":       {sign(t, jwt.SigningMethodRS256, "r1", rsaKey, claims("exp", nil)), "the JWT is not valid"},
			"HMAC":            {sign(t, jwt.SigningMethodHS256, "r1", []byte("secret"), claims()), "signing method HS256 is invalid"},
		} {
			_, err := bearer(a, tt.token)
			var u *Unauthenticated
			if err == nil || !strings.Contains(err.Error(), tt.want) || !asUnauth(err, &u) {
				t.Errorf("%s: %s: %v, want a refusal saying %q", source, name, err, tt.want)
			}
		}
	}
}

func asUnauth(err error, u **Unauthenticated) bool {
	v, ok := err.(*Unauthenticated)
	*u = v
	return ok
}

// TestForwardKey checks a signed identity verifies only for the request it
// was signed for, within the allowed skew, under the same key.
func TestForwardKey(t *testing.T) {
	k, err := NewForwardKey([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewForwardKey([]byte(strings.Repeat("o", 32)))
	p := &Principal{Name: "tom", Via: ViaCertificate, Grants: []Grant{{Role: RoleOperator, Connectors: []string{"team-a-*"}}}}
	now := time.Now()
	h := k.Sign(p, "PUT", "/connectors/x/pause", now)
	got, err := k.Verify(h, "PUT", "/connectors/x/pause", now.Add(10*time.Second))
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("verify: %+v, %v", got, err)
	}
	payload, _, _ := strings.Cut(h, ".")
	for name, tt := range map[string]struct {
		key                *ForwardKey
		value, method, uri string
		at                 time.Time
	}{
		"other key":    {other, h, "PUT", "/connectors/x/pause", now},
		"other path":   {k, h, "PUT", "/connectors/y/pause", now},
		"other method": {k, h, "DELETE", "/connectors/x/pause", now},
		"too late":     {k, h, "PUT", "/connectors/x/pause", now.Add(2 * time.Minute)},
		"tampered":     {k, b64([]byte(`{"p":{"name":"ada","grants":[{"role":3}]},"m":"PUT","u":"/connectors/x/pause"}`)) + h[len(payload):], "PUT", "/connectors/x/pause", now},
		"no signature": {k, payload, "PUT", "/connectors/x/pause", now},
	} {
		if _, err := tt.key.Verify(tt.value, tt.method, tt.uri, tt.at); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
}
