// Package leasetrust pins the leader's identity out of band. Coordinators
// hold a leader key (--leader-key-file) and sign the lease with it; every
// process is given the public halves it trusts (--leader-trusted-keys-file,
// two during a rotation) and ignores a lease no trusted key signed. Whoever
// can merely write the lease bucket — any client of a NATS server left open
// — then cannot lead: agents do not take its term or its command key, and
// followers do not forward a request, or a caller's credentials, to its URL.
//
// A Trust with no keys trusts every lease: the mode of a NATS whose
// permissions alone keep the bucket to coordinators, or of --insecure-nats.
package leasetrust

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sluice-io/sluice/shared/secretfile"
	"github.com/sluice-io/sluice/shared/wire"
)

// MinKeyBytes is the shortest leader key file accepted: 32 bytes, as
// `openssl rand -hex 32` writes 64.
const MinKeyBytes = 32

// Signer is a coordinator's leader key.
type Signer struct {
	priv ed25519.PrivateKey
}

// NewSigner makes a signer from secret key material of at least
// MinKeyBytes bytes; the ed25519 seed is its SHA-256, so any strong random
// text (hex, base64, raw) serves as a key file.
func NewSigner(material []byte) (*Signer, error) {
	material = bytes.TrimSpace(material)
	if len(material) < MinKeyBytes {
		return nil, &secretfile.ShortKeyError{Got: len(material), Min: MinKeyBytes}
	}
	seed := sha256.Sum256(material)
	return &Signer{priv: ed25519.NewKeyFromSeed(seed[:])}, nil
}

// ReadSigner reads a leader key file.
func ReadSigner(path string) (*Signer, error) {
	material, err := secretfile.Key(path, MinKeyBytes)
	if err != nil {
		return nil, fmt.Errorf("leader key file %s: %w", path, err)
	}
	return NewSigner(material)
}

// Public is the public half, as a trusted keys file lists it.
func (s *Signer) Public() string {
	return base64.StdEncoding.EncodeToString(s.priv.Public().(ed25519.PublicKey))
}

// Sign stamps l with its signature for the cluster groupID.
func (s *Signer) Sign(groupID string, l *wire.LeaderLease) {
	l.Sig = base64.StdEncoding.EncodeToString(ed25519.Sign(s.priv, wire.LeaseSigned(groupID, *l)))
}

// Trust is the set of leader keys a process accepts.
type Trust struct {
	keys []ed25519.PublicKey
}

// ErrUntrusted is wrapped by Verify's refusals.
var ErrUntrusted = errors.New("the leader lease is not signed by a pinned leader key")

// NewTrust trusts the given public keys (base64, as Signer.Public gives
// them).
func NewTrust(public ...string) (*Trust, error) {
	t := &Trust{}
	for _, p := range public {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(p))
		if err != nil || len(raw) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("leader public key %q: not base64 of a 32-byte ed25519 public key", p)
		}
		if !t.has(raw) {
			t.keys = append(t.keys, ed25519.PublicKey(raw))
		}
	}
	return t, nil
}

// ReadTrust reads a trusted keys file: one base64 public key a line, blank
// lines and lines starting with # ignored. A file that lists no key is an
// error: it would trust any lease.
func ReadTrust(path string) (*Trust, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("leader trusted keys file: %w", err)
	}
	var keys []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, err := NewTrust(line); err != nil {
			return nil, fmt.Errorf("leader trusted keys file %s: line %d: %w", path, n, err)
		}
		keys = append(keys, line)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("leader trusted keys file %s: no key in it (one base64 public key a line, as `sluice leader-key public` prints)", path)
	}
	return NewTrust(keys...)
}

// With returns a trust that also accepts s's key: a coordinator always
// trusts the key it signs with.
func (t *Trust) With(s *Signer) *Trust {
	out := &Trust{}
	if t != nil {
		out.keys = append(out.keys, t.keys...)
	}
	if s != nil {
		if pub := s.priv.Public().(ed25519.PublicKey); !out.has(pub) {
			out.keys = append(out.keys, pub)
		}
	}
	return out
}

// Pinned reports whether any key is pinned; without one every lease is
// trusted.
func (t *Trust) Pinned() bool { return t != nil && len(t.keys) > 0 }

// Verify accepts l, read from the bucket of cluster groupID, if a trusted
// key signed it, or if no key is pinned.
func (t *Trust) Verify(groupID string, l wire.LeaderLease) error {
	if !t.Pinned() {
		return nil
	}
	if l.Sig == "" {
		return fmt.Errorf("%w: it has no signature (held by %q at term %d)", ErrUntrusted, l.ID, l.Term)
	}
	sig, err := base64.StdEncoding.DecodeString(l.Sig)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: its signature is malformed (held by %q at term %d)", ErrUntrusted, l.ID, l.Term)
	}
	msg := wire.LeaseSigned(groupID, l)
	for _, k := range t.keys {
		if ed25519.Verify(k, msg, sig) {
			return nil
		}
	}
	return fmt.Errorf("%w: no trusted key matches its signature (held by %q at term %d)", ErrUntrusted, l.ID, l.Term)
}

func (t *Trust) has(k []byte) bool {
	for _, have := range t.keys {
		if bytes.Equal(have, k) {
			return true
		}
	}
	return false
}

// WriteKey writes a new leader key — 32 bytes from the system's secure
// random source, in hex — to path, which must not exist (mode 0600), and
// returns its signer.
func WriteKey(path string) (*Signer, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("leader key: %w", err)
	}
	material := []byte(hex.EncodeToString(secret))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("leader key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("leader key: %w", err)
	}
	_, werr := f.Write(append(material, '\n'))
	if err := errors.Join(werr, f.Close()); err != nil {
		return nil, fmt.Errorf("leader key %s: %w", path, err)
	}
	return NewSigner(material)
}

// WriteTrusted writes a trusted keys file listing the public halves of
// signers, replacing path.
func WriteTrusted(path string, signers ...*Signer) error {
	var b strings.Builder
	for _, s := range signers {
		b.WriteString(s.Public() + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("leader trusted keys: %w", err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("leader trusted keys: %w", err)
	}
	return nil
}
