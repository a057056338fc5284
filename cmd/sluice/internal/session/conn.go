package session

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
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
// reach and authenticate to it, how long to wait for it (--timeout,
// --connect-timeout), and -o, whose default is table.
func Flags() []cli.Flag {
	return FlagsOutput("table")
}

// FlagsUnbounded are Flags for a command that follows work which may
// outlast --timeout's default (a rollout's batches, a migration): its
// --timeout is none unless given, and each request is bounded instead.
func FlagsUnbounded() []cli.Flag {
	return flags("table", TimeoutFlag(0))
}

// DefaultTimeout is --timeout's default: the longest a command takes, its
// --wait included; and, for a command without a limit, one request.
const DefaultTimeout = 2 * time.Minute

// DefaultConnectTimeout is --connect-timeout's default.
const DefaultConnectTimeout = 10 * time.Second

// overallTimeout is the --timeout of the connection flags: a DurationFlag
// of a type of its own, so that Open tells it from the --timeout of a
// command that has its own meaning for it (a drain's wait, a fleet roll's
// step), which a subcommand may define beneath a group's.
type overallTimeout struct{ *cli.DurationFlag }

// TimeoutFlag is --timeout, defaulting to def (0: no limit): the longest
// the whole command may take.
func TimeoutFlag(def time.Duration) cli.Flag {
	usage := "the longest the command may take, --wait included (0: no limit); a request unanswered then is exit 3, a wait not over exit 1"
	if def == 0 {
		usage = "the longest the command may take (default: no limit, each request at most " + DefaultTimeout.String() + "); a request unanswered then is exit 3"
	}
	return overallTimeout{envflag.Duration("timeout", def, usage)}
}

// FlagsOwnTimeout are Flags without --timeout, for a command whose own
// --timeout means something else.
func FlagsOwnTimeout() []cli.Flag {
	return flags("table", nil)
}

// FlagsOutput are Flags with -o defaulting to format. They are made anew
// for every command: urfave/cli keeps a value read from the environment
// in the flag itself, which a flag shared by several commands (or several
// runs of the app, in tests) would carry over.
func FlagsOutput(format string) []cli.Flag {
	return flags(format, TimeoutFlag(DefaultTimeout))
}

// FlagsOutputUnbounded are FlagsOutput with FlagsUnbounded's --timeout.
func FlagsOutputUnbounded(format string) []cli.Flag {
	return flags(format, TimeoutFlag(0))
}

// flags are the connection flags with -o defaulting to format, and timeout
// as --timeout (nil: none).
func flags(format string, timeout cli.Flag) []cli.Flag {
	out := []cli.Flag{
		envflag.String("url", DefaultURL, "coordinator REST URL (host:port or http[s]://host:port; without a scheme: http, https with --ca)"),
		envflag.String("user", "", "HTTP Basic user (its password from --password-file)"),
		envflag.String("password-file", "", "file holding the --user's password"),
		envflag.String("token-file", "", "file holding a bearer token or JWT"),
		envflag.String("ca", "", "PEM CAs that verify the coordinator's HTTPS certificate (default: the system's)"),
		envflag.String("context", "", "use this context of the CLI config (sluice config get-contexts) instead of the current one"),
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: format, Usage: "output format: table, json or yaml", EnvVars: envflag.Env("output")},
	}
	if timeout != nil {
		out = append(out, timeout)
	}
	return append(out, envflag.Duration("connect-timeout", DefaultConnectTimeout,
		"the longest to wait for a connection, its TLS handshake and the first answer to a read (0: no limit); then exit 3"))
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

// cliRetry is the CLI's retry policy: a leader's failover or a
// coordinator's restart is ridden out for a second or two, and nothing
// listening is said at once rather than after the client's default
// fifteen seconds.
var cliRetry = api.RetryPolicy{MaxAttempts: 4, MinBackoff: 200 * time.Millisecond, MaxBackoff: time.Second}

// ClientFor is the typed REST client of a connection: cn.URL normalised
// (flag names it in a usage error), its CA trusted, its credentials read
// from their files, connecting within DefaultConnectTimeout.
func ClientFor(flag string, cn Conn) (*api.Client, error) {
	rc, _, err := clientFor(flag, cn, limits{connect: DefaultConnectTimeout, request: DefaultTimeout, retry: &cliRetry}, nil)
	return rc, err
}

// limits are how long a client waits, and how often it tries again.
type limits struct {
	// connect is --connect-timeout; request bounds each request's answer
	// (0: no bound).
	connect, request time.Duration
	// retry is the retry policy.
	retry *api.RetryPolicy
}

// clientFor is ClientFor with the limits given, abort ending the
// command's context when a request gets no answer in time (nil: none to
// end); the note says how the URL was corrected, if it was.
func clientFor(flag string, cn Conn, lim limits, abort func(error)) (*api.Client, string, error) {
	base, note, err := BaseURL(cn.URL, cn.CA != "")
	if err != nil {
		return nil, "", UsageError{fmt.Errorf("%s: %w", flag, err)}
	}
	if note != "" {
		note = flag + " " + note
	}
	cfg := api.Config{Address: base, Retry: lim.retry}
	switch {
	case cn.User != "" && cn.TokenFile != "":
		return nil, "", Usage("give --user or --token-file, not both")
	case cn.User != "":
		if cn.PasswordFile == "" {
			return nil, "", Usage("--user needs --password-file")
		}
		if cfg.Password, err = readSecret("password-file", cn.PasswordFile); err != nil {
			return nil, "", err
		}
		cfg.Username = cn.User
	case cn.TokenFile != "":
		if cfg.Token, err = readSecret("token-file", cn.TokenFile); err != nil {
			return nil, "", err
		}
	}
	tr, err := transport(cn.CA, lim.connect)
	if err != nil {
		return nil, "", err
	}
	// No http.Client timeout: --timeout bounds the whole command, and
	// the watchdog a connection, a read's first answer, and each answer
	// of a command without a --timeout.
	cfg.HTTPClient = &http.Client{Transport: &watchdog{next: tr, base: base, connect: lim.connect, request: lim.request, abort: abort}}
	rc, err := api.NewClient(cfg)
	return rc, note, err
}

// connectPaths are the first segments of the REST API's own paths: a
// --url pasted from a browser or a request (…:8083/connectors/x/status)
// ends at the segment before them. Not "sluice", where Sluice's own routes
// start: it is as likely the prefix a proxy serves Sluice under
// (https://gw/sluice/connectors is the API at https://gw/sluice).
var connectPaths = []string{"connectors", "connector-plugins", "admin", "health", "readyz", "metrics", "openapi.json"}

// BaseURL is the REST API's base URL for --url as a user gives it:
// host:port gets a scheme (http, or https when tls), a trailing slash is
// dropped, and a path that is one of the API's own (/connectors/x, …) is
// cut off, with a note saying so. Another path is kept as the prefix of
// a coordinator behind a proxy.
func BaseURL(raw string, tls bool) (base, note string, err error) {
	base, err = api.NormalizeAddress(raw, tls)
	if err != nil {
		return "", "", err
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", "", err // NormalizeAddress parsed it already
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i, seg := range segs {
		for _, p := range connectPaths {
			if seg == p {
				u.Path, u.RawPath = strings.Join(segs[:i], "/"), ""
				if u.Path != "" {
					u.Path = "/" + u.Path
				}
				cut := u.String()
				return cut, fmt.Sprintf("%s: using %s (the REST API's base URL; /%s… is one of its paths)", raw, cut, strings.Join(segs[i:], "/")), nil
			}
		}
	}
	return base, "", nil
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

// transport is the HTTP transport of the REST commands: trusting ca,
// connecting and shaking hands within connect (0: no limit).
func transport(ca string, connect time.Duration) (*http.Transport, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = connect
	if ca != "" {
		pool, err := coordinator.LoadCertPool("--ca", ca)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return tr, nil
}
