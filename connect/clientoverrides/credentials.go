package clientoverrides

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/sluice-io/sluice/shared/kafkasec"
)

// Credentials are the principal a connector's client authenticates as
// when the connector overrides sasl.jaas.config and sasl.mechanism: each
// tenant's connectors can so be the tenant's own Kafka principal, which
// the broker's ACLs confine whatever Sluice checks.
type Credentials struct {
	Mechanism sasl.Mechanism
	// User is the SASL username, for messages and logs (never the password).
	User string
	// Protocol is the security.protocol asked for ("" when not set): the
	// agent's own connection must be of that kind, as the client reaches
	// the same listener.
	Protocol string
}

// ClientCredentials returns the credentials client c of config overrides;
// nil when it overrides none. Its errors never repeat a value.
func ClientCredentials(config map[string]string, c Client) (*Credentials, error) {
	ov := Overrides(config, c)
	jaas, mech, proto := ov["sasl.jaas.config"], ov["sasl.mechanism"], strings.ToUpper(strings.TrimSpace(ov["security.protocol"]))
	key := string(c)
	switch proto {
	case "", "SASL_SSL", "SASL_PLAINTEXT":
	case "SSL", "PLAINTEXT":
		if jaas != "" {
			return nil, fmt.Errorf("%ssecurity.protocol %s takes no SASL credentials: use SASL_SSL or SASL_PLAINTEXT with %ssasl.jaas.config", key, proto, key)
		}
	default:
		return nil, fmt.Errorf("Invalid value %s for configuration %ssecurity.protocol: must be SASL_SSL, SASL_PLAINTEXT, SSL or PLAINTEXT", proto, key)
	}
	if jaas == "" {
		if mech != "" {
			return nil, fmt.Errorf("%ssasl.mechanism needs %ssasl.jaas.config: the credentials of that mechanism", key, key)
		}
		return nil, nil
	}
	m, user, err := kafkasec.FromJAAS(mech, jaas)
	if err != nil {
		return nil, fmt.Errorf("Invalid value [hidden] for configuration %ssasl.jaas.config: %w", key, err)
	}
	return &Credentials{Mechanism: m, User: user, Protocol: proto}, nil
}
