package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// Class names and aliases of the built-in connectors and converters.
const (
	classFileSource      = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	classFileSink        = "org.apache.kafka.connect.file.FileStreamSinkConnector"
	classGenerator       = "io.sluice.connect.generator.GeneratorSourceConnector"
	classJSONConverter   = "org.apache.kafka.connect.json.JsonConverter"
	classBytesConverter  = "org.apache.kafka.connect.converters.ByteArrayConverter"
	classStringConverter = "org.apache.kafka.connect.storage.StringConverter"
)

// props builds a config map from key, value pairs.
func cfgOf(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// with returns a copy of m with the key, value pairs set.
func cfgWith(m map[string]string, kv ...string) map[string]string {
	out := cfgOf(kv...)
	for k, v := range m {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}

func fileSourceCfg(file, topic string) map[string]string {
	return cfgOf("connector.class", classFileSource, "file", file, "topic", topic)
}

func fileSinkCfg(file, topic string) map[string]string {
	return cfgOf("connector.class", "FileStreamSink", "file", file, "topics", topic)
}

// generator is an unlimited, slow generator: enough to keep tasks busy
// without filling the broker.
func generatorCfg(topic string, kv ...string) map[string]string {
	return cfgWith(cfgOf("connector.class", classGenerator, "topic", topic, "rate", "50"), kv...)
}

// create creates a connector and fails the test unless it answers 201.
func mustCreate(c *sluicetest.Cluster, name string, config map[string]string, initialState string) sluicetest.Response {
	c.T.Helper()
	body := map[string]any{"name": name, "config": config}
	if initialState != "" {
		body["initial_state"] = initialState
	}
	return c.Must(http.StatusCreated, "POST", "/connectors", body)
}

// wantError checks an error answer: its status, and a JSON error body whose
// error_code equals it and whose message is exactly msg.
func wantError(t testing.TB, r sluicetest.Response, status int, msg string) {
	t.Helper()
	var body struct {
		ErrorCode *int    `json:"error_code"`
		Message   *string `json:"message"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("got %s, want a JSON error body: %v", r, err)
	}
	if r.Status != status || body.ErrorCode == nil || *body.ErrorCode != status || body.Message == nil || *body.Message != msg {
		t.Fatalf("got %s,\nwant %d %q", r, status, msg)
	}
}

// wantJSON checks that r has status and a body equal, as JSON, to want.
func wantJSON(t testing.TB, r sluicetest.Response, status int, want string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("got %s, want status %d", r, status)
	}
	var got, exp any
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("bad expectation %s: %v", want, err)
	}
	g, _ := json.Marshal(got)
	e, _ := json.Marshal(exp)
	if string(g) != string(e) {
		t.Fatalf("got  %s\nwant %s", g, e)
	}
}

// wantNoBody checks a bodyless success answer.
func wantNoBody(t testing.TB, r sluicetest.Response, status int) {
	t.Helper()
	if r.Status != status || len(r.Body) != 0 {
		t.Fatalf("got %s, want %d with no body", r, status)
	}
}

// taskWorkers maps task id → worker id of a status.
func taskWorkers(s sluicetest.Status) map[int]string {
	out := map[int]string{}
	for _, ts := range s.Tasks {
		out[ts.ID] = ts.WorkerID
	}
	return out
}

// statusRecord is a status-topic record value (DESIGN §2).
type statusRecord struct {
	State      string `json:"state"`
	WorkerID   string `json:"worker_id"`
	Generation int64  `json:"generation"`
}

// taskGenerations reads the status topic and returns, for each task of
// connector, every generation its status records carried. A task restarted
// by Sluice runs under a new generation, so an unchanged set means the task
// kept running.
func taskGenerations(c *sluicetest.Cluster, connector string) map[int]map[int64]bool {
	c.T.Helper()
	out := map[int]map[int64]bool{}
	prefix := "status-task-" + connector + "-"
	for _, r := range c.ReadTopic(c.Prefix + "-status") {
		key := string(r.Key)
		if !strings.HasPrefix(key, prefix) || r.Value == nil {
			continue
		}
		var n int
		if _, err := fmt.Sscanf(key[len(prefix):], "%d", &n); err != nil || fmt.Sprint(n) != key[len(prefix):] {
			continue
		}
		var st statusRecord
		if err := json.Unmarshal(r.Value, &st); err != nil {
			c.T.Fatalf("status record %s: %v", r.Value, err)
		}
		if out[n] == nil {
			out[n] = map[int64]bool{}
		}
		out[n][st.Generation] = true
	}
	return out
}

func maxGen(gens map[int64]bool) int64 {
	var m int64
	for g := range gens {
		m = max(m, g)
	}
	return m
}

func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendLines(t *testing.T, path string, lines []string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

// numbered returns n distinct lines starting at from.
func numbered(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("line %04d %s", from+i, strings.Repeat("y", (from+i)%13))
	}
	return out
}

// waitFile waits until path holds exactly want, line for line.
func waitFile(t *testing.T, path string, want []string) {
	t.Helper()
	var last string
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		data, _ := os.ReadFile(path)
		got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(data) == 0 {
			got = nil
		}
		if len(got) > len(want) {
			// Output only grows: more lines than wanted is a duplicate
			// that waiting will not cure.
			last = fmt.Sprintf("%d lines, want %d", len(got), len(want))
			return true, ""
		}
		if len(got) != len(want) {
			return false, fmt.Sprintf("%d lines, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				last = fmt.Sprintf("line %d: %q, want %q", i+1, got[i], want[i])
				return true, ""
			}
		}
		return true, ""
	})
	if last != "" {
		t.Fatalf("%s: %s", filepath.Base(path), last)
	}
}

// validated is PUT /connector-plugins/{plugin}/config/validate's answer, as
// far as most tests look at it: the error count and each key's errors.
type validated struct {
	ErrorCount int
	// Errors maps each key that has errors to them.
	Errors map[string][]string
}

// validateConfig asks the validate endpoint about config, which must answer 200.
func validateConfig(c *sluicetest.Cluster, plugin string, config map[string]string) validated {
	c.T.Helper()
	var got struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Value struct {
				Name   string   `json:"name"`
				Errors []string `json:"errors"`
			} `json:"value"`
		} `json:"configs"`
	}
	c.Must(http.StatusOK, "PUT", "/connector-plugins/"+plugin+"/config/validate", config).JSON(c.T, &got)
	out := validated{ErrorCount: got.ErrorCount, Errors: map[string][]string{}}
	for _, cv := range got.Configs {
		if len(cv.Value.Errors) > 0 {
			out.Errors[cv.Value.Name] = cv.Value.Errors
		}
	}
	return out
}
