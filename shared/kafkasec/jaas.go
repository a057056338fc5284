package kafkasec

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The JAAS login modules of Kafka's SASL mechanisms.
const (
	plainModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

// ErrJAAS is the error of a sasl.jaas.config that does not parse. Its
// message never repeats the value: it holds a password.
var ErrJAAS = errors.New("sasl.jaas.config must be `<PlainLoginModule or ScramLoginModule> required username=\"…\" password=\"…\";`")

// FromJAAS builds the SASL mechanism of a client that overrides its
// credentials as a Kafka client does: sasl.mechanism (PLAIN, SCRAM-SHA-256
// or SCRAM-SHA-512; empty is Kafka's default, GSSAPI, which Sluice does not
// support) and sasl.jaas.config naming that mechanism's login module with
// a username and a password. It returns the mechanism and the username.
func FromJAAS(mechanism, jaas string) (sasl.Mechanism, string, error) {
	module, opts, err := parseJAAS(jaas)
	if err != nil {
		return nil, "", err
	}
	user, pass := opts["username"], opts["password"]
	if user == "" || pass == "" {
		return nil, "", fmt.Errorf("sasl.jaas.config needs a username and a password")
	}
	switch mech := strings.ToUpper(strings.TrimSpace(mechanism)); mech {
	case MechanismPlain:
		if module != plainModule {
			return nil, "", fmt.Errorf("sasl.mechanism PLAIN needs %s in sasl.jaas.config", plainModule)
		}
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), user, nil
	case MechanismSCRAMSHA256, MechanismSCRAMSHA512:
		if module != scramModule {
			return nil, "", fmt.Errorf("sasl.mechanism %s needs %s in sasl.jaas.config", mech, scramModule)
		}
		auth := func(context.Context) (scram.Auth, error) { return scram.Auth{User: user, Pass: pass}, nil }
		if mech == MechanismSCRAMSHA256 {
			return scram.Sha256(auth), user, nil
		}
		return scram.Sha512(auth), user, nil
	default:
		return nil, "", fmt.Errorf("sasl.mechanism %q is not supported: use %s, %s or %s", mechanism, MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512)
	}
}

// parseJAAS reads one JAAS entry: a login module class, a control flag,
// then options key=value (the value quoted, or a plain word), ending with
// a semicolon.
func parseJAAS(s string) (module string, opts map[string]string, err error) {
	s = strings.TrimSpace(s)
	if !strings.HasSuffix(s, ";") {
		return "", nil, ErrJAAS
	}
	s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	fields := strings.Fields(s)
	if len(fields) < 2 {
		return "", nil, ErrJAAS
	}
	module, flag := fields[0], fields[1]
	switch flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return "", nil, ErrJAAS
	}
	rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(s, module), " "))
	rest = strings.TrimSpace(strings.TrimPrefix(rest, flag))
	opts = map[string]string{}
	for rest != "" {
		key, after, ok := strings.Cut(rest, "=")
		if !ok || strings.TrimSpace(key) == "" {
			return "", nil, ErrJAAS
		}
		key, after = strings.TrimSpace(key), strings.TrimLeft(after, " ")
		var value string
		if strings.HasPrefix(after, `"`) {
			end := strings.Index(after[1:], `"`)
			if end < 0 {
				return "", nil, ErrJAAS
			}
			value, rest = after[1:1+end], after[2+end:]
		} else {
			value, rest, _ = strings.Cut(after, " ")
		}
		opts[key] = value
		rest = strings.TrimSpace(rest)
	}
	return module, opts, nil
}

// WithSASL is c authenticating with mech instead of its own SASL, its TLS
// kept: a connector's clients that override their credentials connect to
// the same listener as the agent's, as another principal.
func (c *Config) WithSASL(mech sasl.Mechanism) *Config {
	out := &Config{mech: mech}
	if c != nil {
		out.tls, out.opts, out.warnings = c.tls, c.opts, c.warnings
	}
	return out
}
