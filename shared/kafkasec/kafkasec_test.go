package kafkasec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/shared/kafkasec"
	"github.com/sluice-io/sluice/shared/testca"
)

// files are valid TLS material and a password file in a temp dir.
type files struct {
	dir, ca, cert, key, otherKey, pass, empty string
}

func setup(t *testing.T) files {
	t.Helper()
	dir := t.TempDir()
	ca, err := testca.NewCA(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Client("client", "sluice")
	if err != nil {
		t.Fatal(err)
	}
	other, err := ca.Client("other", "other")
	if err != nil {
		t.Fatal(err)
	}
	f := files{dir: dir, ca: ca.CertFile, cert: client.CertFile, key: client.KeyFile, otherKey: other.KeyFile,
		pass: filepath.Join(dir, "pass"), empty: filepath.Join(dir, "empty")}
	write(t, f.pass, "s3cret\n")
	write(t, f.empty, "\n")
	return f
}

func write(t *testing.T, file, s string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoadValid(t *testing.T) {
	f := setup(t)
	cases := []struct {
		name      string
		o         kafkasec.Options
		tls, sasl bool
		summary   string
		warnings  int
	}{
		{name: "zero is plaintext", o: kafkasec.Options{}, summary: "plaintext"},
		{name: "tls with system roots", o: kafkasec.Options{TLS: true}, tls: true, summary: "TLS"},
		{name: "a CA implies TLS", o: kafkasec.Options{CAFile: f.ca}, tls: true, summary: "TLS (CA " + f.ca + ")"},
		{name: "mTLS", o: kafkasec.Options{CAFile: f.ca, CertFile: f.cert, KeyFile: f.key}, tls: true,
			summary: "TLS (CA " + f.ca + ") with client certificate " + f.cert},
		{name: "insecure warns", o: kafkasec.Options{InsecureSkipVerify: true}, tls: true, summary: "TLS (certificates not verified)", warnings: 1},
		{name: "scram over tls", o: kafkasec.Options{CAFile: f.ca, SASLMechanism: "scram-sha-512", SASLUsername: "u", SASLPasswordFile: f.pass},
			tls: true, sasl: true, summary: "TLS (CA " + f.ca + "), SASL SCRAM-SHA-512 as u"},
		{name: "scram-256", o: kafkasec.Options{TLS: true, SASLMechanism: "SCRAM-SHA-256", SASLUsername: "u", SASLPasswordFile: f.pass},
			tls: true, sasl: true, summary: "TLS, SASL SCRAM-SHA-256 as u"},
		{name: "plain without tls warns", o: kafkasec.Options{SASLMechanism: "PLAIN", SASLUsername: "u", SASLPasswordFile: f.pass},
			sasl: true, summary: "SASL PLAIN as u", warnings: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kafkasec.Load(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if c.TLSOn() != tc.tls || c.SASLOn() != tc.sasl {
				t.Errorf("TLS %v SASL %v, want %v %v", c.TLSOn(), c.SASLOn(), tc.tls, tc.sasl)
			}
			if c.String() != tc.summary {
				t.Errorf("summary %q, want %q", c.String(), tc.summary)
			}
			if len(c.Warnings()) != tc.warnings {
				t.Errorf("warnings %q, want %d", c.Warnings(), tc.warnings)
			}
			if want := btoi(tc.tls) + btoi(tc.sasl); len(c.ClientOpts()) != want {
				t.Errorf("%d client options, want %d", len(c.ClientOpts()), want)
			}
			if strings.Contains(c.String(), "s3cret") {
				t.Error("the summary shows the password")
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestLoadBadInput checks that each bad setting is refused with a message
// naming the flag and the file.
func TestLoadBadInput(t *testing.T) {
	f := setup(t)
	notPEM := filepath.Join(f.dir, "not.pem")
	write(t, notPEM, "hello\n")
	missing := filepath.Join(f.dir, "missing.pem")
	cases := []struct {
		name string
		o    kafkasec.Options
		want []string
	}{
		{"missing CA file", kafkasec.Options{CAFile: missing}, []string{"--kafka-tls-ca", missing, "no such file"}},
		{"CA without certificates", kafkasec.Options{CAFile: notPEM}, []string{"--kafka-tls-ca", notPEM, "no PEM certificate"}},
		{"cert without key", kafkasec.Options{CertFile: f.cert}, []string{"--kafka-tls-cert", f.cert, "without --kafka-tls-key"}},
		{"key without cert", kafkasec.Options{KeyFile: f.key}, []string{"--kafka-tls-key", f.key, "without --kafka-tls-cert"}},
		{"unreadable key", kafkasec.Options{CertFile: f.cert, KeyFile: missing}, []string{"--kafka-tls-key", missing}},
		{"key of another certificate", kafkasec.Options{CertFile: f.cert, KeyFile: f.otherKey},
			[]string{"--kafka-tls-cert", f.cert, "--kafka-tls-key", f.otherKey, "not a valid certificate and key pair"}},
		{"cert file is not PEM", kafkasec.Options{CertFile: notPEM, KeyFile: f.key}, []string{"--kafka-tls-cert", notPEM}},
		{"unknown mechanism", kafkasec.Options{SASLMechanism: "GSSAPI", SASLUsername: "u", SASLPasswordFile: f.pass},
			[]string{"--kafka-sasl-mechanism", `"GSSAPI"`, "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"}},
		{"mechanism without user", kafkasec.Options{SASLMechanism: "PLAIN", SASLPasswordFile: f.pass}, []string{"needs --kafka-sasl-username"}},
		{"user without password file", kafkasec.Options{SASLMechanism: "SCRAM-SHA-512", SASLUsername: "u"}, []string{"needs --kafka-sasl-password-file"}},
		{"user without mechanism", kafkasec.Options{SASLUsername: "u", SASLPasswordFile: f.pass}, []string{"need --kafka-sasl-mechanism"}},
		{"missing password file", kafkasec.Options{SASLMechanism: "PLAIN", SASLUsername: "u", SASLPasswordFile: missing},
			[]string{"--kafka-sasl-password-file", missing}},
		{"empty password file", kafkasec.Options{SASLMechanism: "PLAIN", SASLUsername: "u", SASLPasswordFile: f.empty},
			[]string{"--kafka-sasl-password-file", f.empty, "empty"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kafkasec.Load(tc.o)
			if err == nil {
				t.Fatalf("loaded %v, want an error", c)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestLoadReportsEveryError checks that several bad settings are all
// reported at once, so a user fixes them in one go.
func TestLoadReportsEveryError(t *testing.T) {
	_, err := kafkasec.Load(kafkasec.Options{CertFile: "c.pem", SASLMechanism: "NOPE"})
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{"--kafka-tls-cert", `"NOPE"`, "--kafka-sasl-username"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}
