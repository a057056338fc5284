// Package kafkasec loads the settings a Kafka client of Sluice needs to reach
// a secured cluster — TLS (a CA, a client certificate for mTLS) and SASL
// (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) — validates them once at start-up,
// and turns them into franz-go client options. Every Kafka client of every
// Sluice process gets its options through shared/kafkautil.ClientOpts, which
// applies a Config from here, so no client can bypass it.
package kafkasec

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluice-io/sluice/shared/secretfile"
	"github.com/sluice-io/sluice/shared/tlsfiles"
)

// The SASL mechanisms Sluice supports, spelled as Kafka spells them.
const (
	MechanismPlain       = "PLAIN"
	MechanismSCRAMSHA256 = "SCRAM-SHA-256"
	MechanismSCRAMSHA512 = "SCRAM-SHA-512"
)

// Options are the security settings as the user gives them (flags or env
// vars), before any file is read. The zero value is a plaintext client
// without authentication.
type Options struct {
	// TLS turns TLS on. Any of CAFile, CertFile, KeyFile or
	// InsecureSkipVerify implies it: nobody names a CA for a plaintext
	// connection.
	TLS bool
	// CAFile is a PEM bundle of the CAs that sign the brokers' certificates
	// (empty: the system's roots).
	CAFile string
	// CertFile and KeyFile are the client's PEM certificate and private key
	// for mTLS; both or neither.
	CertFile string
	KeyFile  string
	// InsecureSkipVerify accepts any broker certificate: for development
	// only.
	InsecureSkipVerify bool
	// SASLMechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (any case);
	// empty means no SASL.
	SASLMechanism string
	// SASLUsername is the SASL user.
	SASLUsername string
	// SASLPasswordFile holds the user's password (one line; a trailing
	// newline is ignored). It is read again at every authentication, so a
	// rotated secret is used by the next connection without a restart.
	SASLPasswordFile string
}

// Flag names, used in error messages so that a message names what the user
// typed; the CLI defines flags of these names.
const (
	FlagTLS              = "--kafka-tls"
	FlagTLSCA            = "--kafka-tls-ca"
	FlagTLSCert          = "--kafka-tls-cert"
	FlagTLSKey           = "--kafka-tls-key"
	FlagTLSInsecure      = "--kafka-tls-insecure-skip-verify"
	FlagSASLMechanism    = "--kafka-sasl-mechanism"
	FlagSASLUsername     = "--kafka-sasl-username"
	FlagSASLPasswordFile = "--kafka-sasl-password-file"
)

// Config is a validated, loaded security setting, safe for concurrent use
// by any number of clients. A nil *Config is a plaintext client without
// authentication.
type Config struct {
	tls      *tls.Config
	mech     sasl.Mechanism
	opts     Options
	warnings []string
}

// Enabled reports whether any option was given, i.e. whether Load would
// return a non-nil Config.
func (o Options) Enabled() bool { return o != Options{} }

// tlsOn reports whether the options ask for TLS, given or implied.
func (o Options) tlsOn() bool {
	return o.TLS || o.CAFile != "" || o.CertFile != "" || o.KeyFile != "" || o.InsecureSkipVerify
}

// Load validates o and reads its files once: a CA that holds no
// certificate, a certificate without its key, a key that does not match, an
// unknown mechanism or a missing password file is an error naming the flag
// and the file. It returns nil, nil for the zero Options.
func Load(o Options) (*Config, error) {
	if !o.Enabled() {
		return nil, nil
	}
	c := &Config{opts: o}
	var errs []error
	if o.tlsOn() {
		tc, err := loadTLS(o)
		if err != nil {
			errs = append(errs, err)
		}
		c.tls = tc
		if o.InsecureSkipVerify {
			c.warnings = append(c.warnings, FlagTLSInsecure+" is set: the brokers' certificates are not verified, anyone on the network path can impersonate them (use it for development only)")
		}
	}
	mech, err := loadSASL(o)
	if err != nil {
		errs = append(errs, err)
	}
	c.mech = mech
	if mech != nil && mech.Name() == MechanismPlain && c.tls == nil {
		c.warnings = append(c.warnings, "SASL PLAIN without TLS sends the password in clear text: add "+FlagTLS)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// loadTLS builds the TLS config: the CA pool, the client pair, the
// verification mode.
func loadTLS(o Options) (*tls.Config, error) {
	// InsecureSkipVerify only when the user asks for it, with a warning.
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify}
	var errs []error
	if o.CAFile != "" {
		pool, err := tlsfiles.CertPool(o.CAFile)
		switch {
		case errors.Is(err, tlsfiles.ErrNoCertificate):
			errs = append(errs, fmt.Errorf("%s %s: %w", FlagTLSCA, o.CAFile, err))
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", FlagTLSCA, err))
		}
		tc.RootCAs = pool
	}
	switch {
	case o.CertFile != "" && o.KeyFile == "":
		errs = append(errs, fmt.Errorf("%s %s is given without %s: mTLS needs the certificate's private key", FlagTLSCert, o.CertFile, FlagTLSKey))
	case o.KeyFile != "" && o.CertFile == "":
		errs = append(errs, fmt.Errorf("%s %s is given without %s: mTLS needs the client certificate", FlagTLSKey, o.KeyFile, FlagTLSCert))
	case o.CertFile != "":
		pair, err := loadPair(o.CertFile, o.KeyFile)
		if err != nil {
			errs = append(errs, err)
		} else {
			tc.Certificates = []tls.Certificate{pair}
		}
	}
	return tc, errors.Join(errs...)
}

// loadPair reads a client certificate and key, saying which file is at
// fault: tls.LoadX509KeyPair alone does not name them.
func loadPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: %w", FlagTLSCert, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: %w", FlagTLSKey, err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s %s / %s %s: not a valid certificate and key pair: %w", FlagTLSCert, certFile, FlagTLSKey, keyFile, err)
	}
	return pair, nil
}

// loadSASL builds the SASL mechanism, checking the password file now so
// that a missing one stops start-up rather than every later connection.
func loadSASL(o Options) (sasl.Mechanism, error) {
	mech := strings.ToUpper(strings.TrimSpace(o.SASLMechanism))
	if mech == "" {
		if o.SASLUsername != "" || o.SASLPasswordFile != "" {
			return nil, fmt.Errorf("%s and %s need %s (%s, %s or %s)", FlagSASLUsername, FlagSASLPasswordFile, FlagSASLMechanism,
				MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512)
		}
		return nil, nil
	}
	var errs []error
	switch mech {
	case MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512:
	default:
		errs = append(errs, fmt.Errorf("%s %q is not supported: use %s, %s or %s", FlagSASLMechanism, o.SASLMechanism,
			MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512))
	}
	if o.SASLUsername == "" {
		errs = append(errs, fmt.Errorf("%s %s needs %s", FlagSASLMechanism, mech, FlagSASLUsername))
	}
	if o.SASLPasswordFile == "" {
		errs = append(errs, fmt.Errorf("%s %s needs %s (a file holding the password)", FlagSASLMechanism, mech, FlagSASLPasswordFile))
	} else if _, err := readPassword(o.SASLPasswordFile); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	user, file := o.SASLUsername, o.SASLPasswordFile
	switch mech {
	case MechanismPlain:
		return plain.Plain(func(context.Context) (plain.Auth, error) {
			pass, err := readPassword(file)
			return plain.Auth{User: user, Pass: pass}, err
		}), nil
	default:
		auth := func(context.Context) (scram.Auth, error) {
			pass, err := readPassword(file)
			return scram.Auth{User: user, Pass: pass}, err
		}
		if mech == MechanismSCRAMSHA256 {
			return scram.Sha256(auth), nil
		}
		return scram.Sha512(auth), nil
	}
}

// readPassword reads a password file: its first line, without the line
// end that editors and `echo` add.
func readPassword(file string) (string, error) {
	pass, err := secretfile.Read(file)
	switch {
	case errors.Is(err, secretfile.ErrEmpty), errors.Is(err, secretfile.ErrMultiline):
		return "", fmt.Errorf("%s %s: the file is %w (its one line is the password)", FlagSASLPasswordFile, file, err)
	case err != nil:
		return "", fmt.Errorf("%s: %w", FlagSASLPasswordFile, err)
	}
	return pass, nil
}

// ClientOpts are the client options that apply c: nil for a nil Config.
func (c *Config) ClientOpts() []kgo.Opt {
	if c == nil {
		return nil
	}
	var opts []kgo.Opt
	if c.tls != nil {
		// kgo clones the config for every dial and sets ServerName to
		// the broker's host, so one config serves every broker.
		opts = append(opts, kgo.DialTLSConfig(c.tls))
	}
	if c.mech != nil {
		opts = append(opts, kgo.SASL(c.mech))
	}
	return opts
}

// Warnings are the settings the operator should be told about at start-up
// (an unverified TLS, a clear-text password).
func (c *Config) Warnings() []string {
	if c == nil {
		return nil
	}
	return c.warnings
}

// String describes the setting without secrets, for the start-up log.
func (c *Config) String() string {
	if c == nil {
		return "plaintext"
	}
	var parts []string
	if c.tls != nil {
		s := "TLS"
		switch {
		case c.opts.InsecureSkipVerify:
			s += " (certificates not verified)"
		case c.opts.CAFile != "":
			s += " (CA " + c.opts.CAFile + ")"
		}
		if len(c.tls.Certificates) > 0 {
			s += " with client certificate " + c.opts.CertFile
		}
		parts = append(parts, s)
	}
	if c.mech != nil {
		parts = append(parts, "SASL "+c.mech.Name()+" as "+c.opts.SASLUsername)
	}
	return strings.Join(parts, ", ")
}

// TLSOn reports whether c dials with TLS.
func (c *Config) TLSOn() bool { return c != nil && c.tls != nil }

// SASLOn reports whether c authenticates with SASL.
func (c *Config) SASLOn() bool { return c != nil && c.mech != nil }
