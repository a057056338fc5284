package coordinator

import "github.com/sluice-io/sluice/coordinator/internal/auth"

// HashPassword is the bcrypt hash of password for an auth file's
// password_bcrypt.
func HashPassword(password []byte) (string, error) { return auth.HashPassword(password) }

// NewToken makes a random bearer token and its SHA-256 hash for an auth
// file's token_sha256.
func NewToken() (token, hash string, err error) { return auth.NewToken() }

// AdminCredential is the generated credential of WriteAdminAuthFile.
type AdminCredential = auth.AdminCredential

// WriteAdminAuthFile writes an auth file at path with one admin principal
// named user, reachable by a generated password (HTTP Basic) and a
// generated bearer token, and returns both.
func WriteAdminAuthFile(path, user string) (AdminCredential, error) {
	return auth.WriteAdminFile(path, user)
}

// CheckAdminAuthFile reports why the auth file at path does not let cred
// in as an admin (by its password and by its token); nil when it does.
func CheckAdminAuthFile(path string, cred AdminCredential) error {
	return auth.CheckAdminFile(path, cred)
}
