package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"

	"golang.org/x/crypto/bcrypt"
)

// HashPassword is the bcrypt hash of password, for an auth file's
// password_bcrypt.
func HashPassword(password []byte) (string, error) {
	if len(password) == 0 {
		return "", fmt.Errorf("the password is empty")
	}
	h, err := bcrypt.GenerateFromPassword(password, bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("hash the password: %w", err)
	}
	return string(h), nil
}

// TokenPrefix starts every token NewToken makes, so that a leaked one is
// recognisable (and never taken for a JWT, which has dots).
const TokenPrefix = "sluice_"

// NewToken makes a random bearer token (256 bits) and its hash for an auth
// file's token_sha256.
func NewToken() (token, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("make a token: %w", err)
	}
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return token, TokenHash(token), nil
}

// TokenHash is the SHA-256 of token in lower-case hex. Tokens are random
// and long, so a fast hash stores them safely (no password to guess).
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// AdminCredential is the credential WriteAdminFile made.
type AdminCredential struct {
	User     string
	Password string
	Token    string
}

// WriteAdminFile writes an auth file at path (mode 0600) with one principal
// named user holding the admin role, both as an HTTP Basic user with a
// generated password and as a bearer token, and returns the credential.
// sluice dev --secure uses it.
func WriteAdminFile(path, user string) (AdminCredential, error) {
	pw := make([]byte, 18)
	if _, err := rand.Read(pw); err != nil {
		return AdminCredential{}, fmt.Errorf("make a password: %w", err)
	}
	cred := AdminCredential{User: user, Password: base64.RawURLEncoding.EncodeToString(pw)}
	hash, err := HashPassword([]byte(cred.Password))
	if err != nil {
		return cred, err
	}
	token, tokenHash, err := NewToken()
	if err != nil {
		return cred, err
	}
	cred.Token = token
	data := fmt.Sprintf("# Written by sluice: one admin principal with a generated password and token.\nprincipals:\n  - name: %q\n    password_bcrypt: %q\n    token_sha256: %q\n    grants:\n      - role: admin\n", user, hash, tokenHash)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		return cred, fmt.Errorf("write auth file: %w", err)
	}
	return cred, nil
}

// CheckAdminFile reports why the auth file at path does not let cred in as
// an admin over every connector, both by its password (HTTP Basic) and by
// its token (bearer); nil when it does. sluice dev --secure keeps the
// credential of an earlier run only while its auth file still takes it.
func CheckAdminFile(path string, cred AdminCredential) error {
	f, err := LoadFile(path)
	if err != nil {
		return err
	}
	for i := range f.Entries {
		e := &f.Entries[i]
		if e.Name != cred.User {
			continue
		}
		switch {
		case len(e.PasswordHash) == 0 || bcrypt.CompareHashAndPassword(e.PasswordHash, []byte(cred.Password)) != nil:
			return fmt.Errorf("auth file %s: principal %q: the password does not match", path, cred.User)
		case e.TokenHash == "" || e.TokenHash != TokenHash(cred.Token):
			return fmt.Errorf("auth file %s: principal %q: the token does not match", path, cred.User)
		case !e.principal(ViaBasic).Unrestricted(RoleAdmin):
			return fmt.Errorf("auth file %s: principal %q is not an admin over every connector", path, cred.User)
		}
		return nil
	}
	return fmt.Errorf("auth file %s: no principal %q", path, cred.User)
}
