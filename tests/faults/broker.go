package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
)

// broker is the Kafka a faults cluster runs on, in one of three forms:
//
//   - the embedded broker as a process of its own (`sluice dev kafka` with
//     a data dir, which kfake reloads after a SIGKILL too): the default;
//   - a real Apache Kafka of the suite's own, started by deploy/kafka's
//     kafka-up.sh on free ports and a run dir of its own, killed with
//     KAFKA_KILL=1 kafka-down.sh and started again on its data with
//     KAFKA_KEEP_DATA=1 kafka-up.sh: when SLUICE_TEST_KAFKA is set and the
//     row kills the broker;
//   - the shared real broker of SLUICE_TEST_KAFKA, for the other rows.
type broker struct {
	t    testing.TB
	Addr string
	// Kind says which form: "embedded", "kafka" (own) or "shared".
	Kind string

	proc   *procs.Proc // embedded
	runDir string      // own real Kafka
	env    []string    // own real Kafka: the scripts' variables
}

// startBroker starts the broker a row needs; own is true when the row
// kills it.
func startBroker(t testing.TB, own bool) *broker {
	t.Helper()
	b := &broker{t: t}
	shared := os.Getenv(sluicetest.KafkaEnv)
	switch {
	case shared != "" && !own:
		b.Kind, b.Addr = "shared", shared
	case shared != "":
		b.Kind = "kafka"
		// Not t.TempDir(): the row's name puts a comma in its path, and
		// Kafka's log.dirs is a comma-separated list.
		dir, err := os.MkdirTemp("", "sluice-faults-kafka-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		b.runDir = dir
		b.Addr = sluicetest.FreeAddr(t)
		b.env = append(os.Environ(),
			"KAFKA_BOOTSTRAP="+b.Addr,
			"KAFKA_CONTROLLER="+sluicetest.FreeAddr(t),
			"KAFKA_SASL_SSL="+sluicetest.FreeAddr(t),
			"KAFKA_MTLS="+sluicetest.FreeAddr(t),
			"KAFKA_RUN_DIR="+b.runDir,
			"KAFKA_STOP_TIMEOUT=10",
		)
		if os.Getenv("KAFKA_HEAP_OPTS") == "" {
			b.env = append(b.env, "KAFKA_HEAP_OPTS=-Xmx256m -Xms128m")
		}
		b.script("kafka-up.sh")
		t.Cleanup(func() { b.script("kafka-down.sh") })
	default:
		b.Kind, b.Addr = "embedded", sluicetest.FreeAddr(t)
		b.proc = procs.NewProc(t, "broker", "dev", "kafka", "--listen", b.Addr, "--data-dir", filepath.Join(t.TempDir(), "kafka"))
		b.Start()
	}
	return b
}

// script runs one of deploy/kafka's scripts with the broker's variables
// (and extra ones), failing the test if it fails.
func (b *broker) script(name string, extra ...string) {
	b.t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot(), "deploy", "kafka", name))
	cmd.Env = append(append([]string(nil), b.env...), extra...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// Killable reports whether the suite can kill and restart this broker.
func (b *broker) Killable() bool { return b.Kind != "shared" }

// Kill kills the broker with SIGKILL.
func (b *broker) Kill() {
	b.t.Helper()
	switch b.Kind {
	case "embedded":
		b.proc.Kill()
	case "kafka":
		b.script("kafka-down.sh", "KAFKA_KILL=1")
	default:
		b.t.Fatal("the shared broker is not the suite's to kill")
	}
}

// Start starts the broker (again, on the same address and data) and waits
// until it answers.
func (b *broker) Start() {
	b.t.Helper()
	switch b.Kind {
	case "embedded":
		before := len(b.proc.StdoutLines())
		b.proc.Start()
		sluicetest.Eventually(b.t, 30*time.Second, func() (bool, string) {
			if !b.proc.Running() {
				b.t.Fatalf("the broker exited: %q", b.proc.LogLines())
			}
			lines := b.proc.StdoutLines()
			for _, l := range lines[min(before, len(lines)):] {
				if strings.HasPrefix(l, "sluice dev kafka ready") {
					return true, ""
				}
			}
			return false, "broker not ready"
		})
	case "kafka":
		b.script("kafka-up.sh", "KAFKA_KEEP_DATA=1")
	}
}

// repoRoot is the main module's directory, two levels above this package.
func repoRoot() string {
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(fmt.Sprint("repo root: ", err))
	}
	return dir
}
