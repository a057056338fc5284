package migration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// env is the Kafka Connect worker and the Sluice, both on one broker, and
// the sluice binary that migrates from one to the other.
type env struct {
	connect, sluice *sluicetest.Cluster
	bin             string
}

// setup reads the environment run.sh sets, or skips the test.
func setup(t *testing.T) env {
	t.Helper()
	connect, sluice, kafka, bin := os.Getenv("MIGRATION_CONNECT_URL"), os.Getenv("MIGRATION_SLUICE_URL"), os.Getenv("MIGRATION_KAFKA"), os.Getenv("MIGRATION_SLUICE_BIN")
	if connect == "" || sluice == "" || kafka == "" || bin == "" {
		t.Skip("needs a Kafka Connect worker and a Sluice on one broker: run `make conformance` " +
			"(or set MIGRATION_CONNECT_URL, MIGRATION_SLUICE_URL, MIGRATION_KAFKA and MIGRATION_SLUICE_BIN)")
	}
	// Clusters the test did not start: only their URLs and broker, for
	// the harness's REST and Kafka helpers.
	return env{&sluicetest.Cluster{T: t, URL: connect, Brokers: kafka}, &sluicetest.Cluster{T: t, URL: sluice, Brokers: kafka}, bin}
}

// offsets is a connector's GET …/offsets body, canonical.
func offsets(c *sluicetest.Cluster, name string) string {
	c.T.Helper()
	return canonical(c.T, c.Must(http.StatusOK, http.MethodGet, "/connectors/"+name+"/offsets", nil).Body)
}

// canonical is a JSON document compact with its objects' keys sorted, so
// that Kafka Connect's and Sluice's answers compare as strings.
func canonical(t testing.TB, data []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// result is one connector in `sluice migrate -o json`.
type result struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Partitions int    `json:"partitions"`
	State      string `json:"state"`
	Result     string `json:"result"`
	Detail     string `json:"detail"`
}

// migrate creates the connector on Kafka Connect, waits until its offsets
// there are want, runs the sluice binary's migrate for it, and checks what
// a user sees: the report, the connector STOPPED with no tasks on Kafka
// Connect, and the same offsets in Sluice.
func (e env) migrate(t *testing.T, name, class string, config map[string]string, typ, want string) {
	t.Helper()
	t.Cleanup(func() {
		for _, c := range []*sluicetest.Cluster{e.connect, e.sluice} {
			c.Do(http.MethodDelete, "/connectors/"+name, nil)
		}
	})
	config["connector.class"], config["tasks.max"] = class, "1"
	e.connect.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": name, "config": config})
	sluicetest.Eventually(t, 90*time.Second, func() (bool, string) {
		got := offsets(e.connect, name)
		return got == want, got
	})

	cmd := exec.Command(e.bin, "migrate", "--from", e.connect.URL, "--url", e.sluice.URL, "--connectors", name, "-o", "json")
	// No CLI config of the person running the tests may leak in.
	cmd.Env = append(os.Environ(), "SLUICE_CONFIG="+filepath.Join(t.TempDir(), "config.yaml"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("sluice migrate: %v\n%s%s", err, out.String(), errOut.String())
	}
	t.Logf("sluice migrate:\n%s", errOut.String())
	var rs []result
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil || len(rs) != 1 ||
		rs[0] != (result{Name: name, Type: typ, Partitions: 1, State: "RUNNING", Result: "migrated"}) {
		t.Fatalf("sluice migrate printed %s (%v)", out.String(), err)
	}
	if st, ok := e.connect.Status(name); !ok || st.Connector.State != "STOPPED" || len(st.Tasks) != 0 {
		t.Fatalf("on Kafka Connect: %+v, want STOPPED with no tasks", st)
	}
	if got := offsets(e.sluice, name); got != want {
		t.Fatalf("Sluice's offsets: %s, want %s", got, want)
	}
}

// lines are "<prefix>-<i>" for i in [from, to].
func lines(prefix string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("%s-%03d", prefix, i))
	}
	return out
}

// values are the records' values.
func values(rs []sluicetest.Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, string(r.Value))
	}
	return out
}

// settle is how long a test waits, once what it expects is there, for
// anything written twice to show too.
const settle = 5 * time.Second

// TestMigrateFileSource: a FileStreamSource on Kafka Connect that has read
// its file's first 50 lines is migrated; Sluice writes exactly the 30
// lines appended afterwards to the topic (80 records, none twice, none
// lost), and the Kafka Connect connector is left STOPPED.
func TestMigrateFileSource(t *testing.T) {
	migrateFileSource(t, fmt.Sprintf("migrate-source-%d", time.Now().UnixNano()), nil)
}

// TestMigrateFileSourceOwnOffsetsTopic is TestMigrateFileSource for a
// connector whose offsets topic is its own (offsets.storage.topic): Sluice
// takes its position over and goes on writing it there.
func TestMigrateFileSourceOwnOffsetsTopic(t *testing.T) {
	name := fmt.Sprintf("migrate-own-%d", time.Now().UnixNano())
	migrateFileSource(t, name, map[string]string{"offsets.storage.topic": name + "-offsets"})
}

// migrateFileSource runs TestMigrateFileSource's steps for a connector
// named name, its config with extra.
func migrateFileSource(t *testing.T, name string, extra map[string]string) {
	e := setup(t)
	sluicetest.CreateTopic(t, e.sluice.Brokers, name, 1)
	in := filepath.Join(t.TempDir(), "in.txt")
	first := strings.Join(lines("line", 1, 50), "\n") + "\n"
	if err := os.WriteFile(in, []byte(first), 0o644); err != nil {
		t.Fatal(err)
	}
	want := canonical(t, fmt.Appendf(nil, `{"offsets":[{"partition":{"filename":%q},"offset":{"position":%d}}]}`, in, len(first)))
	config := map[string]string{"file": in, "topic": name}
	maps.Copy(config, extra)
	e.migrate(t, name, "org.apache.kafka.connect.file.FileStreamSourceConnector", config, "source", want)

	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.Join(lines("line", 51, 80), "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	sluicetest.Eventually(t, 90*time.Second, func() (bool, string) {
		n := len(e.sluice.ReadTopic(name))
		return n >= 80, fmt.Sprintf("%d records", n)
	})
	sluicetest.Consistently(t, settle, func() (bool, string) {
		n := len(e.sluice.ReadTopic(name))
		return n <= 80, fmt.Sprintf("%d records, want 80: a line was written twice", n)
	})
	if got := values(e.sluice.ReadTopic(name)); strings.Join(got, ",") != strings.Join(lines("line", 1, 80), ",") {
		t.Fatalf("the topic has %d records, want line-001 … line-080 once each:\n%v", len(got), got)
	}
}

// TestMigrateFileSink: a FileStreamSink on Kafka Connect that has written
// a topic's first 10 records is migrated; Sluice's sink, writing the same
// file, goes on from the group's position: the file ends up with the 20
// records once each.
func TestMigrateFileSink(t *testing.T) {
	e := setup(t)
	name := fmt.Sprintf("migrate-sink-%d", time.Now().UnixNano())
	sluicetest.CreateTopic(t, e.sluice.Brokers, name, 1)
	e.sluice.Produce(name, lines("rec", 1, 10)...)
	out := filepath.Join(t.TempDir(), "out.txt")
	want := canonical(t, fmt.Appendf(nil, `{"offsets":[{"partition":{"kafka_topic":%q,"kafka_partition":0},"offset":{"kafka_offset":10}}]}`, name))
	e.migrate(t, name, "org.apache.kafka.connect.file.FileStreamSinkConnector", map[string]string{"file": out, "topics": name}, "sink", want)
	if data, _ := os.ReadFile(out); string(data) != strings.Join(lines("rec", 1, 10), "\n")+"\n" {
		t.Fatalf("Kafka Connect's sink file: %q", data)
	}

	e.sluice.Produce(name, lines("rec", 11, 20)...)
	wantFile := strings.Join(lines("rec", 1, 20), "\n") + "\n"
	sluicetest.Eventually(t, 90*time.Second, func() (bool, string) {
		data, _ := os.ReadFile(out)
		return len(data) >= len(wantFile), string(data)
	})
	sluicetest.Consistently(t, settle, func() (bool, string) {
		data, _ := os.ReadFile(out)
		return len(data) <= len(wantFile), fmt.Sprintf("the sink file grew past rec-001 … rec-020: %q", data)
	})
	if data, _ := os.ReadFile(out); string(data) != wantFile {
		t.Fatalf("the sink file: %q, want rec-001 … rec-020 once each", data)
	}
}
