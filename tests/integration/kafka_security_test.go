package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/agent"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/shared/kafkasec"
	"github.com/sluice-io/sluice/shared/testca"
	"github.com/sluice-io/sluice/sluicetest"
)

// startupBound is how long a start-up refused by Kafka may take: the
// message must come in seconds, not after the clients' retry timeouts;
// loose, because this machine's timing is not.
const startupBound = 30 * time.Second

// securedBackends skips unless the tests run against a secured real broker
// (make test-kafka sets SLUICE_TEST_KAFKA_SECURITY), and returns its
// backends and setting.
func securedBackends(t *testing.T) (sluicetest.Backends, *sluicetest.TestSecurity) {
	t.Helper()
	if !sluicetest.SecuredKafka() {
		t.Skipf("needs a secured real broker: %s and %s (make kafka-up; make test-kafka)", sluicetest.KafkaEnv, sluicetest.KafkaSecurityEnv)
	}
	return sluicetest.StartBackends(t), sluicetest.KafkaSecurity()
}

// startupError starts a coordinator and an agent on be with sec and
// returns each one's start-up error, checking that it came within
// startupBound.
func startupError(t *testing.T, be sluicetest.Backends, sec *kafkasec.Config) (coordErr, agentErr error) {
	t.Helper()
	prefix := "t-kafkasec-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	co, err := coordinator.New(coordinator.Config{Listen: "127.0.0.1:0", NATSURL: be.NATSURL, Brokers: be.Brokers, KafkaSecurity: sec,
		GroupID: prefix, ConfigTopic: prefix + "-configs", OffsetsTopic: prefix + "-offsets", StatusTopic: prefix + "-status",
		AgentLease: 3 * time.Second, TaskShutdownTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ag, err := agent.New(agent.Config{ID: "agent-1", NATSURL: be.NATSURL, Brokers: be.Brokers, KafkaSecurity: sec,
		GroupID: prefix, OffsetsTopic: prefix + "-offsets", WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, p := range []struct {
		name  string
		start func(context.Context) error
		stop  func(context.Context) error
		err   *error
	}{{"coordinator", co.Start, co.Stop, &coordErr}, {"agent", ag.Start, ag.Stop, &agentErr}} {
		t0 := time.Now()
		*p.err = p.start(ctx)
		if took := time.Since(t0); took > startupBound {
			t.Errorf("%s: start-up took %v to fail, want under %v", p.name, took, startupBound)
		}
		if *p.err == nil {
			_ = p.stop(ctx)
		}
	}
	return coordErr, agentErr
}

// wantStartupRefused loads o and checks that a coordinator's and an
// agent's start-up on be fail quickly with an error that says want.
func wantStartupRefused(t *testing.T, be sluicetest.Backends, o kafkasec.Options, want string) {
	t.Helper()
	sec, err := kafkasec.Load(o)
	if err != nil {
		t.Fatal(err)
	}
	coordErr, agentErr := startupError(t, be, sec)
	for name, err := range map[string]error{"coordinator": coordErr, "agent": agentErr} {
		t.Logf("%s: %v", name, err)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s start-up: %v, want an error with %q", name, err, want)
		}
	}
}

// wrongPasswordFile writes a password file that holds a wrong password.
func wrongPasswordFile(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "wrong-password")
	if err := os.WriteFile(file, []byte("not-the-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestKafkaSecurityWrongPasswordFailsStartup: a wrong SASL password stops
// a coordinator's and an agent's start-up quickly, with a message naming
// the broker and the reason.
func TestKafkaSecurityWrongPasswordFailsStartup(t *testing.T) {
	t.Parallel()
	be, s := securedBackends(t)
	if !s.Config.SASLOn() {
		t.Skipf("%s has no SASL settings", sluicetest.KafkaSecurityEnv)
	}
	o := s.Options
	o.SASLPasswordFile = wrongPasswordFile(t)
	wantStartupRefused(t, be, o, "kafka "+be.Brokers+": SASL authentication failed: ")
}

// TestKafkaSecurityUntrustedCAFailsStartup: a CA that did not sign the
// broker's certificate stops start-up quickly, saying so.
func TestKafkaSecurityUntrustedCAFailsStartup(t *testing.T) {
	t.Parallel()
	be, s := securedBackends(t)
	if !s.Config.TLSOn() {
		t.Skipf("%s has no TLS settings", sluicetest.KafkaSecurityEnv)
	}
	other, err := testca.NewCA(t.TempDir(), "untrusted-ca")
	if err != nil {
		t.Fatal(err)
	}
	o := s.Options
	o.CAFile = other.CertFile
	wantStartupRefused(t, be, o, "kafka "+be.Brokers+": TLS handshake: x509: certificate signed by unknown authority")
}

// TestKafkaSecurityMTLS runs a cluster on the broker's mTLS listener (a
// client certificate is required): a file moves through a topic into
// another file, and without the client certificate start-up is refused.
func TestKafkaSecurityMTLS(t *testing.T) {
	t.Parallel()
	m := sluicetest.KafkaMTLS()
	if m == nil || !sluicetest.RealKafka() {
		t.Skipf("needs the real broker's mTLS listener: %s (make kafka-up; make test-kafka)", sluicetest.KafkaMTLSEnv)
	}
	be := sluicetest.StartBackends(t)
	be.Brokers = m.Brokers
	o := m.Options
	o.CertFile, o.KeyFile = "", ""
	wantStartupRefused(t, be, o, "kafka "+m.Brokers+": TLS handshake: the broker refused the connection")

	c := fileThrough(t, be, 50)
	c.Must(http.StatusNoContent, "DELETE", "/connectors/src", nil)
}

// fileThrough starts a one-agent cluster on be and moves a file of n lines
// through a topic into another file with a file source "src" and a file
// sink "sink", checking the topic holds each line once.
func fileThrough(t *testing.T, be sluicetest.Backends, n int) *sluicetest.Cluster {
	t.Helper()
	c := sluicetest.Start(t, sluicetest.Options{Backends: &be, Agents: 1})
	topic := c.Name("lines")
	lines := numbered(1, n)
	writeLines(t, filepath.Join(c.WorkDir, "in.txt"), lines)
	mustCreate(c, "src", fileSourceCfg("in.txt", topic), "")
	mustCreate(c, "sink", fileSinkCfg("out.txt", topic), "")
	waitFile(t, filepath.Join(c.WorkDir, "out.txt"), lines)
	if got := len(c.ReadTopic(topic)); got != n {
		t.Fatalf("the topic holds %d records, want %d", got, n)
	}
	return c
}

// TestKafkaSecurityEmbeddedTLSAndSASL runs a cluster on an embedded broker
// that listens with TLS and requires SCRAM, so that every make test covers
// secured connections of every client (stores, leader writer, task
// producers and consumers, offsets operations): a file round trip, a source
// connector's offsets altered and reset, and a wrong password refused at
// start-up.
func TestKafkaSecurityEmbeddedTLSAndSASL(t *testing.T) {
	t.Parallel()
	be, s := sluicetest.StartSecuredBackends(t)
	c := fileThrough(t, be, 40)

	c.Must(http.StatusNoContent, "PUT", "/connectors/src/stop", nil)
	c.WaitState("src", "STOPPED", 0, "")
	part := map[string]any{"filename": "in.txt"}
	patch(t, c, "src", body(offs(part, map[string]any{"position": json.Number("7")})...), http.StatusOK, msgAlterDefinite)
	wantOffsets(c, "src", offs(part, map[string]any{"position": json.Number("7")}))
	expect(t, c, "DELETE", "/connectors/src/offsets", nil, http.StatusOK, msgResetDefinite)
	wantOffsets(c, "src", nil)

	// kfake closes the connection where Apache Kafka answers
	// SASL_AUTHENTICATION_FAILED: the message names the broker either way.
	o := s.Options
	o.SASLPasswordFile = wrongPasswordFile(t)
	wantStartupRefused(t, be, o, "kafka "+be.Brokers+": the broker closed the connection (wrong SASL credentials")
}
