package server

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/shared/logging"
)

// restoreKafkaFlags puts the Kafka flags' values back at t's end: a
// urfave/cli flag keeps the value its environment variable gave it, and
// the flags are shared by every test of the package.
func restoreKafkaFlags(t *testing.T) {
	strs := []*cli.StringFlag{kafkaFlag, kafkaTLSCAFlag, kafkaTLSCertFlag, kafkaTLSKeyFlag, kafkaSASLMechFlag, kafkaSASLUserFlag, kafkaSASLPassFlag}
	bools := []*cli.BoolFlag{kafkaTLSFlag, kafkaTLSSkipFlag}
	var sv []string
	var bv []bool
	for _, f := range strs {
		sv = append(sv, f.Value)
	}
	for _, f := range bools {
		bv = append(bv, f.Value)
	}
	t.Cleanup(func() {
		for i, f := range strs {
			f.Value = sv[i]
		}
		for i, f := range bools {
			f.Value = bv[i]
		}
	})
}

// TestKafkaSecurityFlags checks that the Kafka security flags come from
// their SLUICE_* variables, reach the coordinator's and every dev agent's
// config as one loaded setting, and that the insecure one is warned about
// once.
func TestKafkaSecurityFlags(t *testing.T) {
	restoreKafkaFlags(t)
	pass := filepath.Join(t.TempDir(), "pass")
	if err := os.WriteFile(pass, []byte("pw-s3cret-9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLUICE_KAFKA", "127.0.0.1:9094")
	t.Setenv("SLUICE_KAFKA_TLS_INSECURE_SKIP_VERIFY", "true")
	t.Setenv("SLUICE_KAFKA_SASL_MECHANISM", "scram-sha-512")
	t.Setenv("SLUICE_KAFKA_SASL_USERNAME", "sluice")
	t.Setenv("SLUICE_KAFKA_SASL_PASSWORD_FILE", pass)
	var logs bytes.Buffer
	c := flagContext(t, Dev().Flags...)
	ccfg, acfgs, err := DevConfigs(c, logging.NewText(&logs, slog.LevelInfo), "nats://127.0.0.1:4222", "127.0.0.1:9094")
	if err != nil {
		t.Fatal(err)
	}
	sec := ccfg.KafkaSecurity
	if !sec.TLSOn() || !sec.SASLOn() {
		t.Fatalf("coordinator's Kafka security: %v", sec)
	}
	for _, a := range acfgs {
		if a.KafkaSecurity != sec {
			t.Errorf("agent %s has a Kafka security of its own: %v", a.ID, a.KafkaSecurity)
		}
	}
	if n := strings.Count(logs.String(), "development only"); n != 1 {
		t.Errorf("the insecure setting was warned about %d times, want once:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("the log shows the password:\n%s", logs.String())
	}
}

// TestKafkaSecurityFlagsBadInput checks that a bad setting stops building
// the config with the flag in the message, for coordinator and agent.
func TestKafkaSecurityFlagsBadInput(t *testing.T) {
	restoreKafkaFlags(t)
	t.Setenv("SLUICE_KAFKA_TLS_CERT", "/nonexistent/client.pem")
	if _, err := coordinatorConfig(flagContext(t, coordinatorFlags()...), nil); err == nil ||
		!strings.Contains(err.Error(), "--kafka-tls-cert /nonexistent/client.pem is given without --kafka-tls-key") {
		t.Errorf("coordinator: %v", err)
	}
	if _, err := agentConfig(flagContext(t, agentFlags()...), nil); err == nil || !strings.Contains(err.Error(), "--kafka-tls-key") {
		t.Errorf("agent: %v", err)
	}
}

// TestDevRefusesSecurityWithEmbeddedKafka: the embedded broker is
// plaintext, so security flags without --kafka are an error rather than
// silently ignored.
func TestDevRefusesSecurityWithEmbeddedKafka(t *testing.T) {
	restoreKafkaFlags(t)
	err := newApp().Run([]string{"sluice", "dev", "--kafka-tls", "--data-dir", t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "the embedded broker is plaintext") {
		t.Fatalf("dev --kafka-tls without --kafka: %v", err)
	}
}
