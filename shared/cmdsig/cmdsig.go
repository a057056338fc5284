// Package cmdsig signs and checks the commands a leader sends to agents.
// The leader makes a key pair for each term it leads and puts the public
// half in its lease (wire.LeaderLease.Key); an agent checks every command
// against the key of the lease of the command's term, so a command from
// anyone who merely can publish on an agent's subject — a client of an
// unsecured NATS server, a deposed or forged leader — is refused.
package cmdsig

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/sluice-io/sluice/shared/wire"
)

// Key is a leader's private key of one term.
type Key struct {
	priv ed25519.PrivateKey
}

// NewKey makes a key pair from the system's secure random source.
func NewKey() (*Key, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make a command signing key: %w", err)
	}
	return &Key{priv: priv}, nil
}

// Public is the public half, as a lease carries it.
func (k *Key) Public() string {
	return base64.StdEncoding.EncodeToString(k.priv.Public().(ed25519.PublicKey))
}

// Sign returns the value of wire.SignatureHeader for body sent on subject.
// Its signature matches natsrpc.Signer.
func (k *Key) Sign(subject string, body []byte) (string, error) {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(k.priv, wire.SignedCommand(subject, body))), nil
}

// Verify checks sig, a wire.SignatureHeader value, of body sent on subject
// against public, a lease's key.
func Verify(public, subject string, body []byte, sig string) error {
	if public == "" {
		return errors.New("the leader lease names no command signing key")
	}
	pub, err := base64.StdEncoding.DecodeString(public)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return errors.New("the leader lease's command signing key is malformed")
	}
	if sig == "" {
		return errors.New("the command is not signed")
	}
	raw, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || len(raw) != ed25519.SignatureSize {
		return errors.New("the command's signature is malformed")
	}
	if !ed25519.Verify(ed25519.PublicKey(pub), wire.SignedCommand(subject, body), raw) {
		return errors.New("the command's signature does not match the leader lease's key")
	}
	return nil
}
