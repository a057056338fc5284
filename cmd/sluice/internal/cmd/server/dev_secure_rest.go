package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sluice-io/sluice/coordinator"
)

// devAdminUser is the principal sluice dev --secure generates.
const devAdminUser = "admin"

// secureDevREST is the REST half of sluice dev --secure: it turns REST
// authentication on in cfg with an auth file in dataDir holding one admin
// credential, whose password and token are in files beside it (for the
// CLI's --password-file and --token-file), and prints how to use them to
// out. The credential is made on the data dir's first secure start and
// kept across restarts — a kcctl context or a script holding it keeps
// working — unless its files are gone or the auth file no longer takes
// it, when a new one replaces it (and out says why).
func secureDevREST(dataDir string, cfg *coordinator.Config, out io.Writer) (coordinator.AdminCredential, error) {
	dir := filepath.Join(dataDir, "rest-auth")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return coordinator.AdminCredential{}, fmt.Errorf("dev --secure: %w", err)
	}
	authFile := filepath.Join(dir, "auth.yaml")
	pwFile, tokenFile := filepath.Join(dir, "admin.password"), filepath.Join(dir, "admin.token")
	cred, err := keptDevCredential(authFile, pwFile, tokenFile)
	origin := "kept from an earlier run of this data dir"
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(out, "REST authentication: the credential in %s cannot be kept (%v): making a new one\n", dir, err)
		}
		if cred, err = newDevCredential(authFile, pwFile, tokenFile); err != nil {
			return cred, fmt.Errorf("dev --secure: %w", err)
		}
		origin = "made for this data dir"
	}
	cfg.RESTSecurity.AuthFile = authFile
	fmt.Fprintf(out, "REST authentication is on: user %s, password %s (in %s, %s), bearer token in %s\n  e.g. sluice connectors --user %s --password-file %s list\n",
		cred.User, cred.Password, pwFile, origin, tokenFile, cred.User, pwFile)
	return cred, nil
}

// keptDevCredential is the credential an earlier secure start of the data
// dir made: an error wrapping fs.ErrNotExist when there was none, another
// when its files no longer agree with each other.
func keptDevCredential(authFile, pwFile, tokenFile string) (coordinator.AdminCredential, error) {
	cred := coordinator.AdminCredential{User: devAdminUser}
	for path, secret := range map[string]*string{pwFile: &cred.Password, tokenFile: &cred.Token} {
		data, err := os.ReadFile(path)
		if err != nil {
			return cred, err
		}
		*secret = strings.TrimSpace(string(data))
	}
	if _, err := os.Stat(authFile); err != nil {
		return cred, err
	}
	return cred, coordinator.CheckAdminAuthFile(authFile, cred)
}

// newDevCredential makes a credential, writes the auth file that takes it
// and its password and token files (0600).
func newDevCredential(authFile, pwFile, tokenFile string) (coordinator.AdminCredential, error) {
	cred, err := coordinator.WriteAdminAuthFile(authFile, devAdminUser)
	if err != nil {
		return cred, err
	}
	for path, secret := range map[string]string{pwFile: cred.Password, tokenFile: cred.Token} {
		if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
			return cred, fmt.Errorf("write %s: %w", path, err)
		}
	}
	return cred, nil
}
