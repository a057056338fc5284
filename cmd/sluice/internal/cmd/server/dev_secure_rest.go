package server

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sluice-io/sluice/coordinator"
)

// devAdminUser is the principal sluice dev --secure generates.
const devAdminUser = "admin"

// secureDevREST is the REST half of sluice dev --secure: it writes an auth
// file with one generated admin credential into dataDir, turns REST
// authentication on in cfg with it, writes the password and token to
// files beside it (for the CLI's --password-file and --token-file) and
// prints how to use them to out. A credential from an earlier run is
// replaced: each run has a new one.
func secureDevREST(dataDir string, cfg *coordinator.Config, out io.Writer) (coordinator.AdminCredential, error) {
	dir := filepath.Join(dataDir, "rest-auth")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return coordinator.AdminCredential{}, fmt.Errorf("dev --secure: %w", err)
	}
	authFile := filepath.Join(dir, "auth.yaml")
	cred, err := coordinator.WriteAdminAuthFile(authFile, devAdminUser)
	if err != nil {
		return cred, fmt.Errorf("dev --secure: %w", err)
	}
	pwFile, tokenFile := filepath.Join(dir, "admin.password"), filepath.Join(dir, "admin.token")
	for path, secret := range map[string]string{pwFile: cred.Password, tokenFile: cred.Token} {
		if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
			return cred, fmt.Errorf("dev --secure: %w", err)
		}
	}
	cfg.RESTSecurity.AuthFile = authFile
	fmt.Fprintf(out, "REST authentication is on: user %s, password %s (in %s), bearer token in %s\n  e.g. sluice connectors --user %s --password-file %s list\n",
		cred.User, cred.Password, pwFile, tokenFile, cred.User, pwFile)
	return cred, nil
}
