package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// Connector classes the offsets tests use.
const (
	fileSourceClass = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	fileSinkClass   = "org.apache.kafka.connect.file.FileStreamSinkConnector"
	generatorClass  = "io.sluice.connect.generator.GeneratorSourceConnector"
)

// The REST API's exact messages (spec §0, §5.2–§5.7).
const (
	msgAlterDefinite  = "The offsets for this connector have been altered successfully"
	msgAlterFramework = "The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses."
	msgResetDefinite  = "The offsets for this connector have been reset successfully"
	msgResetFramework = "The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."
	msgOffsetsMissing = "Partitions / offsets need to be provided for an alter offsets request"
	msgOffsetNull     = "Offset entries must not be null"
)

func msgNotStopped(name string) string {
	return "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/" + name + "/stop' endpoint"
}

func msgNotFound(name string) string { return "Connector " + name + " not found" }

func msgSinkAlterZombie(name string) string {
	return "Failed to alter consumer group offsets for connector " + name + " either because its tasks haven't stopped completely yet or the connector was resumed before the request to alter its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks."
}

func msgSinkResetZombie(name string) string {
	return "Failed to reset consumer group offsets for connector " + name + " either because its tasks haven't stopped completely yet or the connector was resumed before the request to reset its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks."
}

// offset is one entry of GET …/offsets, numbers kept as json.Number.
type offset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// getOffsets answers GET …/offsets, which must be 200.
func getOffsets(c *sluicetest.Cluster, name string) []offset {
	c.T.Helper()
	r := c.Must(http.StatusOK, "GET", "/connectors/"+name+"/offsets", nil)
	var body struct {
		Offsets []offset `json:"offsets"`
	}
	r.JSON(c.T, &body)
	if body.Offsets == nil {
		c.T.Fatalf("GET offsets of %s: no offsets list in %s", name, r.Body)
	}
	return body.Offsets
}

// canon renders offsets in a canonical order (keys sorted by encoding/json,
// entries sorted), so that two answers compare as strings.
func canon(t testing.TB, entries []offset) string {
	t.Helper()
	parts := make([]string, len(entries))
	for i, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		parts[i] = string(b)
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, ",") + "]"
}

// offs builds an offsets list from alternating partition and offset maps.
func offs(pairs ...map[string]any) []offset {
	out := make([]offset, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, offset{Partition: pairs[i], Offset: pairs[i+1]})
	}
	return out
}

// wantOffsets fails unless GET …/offsets shows exactly want, right now.
func wantOffsets(c *sluicetest.Cluster, name string, want []offset) {
	c.T.Helper()
	if got, w := canon(c.T, getOffsets(c, name)), canon(c.T, want); got != w {
		c.T.Fatalf("offsets of %s:\n got %s\nwant %s", name, got, w)
	}
}

// waitOffsets waits until GET …/offsets shows exactly want.
func waitOffsets(c *sluicetest.Cluster, name string, want []offset) {
	c.T.Helper()
	w := canon(c.T, want)
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		got := canon(c.T, getOffsets(c, name))
		return got == w, fmt.Sprintf("offsets of %s: %s, want %s", name, got, w)
	})
}

// patch sends PATCH …/offsets and checks status and message. t is the
// (sub)test that fails on a mismatch.
func patch(t testing.TB, c *sluicetest.Cluster, name string, body any, status int, msg string) {
	t.Helper()
	expect(t, c, "PATCH", "/connectors/"+name+"/offsets", body, status, msg)
}

// expect sends a request and checks its status and exact message.
func expect(t testing.TB, c *sluicetest.Cluster, method, path string, body any, status int, msg string) sluicetest.Response {
	t.Helper()
	r := sluicetest.Do(t, c.URL, method, path, body)
	if r.Status != status || r.Message() != msg {
		t.Fatalf("%s %s: got %s\nwant %d %q", method, path, r, status, msg)
	}
	return r
}

// body wraps entries as a PATCH body.
func body(entries ...offset) map[string]any { return map[string]any{"offsets": entries} }

// fileSource creates a file source connector reading file into topic.
func fileSource(c *sluicetest.Cluster, name, file, topic, initialState string) {
	c.T.Helper()
	req := map[string]any{"name": name, "config": map[string]string{
		"connector.class": fileSourceClass, "file": file, "topic": topic,
	}}
	if initialState != "" {
		req["initial_state"] = initialState
	}
	c.Must(http.StatusCreated, "POST", "/connectors", req)
}

// fileSink creates a file sink connector writing topic to file.
func fileSink(c *sluicetest.Cluster, name, topic, file, initialState string) {
	c.T.Helper()
	req := map[string]any{"name": name, "config": map[string]string{
		"connector.class": fileSinkClass, "file": file, "topics": topic,
	}}
	if initialState != "" {
		req["initial_state"] = initialState
	}
	c.Must(http.StatusCreated, "POST", "/connectors", req)
}

// lines makes n distinct lines numbered from first.
func lines(first, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("line %04d %s", first+i, strings.Repeat("z", (first+i)%7))
	}
	return out
}

// bytesOf is the byte length of lines written one per line: the file
// source's position after reading them.
func bytesOf(ls []string) int64 {
	n := 0
	for _, l := range ls {
		n += len(l) + 1
	}
	return int64(n)
}

// filePos is the file source's offset entry for file at pos.
func filePos(file string, pos int64) offset {
	return offset{Partition: map[string]any{"filename": file}, Offset: map[string]any{"position": json.Number(fmt.Sprint(pos))}}
}

// topicValues reads a topic (read_committed) and returns its values in order.
func topicValues(c *sluicetest.Cluster, topic string) []string {
	c.T.Helper()
	var out []string
	for _, r := range c.ReadTopic(topic) {
		out = append(out, string(r.Value))
	}
	return out
}

// waitTopic waits until topic holds exactly want, in order.
func waitTopic(c *sluicetest.Cluster, topic string, want []string) {
	c.T.Helper()
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		got := topicValues(c, topic)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			return false, fmt.Sprintf("topic %s holds %d records, want %d:\n%s", topic, len(got), len(want), diffHint(got, want))
		}
		return true, ""
	})
}

func diffHint(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("first difference at %d: %q, want %q", i, g, w)
		}
	}
	return "equal"
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// fileLines reads a file's lines; a missing file has none.
func fileLines(t testing.TB, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func workPath(c *sluicetest.Cluster, file string) string { return filepath.Join(c.WorkDir, file) }

// num is an integer as decoded JSON holds it.
func num(i int) json.Number { return json.Number(strconv.Itoa(i)) }

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a []byte, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// on returns c bound to the subtest t, so that the cluster's helpers fail t
// and not its parent (a subtest must not end its parent's goroutine).
func on(c *sluicetest.Cluster, t testing.TB) *sluicetest.Cluster {
	sc := *c
	sc.T = t
	return &sc
}
