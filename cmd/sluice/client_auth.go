package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/contexts"
	"github.com/sluice-io/sluice/cmd/sluice/internal/restclient"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/shared/secretfile"
)

const defaultURL = "http://127.0.0.1:8083"

// clientFlags are the flags of the commands that call the REST API: how to
// reach and authenticate to it, and -o, whose default is table.
func clientFlags() []cli.Flag {
	return clientFlagsOutput("table")
}

// clientFlagsOutput are clientFlags with -o defaulting to format. They are
// made anew for every command: urfave/cli keeps a value read from the
// environment in the flag itself, which a flag shared by several commands
// (or several runs of the app, in tests) would carry over.
func clientFlagsOutput(format string) []cli.Flag {
	return []cli.Flag{
		stringFlag("url", defaultURL, "coordinator REST URL (host:port or http[s]://host:port; without a scheme: http, https with --ca)"),
		stringFlag("user", "", "HTTP Basic user (its password from --password-file)"),
		stringFlag("password-file", "", "file holding the --user's password"),
		stringFlag("token-file", "", "file holding a bearer token or JWT"),
		stringFlag("ca", "", "PEM CAs that verify the coordinator's HTTPS certificate (default: the system's)"),
		stringFlag("context", "", "use this context of the CLI config (sluice config get-contexts) instead of the current one"),
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: format, Usage: "output format: table, json or yaml", EnvVars: env("output")},
	}
}

// conn is how to reach and authenticate to one Sluice, resolved from, in
// this order, the flags, their SLUICE_* variables, the context, and the
// defaults.
type conn struct {
	contexts.Context
}

// resolveConn resolves the connection settings of a client command.
func resolveConn(c *cli.Context) (conn, error) {
	var ctx contexts.Context
	name := c.String("context")
	path, err := contexts.Path()
	if err != nil && name != "" {
		return conn{}, err
	}
	if err == nil {
		f, err := contexts.Load(path)
		if err != nil {
			return conn{}, err
		}
		if name == "" {
			name = f.CurrentContext
		}
		if name != "" {
			if ctx, err = f.Get(name); err != nil {
				return conn{}, err
			}
		}
	}
	pick := func(flag, fromContext string) string {
		if c.IsSet(flag) || fromContext == "" {
			return c.String(flag)
		}
		return fromContext
	}
	return conn{contexts.Context{
		URL:          pick("url", ctx.URL),
		User:         pick("user", ctx.User),
		PasswordFile: pick("password-file", ctx.PasswordFile),
		TokenFile:    pick("token-file", ctx.TokenFile),
		CA:           pick("ca", ctx.CA),
	}}, nil
}

// newClient is the REST client of a client command.
func newClient(c *cli.Context) (*restclient.Client, error) {
	cn, err := resolveConn(c)
	if err != nil {
		return nil, err
	}
	base, err := restclient.NormalizeURL(cn.URL, cn.CA != "")
	if err != nil {
		return nil, usageError{err}
	}
	hc, err := restHTTPClient(cn.CA)
	if err != nil {
		return nil, err
	}
	return &restclient.Client{Base: base, HTTP: hc, Authorize: func(r *http.Request) error { return authorizeRequest(cn, r) }}, nil
}

// readSecret reads the one-line secret file of a client flag.
func readSecret(flag, path string) (string, error) {
	s, err := secretfile.Read(path)
	switch {
	case errors.Is(err, secretfile.ErrEmpty), errors.Is(err, secretfile.ErrMultiline):
		return "", fmt.Errorf("--%s %s: the file is %w", flag, path, err)
	case err != nil:
		return "", fmt.Errorf("--%s: %w", flag, err)
	}
	return s, nil
}

// authorizeRequest puts the configured credentials on req.
func authorizeRequest(cn conn, req *http.Request) error {
	switch {
	case cn.User != "" && cn.TokenFile != "":
		return usageError{fmt.Errorf("give --user or --token-file, not both")}
	case cn.User != "":
		if cn.PasswordFile == "" {
			return usageError{fmt.Errorf("--user needs --password-file")}
		}
		pw, err := readSecret("password-file", cn.PasswordFile)
		if err != nil {
			return err
		}
		req.SetBasicAuth(cn.User, pw)
	case cn.TokenFile != "":
		token, err := readSecret("token-file", cn.TokenFile)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return nil
}

// restHTTPClient is the HTTP client of the REST commands, trusting ca.
func restHTTPClient(ca string) (*http.Client, error) {
	client := &http.Client{Timeout: 2 * time.Minute}
	if ca != "" {
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
