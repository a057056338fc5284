package kafkautil_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkasec"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/testca"
)

// secured is a kfake broker listening with TLS, optionally requiring
// client certificates and SASL, and the files a client needs for it.
type secured struct {
	addr            string
	ca, otherCA     *testca.CA
	client          testca.Pair
	pass, wrongPass string
}

func startSecured(t *testing.T, mtls bool, opts ...kfake.Opt) secured {
	t.Helper()
	dir := t.TempDir()
	ca, err := testca.NewCA(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	otherCA, err := testca.NewCA(dir, "other-ca")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Server("broker")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Client("client", "sluice")
	if err != nil {
		t.Fatal(err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{srv.TLS}, MinVersion: tls.VersionTLS12}
	if mtls {
		tc.ClientAuth, tc.ClientCAs = tls.RequireAndVerifyClientCert, ca.Pool()
	}
	kc, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.TLS(tc)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	s := secured{addr: kc.ListenAddrs()[0], ca: ca, otherCA: otherCA, client: client,
		pass: filepath.Join(dir, "pass"), wrongPass: filepath.Join(dir, "wrong")}
	for file, pass := range map[string]string{s.pass: "s3cret\n", s.wrongPass: "nope\n"} {
		if err := os.WriteFile(file, []byte(pass), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func load(t *testing.T, o kafkasec.Options) *kafkasec.Config {
	t.Helper()
	c, err := kafkasec.Load(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func probe(sec *kafkasec.Config, brokers string) (time.Duration, error) {
	t0 := time.Now()
	err := kafkautil.Probe(context.Background(), brokers, sec, 5*time.Second)
	return time.Since(t0), err
}

// TestProbeTLSAndSASL runs the start-up probe against a kfake broker with
// TLS and SCRAM: the right settings pass, and an untrusted CA, a wrong
// password and a missing TLS each fail at once with a message naming the
// broker and the reason.
func TestProbeTLSAndSASL(t *testing.T) {
	s := startSecured(t, false, kfake.EnableSASL(), kfake.Superuser(kafkasec.MechanismSCRAMSHA512, "sluice", "s3cret"))
	good := kafkasec.Options{CAFile: s.ca.CertFile, SASLMechanism: "SCRAM-SHA-512", SASLUsername: "sluice", SASLPasswordFile: s.pass}
	if _, err := probe(load(t, good), s.addr); err != nil {
		t.Fatalf("probe with the right settings: %v", err)
	}
	untrusted := good
	untrusted.CAFile = s.otherCA.CertFile
	wrong := good
	wrong.SASLPasswordFile = s.wrongPass
	noTLS := good
	noTLS.CAFile = ""
	cases := []struct {
		name string
		o    kafkasec.Options
		want string
	}{
		{"untrusted CA", untrusted, "kafka " + s.addr + ": TLS handshake: x509: certificate signed by unknown authority"},
		// kfake closes the connection on a failed authentication where
		// Apache Kafka answers SASL_AUTHENTICATION_FAILED (tests/integration
		// checks that message against the real broker).
		{"wrong password", wrong, "kafka " + s.addr + ": the broker closed the connection (wrong SASL credentials"},
		{"plaintext to a TLS listener", noTLS, "kafka " + s.addr + ": "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			took, err := probe(load(t, tc.o), s.addr)
			if err == nil {
				t.Fatal("probe passed")
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %q, want it to start with %q", err, tc.want)
			}
			if errors.Is(err, kafkautil.ErrUnreachable) || took > 4*time.Second {
				t.Errorf("the broker was reached, but the probe retried for %v: %v", took, err)
			}
		})
	}
}

// TestProbeMTLS checks a broker that requires client certificates: with
// the client pair the probe and a produce/consume round trip pass, without
// it the probe says the broker refused the handshake.
func TestProbeMTLS(t *testing.T) {
	s := startSecured(t, true)
	with := load(t, kafkasec.Options{CAFile: s.ca.CertFile, CertFile: s.client.CertFile, KeyFile: s.client.KeyFile})
	if _, err := probe(with, s.addr); err != nil {
		t.Fatalf("probe with a client certificate: %v", err)
	}
	roundTrip(t, s.addr, with)
	_, err := probe(load(t, kafkasec.Options{CAFile: s.ca.CertFile}), s.addr)
	if err == nil || !strings.HasPrefix(err.Error(), "kafka "+s.addr+": ") {
		t.Fatalf("probe without a client certificate: %v", err)
	}
}

// roundTrip produces a record and reads it back with clients built by
// ClientOpts: the security options reach real clients, not only the probe.
func roundTrip(t *testing.T, addr string, sec *kafkasec.Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(append(kafkautil.ClientOpts(addr, "test", sec),
		kgo.DefaultProduceTopic("secured"), kgo.AllowAutoTopicCreation(), kgo.ConsumeTopics("secured"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := kafkautil.EnsureTopicDefaults(ctx, kadm.NewClient(cl), "secured"); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("hello")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	fs := cl.PollRecords(ctx, 1)
	if err := fs.Err0(); err != nil {
		t.Fatalf("consume: %v", err)
	}
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "hello" {
		t.Fatalf("read %v, want hello", recs)
	}
}

// TestProbeUnreachable checks that a broker nobody listens on is retried
// until the timeout and reported as unreachable, which start-up only warns
// about.
func TestProbeUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	err = kafkautil.Probe(context.Background(), addr, nil, time.Second)
	if !errors.Is(err, kafkautil.ErrUnreachable) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("probe of a closed port: %v, want ErrUnreachable naming %s", err, addr)
	}
}

// TestPasswordFileReadAtEveryAuthentication: one loaded Config reads its
// password file again for each new connection, so a rotated secret is used
// without a restart.
func TestPasswordFileReadAtEveryAuthentication(t *testing.T) {
	s := startSecured(t, false, kfake.EnableSASL(), kfake.Superuser(kafkasec.MechanismSCRAMSHA256, "sluice", "s3cret"))
	sec := load(t, kafkasec.Options{CAFile: s.ca.CertFile, SASLMechanism: "SCRAM-SHA-256", SASLUsername: "sluice", SASLPasswordFile: s.pass})
	if _, err := probe(sec, s.addr); err != nil {
		t.Fatalf("probe with the right password: %v", err)
	}
	if err := os.WriteFile(s.pass, []byte("rotated\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := probe(sec, s.addr); err == nil {
		t.Fatal("probe passed after the password file changed to a password the broker does not know")
	}
	if err := os.WriteFile(s.pass, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := probe(sec, s.addr); err != nil {
		t.Fatalf("probe after the file was changed back (no newline): %v", err)
	}
}
