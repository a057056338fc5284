package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// jwk is one key of a JWKS document (RFC 7517): RSA and EC public keys.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWKS returns the signing keys of a JWKS document by kid. Keys of
// another type, or for encryption only, are skipped: an identity provider
// may publish them beside its signing keys.
func parseJWKS(data []byte) (map[string]crypto.PublicKey, error) {
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a JWKS document: %w", err)
	}
	keys := map[string]crypto.PublicKey{}
	for i, k := range doc.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		var key crypto.PublicKey
		var err error
		switch k.Kty {
		case "RSA":
			key, err = rsaKey(k)
		case "EC":
			key, err = ecKey(k)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("key %d (kid %q): %w", i, k.Kid, err)
		}
		keys[k.Kid] = key
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no RSA or EC signing key in the JWKS document")
	}
	return keys, nil
}

func b64int(field, s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("field %s is not base64url", field)
	}
	return new(big.Int).SetBytes(b), nil
}

func rsaKey(k jwk) (crypto.PublicKey, error) {
	n, err := b64int("n", k.N)
	if err != nil {
		return nil, err
	}
	e, err := b64int("e", k.E)
	if err != nil {
		return nil, err
	}
	if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31 {
		return nil, fmt.Errorf("field e is no RSA exponent")
	}
	if n.BitLen() < 2048 {
		return nil, fmt.Errorf("RSA key of %d bits, fewer than 2048", n.BitLen())
	}
	return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
}

func ecKey(k jwk) (crypto.PublicKey, error) {
	var curve elliptic.Curve
	switch k.Crv {
	case "P-256":
		curve = elliptic.P256()
	case "P-384":
		curve = elliptic.P384()
	case "P-521":
		curve = elliptic.P521()
	default:
		return nil, fmt.Errorf("unsupported curve %q", k.Crv)
	}
	x, err := b64int("x", k.X)
	if err != nil {
		return nil, err
	}
	y, err := b64int("y", k.Y)
	if err != nil {
		return nil, err
	}
	size := (curve.Params().BitSize + 7) / 8
	// The uncompressed point form, which ecdsa.ParseUncompressedPublicKey
	// checks is on the curve.
	point := make([]byte, 1+2*size)
	point[0] = 4
	x.FillBytes(point[1 : 1+size])
	y.FillBytes(point[1+size:])
	key, err := ecdsa.ParseUncompressedPublicKey(curve, point)
	if err != nil {
		return nil, fmt.Errorf("EC point: %w", err)
	}
	return key, nil
}

// keySet is a JWKS read from a file once, or from a URL at start and again
// when a token names a kid it does not hold (an identity provider rotated
// its keys), at most once per refreshEvery.
type keySet struct {
	source string
	client *http.Client

	mu      sync.Mutex
	keys    map[string]crypto.PublicKey
	fetched time.Time
}

const refreshEvery = 30 * time.Second

// newKeySet loads the JWKS at source, a file path or an http(s) URL.
func newKeySet(ctx context.Context, source string, client *http.Client) (*keySet, error) {
	ks := &keySet{source: source, client: client}
	keys, err := ks.load(ctx)
	if err != nil {
		return nil, fmt.Errorf("JWKS %s: %w", source, err)
	}
	ks.keys, ks.fetched = keys, time.Now()
	return ks, nil
}

func (ks *keySet) remote() bool {
	return strings.HasPrefix(ks.source, "https://") || strings.HasPrefix(ks.source, "http://")
}

func (ks *keySet) load(ctx context.Context) (map[string]crypto.PublicKey, error) {
	if !ks.remote() {
		data, err := os.ReadFile(ks.source)
		if err != nil {
			return nil, err
		}
		return parseJWKS(data)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.source, nil)
	if err != nil {
		return nil, err
	}
	resp, err := ks.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("answered %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	return parseJWKS(data)
}

// key is the public key of kid ("" matches a JWKS of one key).
func (ks *keySet) key(ctx context.Context, kid string) (crypto.PublicKey, error) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if k, ok := ks.find(kid); ok {
		return k, nil
	}
	if ks.remote() && time.Since(ks.fetched) >= refreshEvery {
		ks.fetched = time.Now()
		if keys, err := ks.load(ctx); err == nil {
			ks.keys = keys
			if k, ok := ks.find(kid); ok {
				return k, nil
			}
		}
	}
	return nil, fmt.Errorf("no key with kid %q in the JWKS %s", kid, ks.source)
}

func (ks *keySet) find(kid string) (crypto.PublicKey, bool) {
	if k, ok := ks.keys[kid]; ok {
		return k, true
	}
	if kid == "" && len(ks.keys) == 1 {
		for _, k := range ks.keys {
			return k, true
		}
	}
	return nil, false
}
