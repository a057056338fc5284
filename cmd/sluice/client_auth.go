package main

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/coordinator"
)

// The REST client's credential flags.
var (
	clientUserFlag     = stringFlag("user", "", "HTTP Basic user (its password from --password-file)")
	clientPasswordFlag = stringFlag("password-file", "", "file holding the --user's password")
	clientTokenFlag    = stringFlag("token-file", "", "file holding a bearer token or JWT")
	clientCAFlag       = stringFlag("ca", "", "PEM CAs that verify the coordinator's HTTPS certificate (default: the system's)")
)

// clientFlags are the flags of the commands that call the REST API.
func clientFlags() []cli.Flag {
	return []cli.Flag{urlFlag, clientUserFlag, clientPasswordFlag, clientTokenFlag, clientCAFlag}
}

// readSecret reads a secret file; surrounding white space (a final
// newline) is not part of the secret.
func readSecret(flag, path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--%s: %w", flag, err)
	}
	s := strings.TrimSpace(string(data))
	if s == "" {
		return "", fmt.Errorf("--%s %s: the file is empty", flag, path)
	}
	return s, nil
}

// authorizeRequest puts the configured credentials on req.
func authorizeRequest(c *cli.Context, req *http.Request) error {
	user, tokenFile := c.String("user"), c.String("token-file")
	switch {
	case user != "" && tokenFile != "":
		return fmt.Errorf("give --user or --token-file, not both")
	case user != "":
		if c.String("password-file") == "" {
			return fmt.Errorf("--user needs --password-file")
		}
		pw, err := readSecret("password-file", c.String("password-file"))
		if err != nil {
			return err
		}
		req.SetBasicAuth(user, pw)
	case tokenFile != "":
		token, err := readSecret("token-file", tokenFile)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return nil
}

// restClient is the HTTP client of the REST commands, trusting --ca.
func restClient(c *cli.Context) (*http.Client, error) {
	client := &http.Client{Timeout: 2 * time.Minute}
	if ca := c.String("ca"); ca != "" {
		pool, err := coordinator.LoadCertPool("--ca", ca)
		if err != nil {
			return nil, err
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		client.Transport = tr
	}
	return client, nil
}
