package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sluice-io/sluice/shared/secretfile"
)

// IdentityHeader carries the identity a follower forwards with a write, as
// <payload>.<HMAC-SHA256 of it under the forward key>, both base64url. The
// payload binds the principal to the request's method, URI and time, so a
// captured header cannot be replayed on another request or much later.
const IdentityHeader = "X-Sluice-Forwarded-Identity"

// forwardSkew is how far a forwarded identity's time may be from the
// receiver's clock: coordinators' clocks must agree within it.
const forwardSkew = time.Minute

// minForwardKey is the shortest forward key taken, in bytes.
const minForwardKey = 32

// ForwardKey signs and verifies forwarded identities. Only coordinators
// hold it.
type ForwardKey struct{ key []byte }

// LoadForwardKey reads a forward key file: at least 32 bytes (surrounding
// white space is not part of the key), e.g. `openssl rand -hex 32`.
func LoadForwardKey(path string) (*ForwardKey, error) {
	key, err := secretfile.Key(path, minForwardKey)
	var short *secretfile.ShortKeyError
	switch {
	case errors.As(err, &short):
		return nil, fmt.Errorf("forward key file %s: %w", path, err)
	case err != nil:
		return nil, fmt.Errorf("forward key file: %w", err)
	}
	return &ForwardKey{key: key}, nil
}

// NewForwardKey is a ForwardKey of key's bytes, for tests and embedders.
func NewForwardKey(key []byte) (*ForwardKey, error) {
	if len(key) < minForwardKey {
		return nil, fmt.Errorf("the forward key has %d bytes, fewer than %d", len(key), minForwardKey)
	}
	return &ForwardKey{key: bytes.Clone(key)}, nil
}

// Derive is a key for another use of the same shared secret (e.g. console
// sessions), apart from the forward key itself: HMAC-SHA256 of label.
func (k *ForwardKey) Derive(label string) []byte {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte("sluice-derive-v1\n" + label))
	return m.Sum(nil)
}

type forwardPayload struct {
	Principal *Principal `json:"p"`
	Method    string     `json:"m"`
	URI       string     `json:"u"`
	Time      int64      `json:"t"`
}

func (k *ForwardKey) mac(payload string) string {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte("sluice-forward-v1\n"))
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Sign is the IdentityHeader value for p (nil: no authenticated caller)
// sending method uri at now.
func (k *ForwardKey) Sign(p *Principal, method, uri string, now time.Time) string {
	data, _ := json.Marshal(forwardPayload{Principal: p, Method: method, URI: uri, Time: now.Unix()}) // always marshals
	payload := base64.RawURLEncoding.EncodeToString(data)
	return payload + "." + k.mac(payload)
}

// Forwarded reports, before r is served, whether it carries an identity
// that verifies under k: a forward from another coordinator, which no
// client can forge. A nil key verifies nothing.
func (k *ForwardKey) Forwarded(r *http.Request) bool {
	h := r.Header.Get(IdentityHeader)
	if k == nil || h == "" {
		return false
	}
	_, err := k.Verify(h, r.Method, r.URL.RequestURI(), time.Now())
	return err == nil
}

// Verify checks an IdentityHeader value for a request of method and uri
// received at now, and returns the principal it carries (nil: none).
func (k *ForwardKey) Verify(value, method, uri string, now time.Time) (*Principal, error) {
	payload, sig, ok := strings.Cut(value, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(k.mac(payload))) {
		return nil, errors.New("its signature does not verify with the forward key")
	}
	data, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return nil, fmt.Errorf("its payload is not base64url: %w", err)
	}
	var p forwardPayload
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("its payload does not parse: %w", err)
	}
	if p.Method != method || p.URI != uri {
		return nil, fmt.Errorf("it was signed for %s %s, not this request", p.Method, p.URI)
	}
	if d := now.Sub(time.Unix(p.Time, 0)); d > forwardSkew || d < -forwardSkew {
		return nil, fmt.Errorf("it was signed %s from now, more than the %s allowed", d.Round(time.Second), forwardSkew)
	}
	return p.Principal, nil
}
