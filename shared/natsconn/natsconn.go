// Package natsconn is the one place a Sluice process's NATS connection is
// configured: it checks the authentication and TLS settings (the --nats-*
// flags), reads their files — failing with an error that names the file and
// what is wrong with it — and connects, so that a refused authentication
// stops start-up at once instead of being retried forever.
package natsconn

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/sluice-io/sluice/shared/logthrottle"
	"github.com/sluice-io/sluice/shared/secretfile"
	"github.com/sluice-io/sluice/shared/tlsfiles"
)

// Auth is how a process authenticates to NATS, and the TLS it connects
// with. At most one way of authenticating may be set; none is an anonymous
// connection, which only a NATS server without authorization accepts.
type Auth struct {
	// CredsFile is a NATS credentials file: a user JWT and its nkey seed
	// (what `nsc generate creds` writes).
	CredsFile string
	// NkeySeedFile holds a user nkey seed (SU…), whose public key the
	// server's config lists.
	NkeySeedFile string
	// User and PasswordFile are a user and the file holding its password.
	User         string
	PasswordFile string
	// TokenFile holds the token of a server that authorizes by token.
	TokenFile string
	// TLSCA is a PEM file of the CAs the server's certificate is checked
	// against (default: the system's). TLSCert and TLSKey are a client
	// certificate and its key, for a server that verifies clients. Any of
	// them turns TLS on.
	TLSCA, TLSCert, TLSKey string
	// InboxPrefix is the prefix of the connection's reply subjects
	// (default: NATS's _INBOX); a process takes its role's
	// (v1.AgentInboxPrefix, v1.CoordinatorInboxPrefix), which the
	// shipped permissions let it subscribe to.
	InboxPrefix string
}

// Validate checks that the settings go together, without reading files.
func (a Auth) Validate() error {
	var ways []string
	if a.CredsFile != "" {
		ways = append(ways, "--nats-creds")
	}
	if a.NkeySeedFile != "" {
		ways = append(ways, "--nats-nkey-seed")
	}
	if a.User != "" || a.PasswordFile != "" {
		ways = append(ways, "--nats-user/--nats-password-file")
	}
	if a.TokenFile != "" {
		ways = append(ways, "--nats-token-file")
	}
	var errs []error
	if len(ways) > 1 {
		errs = append(errs, fmt.Errorf("NATS authentication: use one of %s, not several", strings.Join(ways, ", ")))
	}
	if (a.User == "") != (a.PasswordFile == "") {
		errs = append(errs, errors.New("NATS authentication: --nats-user and --nats-password-file go together"))
	}
	if (a.TLSCert == "") != (a.TLSKey == "") {
		errs = append(errs, errors.New("NATS TLS: --nats-tls-cert and --nats-tls-key go together"))
	}
	return errors.Join(errs...)
}

// Describe names the identity the settings connect as, for messages.
func (a Auth) Describe() string {
	switch {
	case a.CredsFile != "":
		return "the credentials in " + a.CredsFile
	case a.NkeySeedFile != "":
		return "the nkey in " + a.NkeySeedFile
	case a.User != "":
		return "user " + a.User
	case a.TokenFile != "":
		return "the token in " + a.TokenFile
	default:
		return "no credentials"
	}
}

// Options reads the files the settings name and returns the nats.Options
// that authenticate and secure a connection with them.
func (a Auth) Options() ([]nats.Option, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	var opts []nats.Option
	switch {
	case a.CredsFile != "":
		if err := checkCreds(a.CredsFile); err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserCredentials(a.CredsFile))
	case a.NkeySeedFile != "":
		opt, err := nkeyOption(a.NkeySeedFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, opt)
	case a.User != "":
		pw, err := secretFile(a.PasswordFile, "password")
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserInfo(a.User, pw))
	case a.TokenFile != "":
		tok, err := secretFile(a.TokenFile, "token")
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.Token(tok))
	}
	if a.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(a.InboxPrefix))
	}
	if a.TLSCA != "" || a.TLSCert != "" {
		cfg, err := a.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.Secure(cfg))
	}
	return opts, nil
}

// connectTimeout bounds the first connection, TLS and authentication
// included.
const connectTimeout = 5 * time.Second

// reconnectWait is how long a process waits between attempts to reach a
// NATS server it tried last (nats.go's default is 2s): the control plane
// comes back within a fraction of a second of NATS, not up to two seconds
// later. The jitter spreads a fleet's attempts.
const (
	reconnectWait   = 150 * time.Millisecond
	reconnectJitter = 100 * time.Millisecond
)

// asyncWarnEvery bounds how often one asynchronous NATS error (a
// permissions violation names its subject) is logged.
const asyncWarnEvery = time.Minute

// Connect connects to url as name with the settings, reconnecting without
// end once connected. A server that refuses the credentials, or that
// cannot be reached, fails it at once with an error saying which. Errors
// the server reports later — a publish or subscription its permissions
// refuse — are warned about on log, at most once a minute each.
func Connect(url, name string, a Auth, log *slog.Logger, extra ...nats.Option) (*nats.Conn, error) {
	opts, err := a.Options()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	warn := logthrottle.New(asyncWarnEvery)
	onError := func(_ *nats.Conn, sub *nats.Subscription, err error) {
		if !warn.Due(err.Error(), time.Now()) {
			return
		}
		attrs := []any{"err", err}
		if sub != nil {
			attrs = append(attrs, "subject", sub.Subject)
		}
		log.Warn("the NATS server refused an operation", attrs...)
	}
	opts = append([]nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.Timeout(connectTimeout), nats.ErrorHandler(onError),
		nats.ReconnectWait(reconnectWait), nats.ReconnectJitter(reconnectJitter, reconnectJitter)}, opts...)
	nc, err := nats.Connect(url, append(opts, extra...)...)
	if err != nil {
		if refused(err) {
			return nil, fmt.Errorf("NATS at %s refused authentication with %s: %w", url, a.Describe(), err)
		}
		return nil, fmt.Errorf("connect to NATS %s: %w", url, err)
	}
	return nc, nil
}

// refused reports whether err is the server refusing the credentials.
func refused(err error) bool {
	return errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) ||
		errors.Is(err, nats.ErrAuthRevoked) || errors.Is(err, nats.ErrAccountAuthExpired) ||
		strings.Contains(strings.ToLower(err.Error()), "authorization violation")
}

// checkCreds reads a credentials file and checks both its parts, so that a
// bad file is reported naming the part rather than at the first connect.
func checkCreds(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("NATS credentials file %s: %w", file, err)
	}
	token, err := nkeys.ParseDecoratedJWT(data)
	if err != nil || !strings.Contains(string(data), "BEGIN NATS USER JWT") {
		return fmt.Errorf("NATS credentials file %s: field user JWT: not found (want a -----BEGIN NATS USER JWT----- block)", file)
	}
	claims, err := jwt.DecodeUserClaims(token)
	if err != nil {
		return fmt.Errorf("NATS credentials file %s: field user JWT: %v", file, err)
	}
	if claims.Expires > 0 && time.Unix(claims.Expires, 0).Before(time.Now()) {
		return fmt.Errorf("NATS credentials file %s: field user JWT: expired at %s", file, time.Unix(claims.Expires, 0).UTC().Format(time.RFC3339))
	}
	kp, err := nkeys.ParseDecoratedUserNKey(data)
	if err != nil {
		return fmt.Errorf("NATS credentials file %s: field user nkey seed: %v", file, err)
	}
	if pub, err := kp.PublicKey(); err != nil || pub != claims.Subject {
		return fmt.Errorf("NATS credentials file %s: field user nkey seed: it is not the key of the JWT's user %s", file, claims.Subject)
	}
	return nil
}

// nkeyOption reads a user nkey seed and signs the server's nonce with it.
func nkeyOption(file string) (nats.Option, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("NATS nkey seed file %s: %w", file, err)
	}
	seed := []byte(strings.TrimSpace(string(data)))
	if prefix, _, err := nkeys.DecodeSeed(seed); err != nil || prefix != nkeys.PrefixByteUser {
		return nil, fmt.Errorf("NATS nkey seed file %s: field seed: not a user nkey seed (one line starting SU)", file)
	}
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		return nil, fmt.Errorf("NATS nkey seed file %s: field seed: %v", file, err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("NATS nkey seed file %s: field seed: %v", file, err)
	}
	return nats.Nkey(pub, kp.Sign), nil
}

// secretFile reads a one-line secret (a password, a token); the line end
// is not part of it.
func secretFile(file, what string) (string, error) {
	s, err := secretfile.Read(file)
	switch {
	case errors.Is(err, secretfile.ErrEmpty), errors.Is(err, secretfile.ErrMultiline):
		return "", fmt.Errorf("NATS %s file %s: field %s: %w", what, file, what, err)
	case err != nil:
		return "", fmt.Errorf("NATS %s file %s: %w", what, file, err)
	}
	return s, nil
}

func (a Auth) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if a.TLSCA != "" {
		pool, err := tlsfiles.CertPool(a.TLSCA)
		if errors.Is(err, tlsfiles.ErrNoCertificate) {
			return nil, fmt.Errorf("NATS TLS CA file %s: field certificate: %w", a.TLSCA, err)
		}
		if err != nil {
			return nil, fmt.Errorf("NATS TLS CA file %s: %w", a.TLSCA, err)
		}
		cfg.RootCAs = pool
	}
	if a.TLSCert != "" {
		pair, err := tls.LoadX509KeyPair(a.TLSCert, a.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("NATS TLS certificate %s and key %s: %w", a.TLSCert, a.TLSKey, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
