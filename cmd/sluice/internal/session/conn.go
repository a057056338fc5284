package session

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/contexts"
	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/shared/secretfile"
)

// DefaultURL is --url's default.
const DefaultURL = "http://127.0.0.1:8083"

// Flags are the flags of the commands that call the REST API: how to
// reach and authenticate to it, and -o, whose default is table.
func Flags() []cli.Flag {
	return FlagsOutput("table")
}

// FlagsOutput are Flags with -o defaulting to format. They are made anew
// for every command: urfave/cli keeps a value read from the environment
// in the flag itself, which a flag shared by several commands (or several
// runs of the app, in tests) would carry over.
func FlagsOutput(format string) []cli.Flag {
	return []cli.Flag{
		envflag.String("url", DefaultURL, "coordinator REST URL (host:port or http[s]://host:port; without a scheme: http, https with --ca)"),
		envflag.String("user", "", "HTTP Basic user (its password from --password-file)"),
		envflag.String("password-file", "", "file holding the --user's password"),
		envflag.String("token-file", "", "file holding a bearer token or JWT"),
		envflag.String("ca", "", "PEM CAs that verify the coordinator's HTTPS certificate (default: the system's)"),
		envflag.String("context", "", "use this context of the CLI config (sluice config get-contexts) instead of the current one"),
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: format, Usage: "output format: table, json or yaml", EnvVars: envflag.Env("output")},
	}
}

// Conn is how to reach and authenticate to one Sluice.
type Conn = contexts.Context

// ResolveConn resolves the connection settings of a client command from,
// in this order, the flags, their SLUICE_* variables, the context, and
// the defaults.
func ResolveConn(c *cli.Context) (Conn, error) {
	var ctx contexts.Context
	name := c.String("context")
	path, err := contexts.Path()
	if err != nil && name != "" {
		return Conn{}, err
	}
	if err == nil {
		f, err := contexts.Load(path)
		if err != nil {
			return Conn{}, err
		}
		if name == "" {
			name = f.CurrentContext
		}
		if name != "" {
			if ctx, err = f.Get(name); err != nil {
				return Conn{}, err
			}
		}
	}
	pick := func(flag, fromContext string) string {
		if c.IsSet(flag) || fromContext == "" {
			return c.String(flag)
		}
		return fromContext
	}
	return Conn{
		URL:          pick("url", ctx.URL),
		User:         pick("user", ctx.User),
		PasswordFile: pick("password-file", ctx.PasswordFile),
		TokenFile:    pick("token-file", ctx.TokenFile),
		CA:           pick("ca", ctx.CA),
	}, nil
}

// NewClient is the typed REST client of a client command.
func NewClient(c *cli.Context) (*api.Client, error) {
	cn, err := ResolveConn(c)
	if err != nil {
		return nil, err
	}
	return ClientFor("--url", cn)
}

// cliRetry is the CLI's retry policy: a leader's failover or a
// coordinator's restart is ridden out for a second or two, and nothing
// listening is said at once rather than after the client's default
// fifteen seconds.
var cliRetry = api.RetryPolicy{MaxAttempts: 4, MinBackoff: 200 * time.Millisecond, MaxBackoff: time.Second}

// ClientFor is the typed REST client of a connection: cn.URL normalised
// (flag names it in a usage error), its CA trusted, its credentials read
// from their files.
func ClientFor(flag string, cn Conn) (*api.Client, error) {
	base, err := api.NormalizeAddress(cn.URL, cn.CA != "")
	if err != nil {
		return nil, UsageError{fmt.Errorf("%s: %w", flag, err)}
	}
	cfg := api.Config{Address: base, Retry: &cliRetry}
	switch {
	case cn.User != "" && cn.TokenFile != "":
		return nil, Usage("give --user or --token-file, not both")
	case cn.User != "":
		if cn.PasswordFile == "" {
			return nil, Usage("--user needs --password-file")
		}
		if cfg.Password, err = readSecret("password-file", cn.PasswordFile); err != nil {
			return nil, err
		}
		cfg.Username = cn.User
	case cn.TokenFile != "":
		if cfg.Token, err = readSecret("token-file", cn.TokenFile); err != nil {
			return nil, err
		}
	}
	if cfg.HTTPClient, err = HTTPClient(cn.CA); err != nil {
		return nil, err
	}
	return api.NewClient(cfg)
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

// HTTPClient is the HTTP client of the REST commands, trusting ca.
func HTTPClient(ca string) (*http.Client, error) {
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
