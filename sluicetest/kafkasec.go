package sluicetest

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/embedded"
	"github.com/sluice-io/sluice/shared/kafkasec"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/testca"
)

// KafkaSecurityEnv names the environment variable that secures the tests'
// connections to the real broker of KafkaEnv: the path of a file of Sluice
// flags, one flag=value a line without the dashes (kafka-tls-ca=…,
// kafka-sasl-mechanism=…), as deploy/kafka/kafka-up.sh writes them for its
// secured listeners (.cache/kafka-run/security/sasl_ssl.env, mtls.env).
// Every client the tests make of that broker, in process or in a sluice
// binary they start, uses these settings.
const KafkaSecurityEnv = "SLUICE_TEST_KAFKA_SECURITY"

// KafkaMTLSEnv names the environment variable with the flag file of the
// real broker's mTLS listener (kafka-up.sh's mtls.env): its kafka= line
// names the listener, and clients of that address use its settings.
const KafkaMTLSEnv = "SLUICE_TEST_KAFKA_MTLS"

// TestSecurity is the loaded KafkaSecurityEnv file.
type TestSecurity struct {
	// Brokers is the file's kafka= line (may be empty).
	Brokers string
	// Options are the settings as given; Config is them loaded.
	Options kafkasec.Options
	Config  *kafkasec.Config
	// Flags are the settings as command-line flags of sluice.
	Flags []string
}

// envSecurity reads the flag file an environment variable names, once.
type envSecurity struct {
	env  string
	once sync.Once
	sec  *TestSecurity
	err  error
}

var (
	saslSecurity = &envSecurity{env: KafkaSecurityEnv}
	mtlsSecurity = &envSecurity{env: KafkaMTLSEnv}
)

// get is the loaded file, nil when the variable is unset. A file that
// cannot be read or loaded panics: every test of the run would fail on it
// anyway, and this way the message says why once.
func (e *envSecurity) get() *TestSecurity {
	e.once.Do(func() {
		if file := os.Getenv(e.env); file != "" {
			e.sec, e.err = LoadTestSecurity(file)
		}
	})
	if e.err != nil {
		panic(fmt.Sprintf("%s: %v", e.env, e.err))
	}
	return e.sec
}

// KafkaSecurity is the setting KafkaSecurityEnv names, for the broker
// KafkaEnv names; nil when the variable is unset.
func KafkaSecurity() *TestSecurity { return saslSecurity.get() }

// KafkaMTLS is the setting KafkaMTLSEnv names, with the address of the
// mTLS listener in Brokers; nil when the variable is unset.
func KafkaMTLS() *TestSecurity { return mtlsSecurity.get() }

// securityOf is the test setting for a client of brokers, if any.
func securityOf(brokers string) *TestSecurity {
	if s := KafkaSecurity(); s != nil && brokers == os.Getenv(KafkaEnv) {
		return s
	}
	if s := KafkaMTLS(); s != nil && brokers == s.Brokers {
		return s
	}
	if s, ok := registered.Load(brokers); ok {
		return s.(*TestSecurity)
	}
	return nil
}

// LoadTestSecurity reads a file of flag=value lines (see
// KafkaSecurityEnv) and loads its settings.
func LoadTestSecurity(file string) (*TestSecurity, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &TestSecurity{}
	o := &s.Options
	strs := map[string]*string{"kafka-tls-ca": &o.CAFile, "kafka-tls-cert": &o.CertFile, "kafka-tls-key": &o.KeyFile,
		"kafka-sasl-mechanism": &o.SASLMechanism, "kafka-sasl-username": &o.SASLUsername, "kafka-sasl-password-file": &o.SASLPasswordFile}
	bools := map[string]*bool{"kafka-tls": &o.TLS, "kafka-tls-insecure-skip-verify": &o.InsecureSkipVerify}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want flag=value, got %q", file, n, line)
		}
		if k == "kafka" {
			s.Brokers = v
			continue
		}
		if p, ok := strs[k]; ok {
			*p = v
		} else if p, ok := bools[k]; ok {
			*p = v == "true"
		} else {
			return nil, fmt.Errorf("%s:%d: unknown flag %q", file, n, k)
		}
		s.Flags = append(s.Flags, "--"+k+"="+v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if s.Config, err = kafkasec.Load(s.Options); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// SecuredKafka reports whether the tests run against a secured real
// broker.
func SecuredKafka() bool { return RealKafka() && KafkaSecurity() != nil }

// SecurityFor is the Kafka security of a client of brokers: the
// KafkaSecurityEnv setting for the real broker the tests run against, the
// KafkaMTLSEnv one for its mTLS listener, nil (plaintext) for any other,
// such as an embedded broker a test started.
func SecurityFor(brokers string) *kafkasec.Config {
	if s := securityOf(brokers); s != nil {
		return s.Config
	}
	return nil
}

// SecurityFlags are the sluice flags that secure a process's connection to
// brokers (see SecurityFor).
func SecurityFlags(brokers string) []string {
	if s := securityOf(brokers); s != nil {
		return s.Flags
	}
	return nil
}

// ClientOpts are the options of a test's own Kafka client of brokers:
// kafkautil.ClientOpts with the brokers' security.
func ClientOpts(brokers, clientID string) []kgo.Opt {
	return kafkautil.ClientOpts(brokers, clientID, SecurityFor(brokers))
}

// registered are the brokers a test started secured (StartSecuredBackends),
// by address.
var registered sync.Map

// StartSecuredBackends is StartBackends with an embedded broker of its own
// that listens with TLS (a CA made for the test) and requires SASL
// SCRAM-SHA-256, whatever KafkaEnv says, so that the embedded-broker run
// (make test) covers secured connections too. The cluster's and the tests'
// clients of it use the setting returned (see SecurityFor).
func StartSecuredBackends(t testing.TB) (Backends, *TestSecurity) {
	t.Helper()
	dir := t.TempDir()
	ca, err := testca.NewCA(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Server("broker")
	if err != nil {
		t.Fatal(err)
	}
	pass := filepath.Join(dir, "password")
	if err := os.WriteFile(pass, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kc, err := embedded.Kafka("", "", kfake.TLS(&tls.Config{Certificates: []tls.Certificate{srv.TLS}, MinVersion: tls.VersionTLS12}),
		kfake.EnableSASL(), kfake.Superuser(kafkasec.MechanismSCRAMSHA256, "sluice", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	ns, err := embedded.NATS("", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	s := &TestSecurity{Brokers: kc.ListenAddrs()[0], Options: kafkasec.Options{CAFile: ca.CertFile,
		SASLMechanism: kafkasec.MechanismSCRAMSHA256, SASLUsername: "sluice", SASLPasswordFile: pass}}
	if s.Config, err = kafkasec.Load(s.Options); err != nil {
		t.Fatal(err)
	}
	s.Flags = []string{"--kafka-tls-ca=" + ca.CertFile, "--kafka-sasl-mechanism=" + kafkasec.MechanismSCRAMSHA256,
		"--kafka-sasl-username=sluice", "--kafka-sasl-password-file=" + pass}
	registered.Store(s.Brokers, s)
	t.Cleanup(func() { registered.Delete(s.Brokers) })
	return Backends{NATSURL: ns.ClientURL(), Brokers: s.Brokers}, s
}
