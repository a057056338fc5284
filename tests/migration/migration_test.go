package migration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// env is where the Kafka Connect worker, the Sluice and the broker are,
// and the sluice binary that migrates.
type env struct {
	connect, sluice, kafka, bin string
}

// setup reads the environment run.sh sets, or skips the test.
func setup(t *testing.T) env {
	t.Helper()
	e := env{os.Getenv("MIGRATION_CONNECT_URL"), os.Getenv("MIGRATION_SLUICE_URL"), os.Getenv("MIGRATION_KAFKA"), os.Getenv("MIGRATION_SLUICE_BIN")}
	if e.connect == "" || e.sluice == "" || e.kafka == "" || e.bin == "" {
		t.Skip("needs a Kafka Connect worker and a Sluice on one broker: run `make conformance` " +
			"(or set MIGRATION_CONNECT_URL, MIGRATION_SLUICE_URL, MIGRATION_KAFKA and MIGRATION_SLUICE_BIN)")
	}
	return e
}

// call sends one REST request and returns the status and body.
func call(t *testing.T, method, url string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// mustCall is call that fails the test on a status of 300 or more.
func mustCall(t *testing.T, method, url string, body any) []byte {
	t.Helper()
	status, data := call(t, method, url, body)
	if status >= 300 {
		t.Fatalf("%s %s: %d %s", method, url, status, data)
	}
	return data
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not after %s: %s", d, why)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// offsets is a connector's GET …/offsets body, canonical.
func offsets(t *testing.T, base, name string) string {
	t.Helper()
	return canonical(t, mustCall(t, http.MethodGet, base+"/connectors/"+name+"/offsets", nil))
}

// canonical is a JSON document compact with its objects' keys sorted, so
// that Kafka Connect's and Sluice's answers compare as strings.
func canonical(t *testing.T, data []byte) string {
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

// status is a connector's state and its number of tasks.
func status(t *testing.T, base, name string) (string, int) {
	t.Helper()
	status, data := call(t, http.MethodGet, base+"/connectors/"+name+"/status", nil)
	if status != http.StatusOK {
		return fmt.Sprint(status), 0
	}
	var st struct {
		Connector struct {
			State string `json:"state"`
		} `json:"connector"`
		Tasks []json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	return st.Connector.State, len(st.Tasks)
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

// migrate runs the sluice binary's migrate for one connector and returns
// its one result.
func (e env) migrate(t *testing.T, name string) result {
	t.Helper()
	cmd := exec.Command(e.bin, "migrate", "--from", e.connect, "--url", e.sluice, "--connectors", name, "-o", "json")
	// No CLI config of the person running the tests may leak in.
	cmd.Env = append(os.Environ(), "SLUICE_CONFIG="+filepath.Join(t.TempDir(), "config.yaml"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("sluice migrate: %v\n%s%s", err, out.String(), errOut.String())
	}
	t.Logf("sluice migrate:\n%s", errOut.String())
	var rs []result
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil || len(rs) != 1 {
		t.Fatalf("sluice migrate printed %s (%v)", out.String(), err)
	}
	return rs[0]
}

// cleanup deletes the connector on both sides when the test ends.
func (e env) cleanup(t *testing.T, name string) {
	t.Cleanup(func() {
		for _, base := range []string{e.connect, e.sluice} {
			req, _ := http.NewRequest(http.MethodDelete, base+"/connectors/"+name, nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	})
}

// client is a Kafka client of the broker, closed when the test ends.
func (e env) client(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(e.kafka)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// createTopic creates a one-partition topic.
func (e env) createTopic(t *testing.T, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(e.client(t)).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// produce writes the values to the topic, in order.
func (e env) produce(t *testing.T, topic string, values []string) {
	t.Helper()
	cl := e.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
	}
}

// readTopic reads the topic from its start until it has want records,
// then for settle more, so that a record written twice shows.
func (e env) readTopic(t *testing.T, topic string, want int, settle time.Duration) []string {
	t.Helper()
	cl := e.client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	deadline := time.Now().Add(90 * time.Second)
	var settled time.Time
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		now := time.Now()
		if len(got) >= want && settled.IsZero() {
			settled = now.Add(settle)
		}
		if (!settled.IsZero() && now.After(settled)) || now.After(deadline) {
			return got
		}
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

// TestMigrateFileSource: a FileStreamSource on Kafka Connect that has read
// its file's first 50 lines is migrated; Sluice writes exactly the 30
// lines appended afterwards to the topic (80 records, none twice, none
// lost), and the Kafka Connect connector is left STOPPED.
func TestMigrateFileSource(t *testing.T) {
	e := setup(t)
	name := fmt.Sprintf("migrate-source-%d", time.Now().UnixNano())
	e.cleanup(t, name)
	e.createTopic(t, name)
	in := filepath.Join(t.TempDir(), "in.txt")
	first := lines("line", 1, 50)
	if err := os.WriteFile(in, []byte(strings.Join(first, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	size := len(strings.Join(first, "\n")) + 1
	mustCall(t, http.MethodPost, e.connect+"/connectors", map[string]any{"name": name, "config": map[string]string{
		"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": in, "topic": name, "tasks.max": "1"}})
	want := canonical(t, fmt.Appendf(nil, `{"offsets":[{"partition":{"filename":%q},"offset":{"position":%d}}]}`, in, size))
	eventually(t, 90*time.Second, func() (bool, string) {
		got := offsets(t, e.connect, name)
		return got == want, got
	})

	r := e.migrate(t, name)
	if r != (result{Name: name, Type: "source", Partitions: 1, State: "RUNNING", Result: "migrated"}) {
		t.Fatalf("migrate: %+v", r)
	}
	if st, tasks := status(t, e.connect, name); st != "STOPPED" || tasks != 0 {
		t.Fatalf("on Kafka Connect: %s with %d tasks, want STOPPED with none", st, tasks)
	}
	if got := offsets(t, e.sluice, name); got != want {
		t.Fatalf("Sluice's offsets: %s, want %s", got, want)
	}

	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.Join(lines("line", 51, 80), "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got := e.readTopic(t, name, 80, 5*time.Second)
	if strings.Join(got, ",") != strings.Join(lines("line", 1, 80), ",") {
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
	e.cleanup(t, name)
	e.createTopic(t, name)
	e.produce(t, name, lines("rec", 1, 10))
	out := filepath.Join(t.TempDir(), "out.txt")
	mustCall(t, http.MethodPost, e.connect+"/connectors", map[string]any{"name": name, "config": map[string]string{
		"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "file": out, "topics": name, "tasks.max": "1"}})
	want := canonical(t, fmt.Appendf(nil, `{"offsets":[{"partition":{"kafka_topic":%q,"kafka_partition":0},"offset":{"kafka_offset":10}}]}`, name))
	eventually(t, 90*time.Second, func() (bool, string) {
		got := offsets(t, e.connect, name)
		return got == want, got
	})
	if data, _ := os.ReadFile(out); string(data) != strings.Join(lines("rec", 1, 10), "\n")+"\n" {
		t.Fatalf("Kafka Connect's sink file: %q", data)
	}

	r := e.migrate(t, name)
	if r != (result{Name: name, Type: "sink", Partitions: 1, State: "RUNNING", Result: "migrated"}) {
		t.Fatalf("migrate: %+v", r)
	}
	if st, tasks := status(t, e.connect, name); st != "STOPPED" || tasks != 0 {
		t.Fatalf("on Kafka Connect: %s with %d tasks, want STOPPED with none", st, tasks)
	}
	if got := offsets(t, e.sluice, name); got != want {
		t.Fatalf("Sluice's offsets: %s, want %s", got, want)
	}

	e.produce(t, name, lines("rec", 11, 20))
	wantFile := strings.Join(lines("rec", 1, 20), "\n") + "\n"
	eventually(t, 90*time.Second, func() (bool, string) {
		data, _ := os.ReadFile(out)
		return len(data) >= len(wantFile), string(data)
	})
	time.Sleep(5 * time.Second) // a record written twice would show by now
	if data, _ := os.ReadFile(out); string(data) != wantFile {
		t.Fatalf("the sink file: %q, want rec-001 … rec-020 once each", data)
	}
}
