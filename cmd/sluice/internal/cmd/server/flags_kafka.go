package server

import (
	"fmt"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/shared/kafkasec"
)

// The Kafka security flags, shared by coordinator, agent and dev: every
// Kafka client of the process uses them (see shared/kafkasec).
var (
	kafkaTLSFlag      = envflag.Bool("kafka-tls", "connect to Kafka with TLS (implied by any other --kafka-tls-* flag)")
	kafkaTLSCAFlag    = envflag.String("kafka-tls-ca", "", "PEM file of the CAs that sign the brokers' certificates (default: the system's roots)")
	kafkaTLSCertFlag  = envflag.String("kafka-tls-cert", "", "PEM client certificate for mTLS (with --kafka-tls-key)")
	kafkaTLSKeyFlag   = envflag.String("kafka-tls-key", "", "PEM private key of --kafka-tls-cert")
	kafkaTLSSkipFlag  = envflag.Bool("kafka-tls-insecure-skip-verify", "do not verify the brokers' certificates (development only; logged as a warning)")
	kafkaSASLMechFlag = envflag.String("kafka-sasl-mechanism", "", "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (default: no SASL)")
	kafkaSASLUserFlag = envflag.String("kafka-sasl-username", "", "SASL user name")
	kafkaSASLPassFlag = envflag.String("kafka-sasl-password-file", "", "file holding the SASL password (its first line; re-read at every new connection)")
)

// kafkaSecurityOptions reads the Kafka security flags.
func kafkaSecurityOptions(c *cli.Context) kafkasec.Options {
	return kafkasec.Options{
		TLS:                c.Bool("kafka-tls"),
		CAFile:             c.String("kafka-tls-ca"),
		CertFile:           c.String("kafka-tls-cert"),
		KeyFile:            c.String("kafka-tls-key"),
		InsecureSkipVerify: c.Bool("kafka-tls-insecure-skip-verify"),
		SASLMechanism:      c.String("kafka-sasl-mechanism"),
		SASLUsername:       c.String("kafka-sasl-username"),
		SASLPasswordFile:   c.String("kafka-sasl-password-file"),
	}
}

// kafkaSecurityKey is where kafkaSecurity keeps the process's loaded
// setting in the app's metadata: sluice dev builds a coordinator's and
// several agents' configs from one set of flags, and loads (and warns)
// once.
const kafkaSecurityKey = "kafka-security"

// kafkaSecurity loads the Kafka security flags once for the process (its
// files are read and checked here, so bad input stops start-up) and logs
// its warnings once.
func kafkaSecurity(c *cli.Context, log *slog.Logger) (*kafkasec.Config, error) {
	if sec, ok := c.App.Metadata[kafkaSecurityKey].(*kafkasec.Config); ok {
		return sec, nil
	}
	sec, err := kafkasec.Load(kafkaSecurityOptions(c))
	if err != nil {
		return nil, fmt.Errorf("kafka security: %w", err)
	}
	if log != nil {
		for _, w := range sec.Warnings() {
			log.Warn(w)
		}
		if sec != nil {
			log.Info("Kafka security", "settings", sec.String())
		}
	}
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	c.App.Metadata[kafkaSecurityKey] = sec
	return sec, nil
}
