package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
)

// runFailing runs the sluice binary with args, expects it to exit with an
// error within a minute, and returns its output.
func runFailing(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t0 := time.Now()
	cmd := exec.CommandContext(ctx, procs.Binary(), args...)
	cmd.Env = procs.SluiceEnv()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("sluice %s still ran after a minute:\n%s", strings.Join(args, " "), out)
	}
	if err == nil {
		t.Fatalf("sluice %s exited 0:\n%s", strings.Join(args, " "), out)
	}
	t.Logf("sluice %s failed in %v", args[0], time.Since(t0).Round(time.Millisecond))
	return string(out)
}

// TestKafkaSecurityBadFlagsStopStartup: bad Kafka security settings stop
// the binary at once with a message naming the flag and the file — no
// broker is needed to tell.
func TestKafkaSecurityBadFlagsStopStartup(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"agent", "--nats", "nats://127.0.0.1:1", "--kafka", "127.0.0.1:1", "--kafka-tls-cert", missing},
			"--kafka-tls-cert " + missing + " is given without --kafka-tls-key"},
		{[]string{"coordinator", "--nats", "nats://127.0.0.1:1", "--kafka", "127.0.0.1:1", "--kafka-tls-ca", missing},
			"--kafka-tls-ca: open " + missing + ": no such file or directory"},
		{[]string{"coordinator", "--nats", "nats://127.0.0.1:1", "--kafka", "127.0.0.1:1", "--kafka-sasl-mechanism", "OAUTHBEARER",
			"--kafka-sasl-username", "u", "--kafka-sasl-password-file", missing},
			`--kafka-sasl-mechanism "OAUTHBEARER" is not supported`},
	} {
		t.Run(tc.args[0]+" "+tc.args[len(tc.args)-2], func(t *testing.T) {
			if out := runFailing(t, tc.args...); !strings.Contains(out, tc.want) {
				t.Errorf("output does not say %q:\n%s", tc.want, out)
			}
		})
	}
}

// TestKafkaSecurityWrongPasswordStopsBinary: against the secured real
// broker, a coordinator and an agent given a wrong SASL password exit
// quickly, saying which broker refused it and why.
func TestKafkaSecurityWrongPasswordStopsBinary(t *testing.T) {
	t.Parallel()
	if !sluicetest.SecuredKafka() || !sluicetest.KafkaSecurity().Config.SASLOn() {
		t.Skipf("needs a secured real broker with SASL: %s and %s (make test-kafka)", sluicetest.KafkaEnv, sluicetest.KafkaSecurityEnv)
	}
	be := sluicetest.StartBackends(t)
	wrong := filepath.Join(t.TempDir(), "wrong-password")
	if err := os.WriteFile(wrong, []byte("not-the-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The later flag wins: the broker's settings with a wrong password.
	sec := append(sluicetest.SecurityFlags(be.Brokers), "--kafka-sasl-password-file="+wrong)
	want := "kafka " + be.Brokers + ": SASL authentication failed"
	for _, args := range [][]string{
		{"coordinator", "--listen", sluicetest.FreeAddr(t), "--group-id", procs.UniquePrefix(t)},
		{"agent", "--id", "agent-1", "--group-id", procs.UniquePrefix(t)},
	} {
		args = append(append(args, "--nats", be.NATSURL, "--kafka", be.Brokers), sec...)
		if out := runFailing(t, args...); !strings.Contains(out, want) {
			t.Errorf("%s: output does not say %q:\n%s", args[0], want, out)
		}
	}
}
