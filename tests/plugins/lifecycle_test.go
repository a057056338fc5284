package plugins

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestJavaSourceLifecycle: Sluice's own features for a Java source, with
// exactly-once support on: created PAUSED with initial offsets (KIP-980,
// KIP-995) it has the offsets at once and reads from them on resume; paused
// it sends nothing; stopped, its offsets reset, and resumed it reads the
// file again from the start — and the read_committed topic holds each
// line exactly as often as it was read.
func TestJavaSourceLifecycle(t *testing.T) {
	c := startWith(t, sluicetest.Options{Agents: 1, ExactlyOnce: true})
	in := filepath.Join(c.WorkDir, "in.txt")
	// ASCII only: Kafka's task counts characters but skips bytes when it
	// resumes (docs/plugins.md), so on other text an offset lands early.
	ls := make([]string, 300)
	for i := range ls {
		ls[i] = fmt.Sprintf("ascii line %05d", i)
	}
	writeFile(t, in, ls[:200])
	topic := c.Name("lifecycle")
	skip := len(strings.Join(ls[:50], "\n") + "\n")
	offsets := func(position int) string {
		return fmt.Sprintf(`{"offsets":[{"partition":{"filename":%q},"offset":{"position":%d}}]}`, in, position)
	}
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "src", "initial_state": "PAUSED",
		"config": map[string]string{"connector.class": sourceClass, "connector.plugin.version": javaFileVersion,
			"file": in, "topic": topic},
		"initial_offsets": []any{map[string]any{"partition": map[string]any{"filename": in}, "offset": map[string]any{"position": skip}}}})
	c.WaitState("src", "PAUSED", 0, "") // no task configs yet, as in Kafka Connect
	wantOffsets := func(want string) {
		t.Helper()
		sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
			r := c.Do("GET", "/connectors/src/offsets", nil)
			return strings.TrimSpace(string(r.Body)) == want, fmt.Sprintf("offsets %s, want %s", r.Body, want)
		})
	}
	wantOffsets(offsets(skip))

	c.Must(http.StatusAccepted, "PUT", "/connectors/src/resume", nil)
	waitValues(t, c, topic, ls[50:200])

	c.Must(http.StatusAccepted, "PUT", "/connectors/src/pause", nil)
	c.WaitState("src", "PAUSED", 1, "PAUSED")
	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.Join(ls[200:], "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// A paused task would read the lines within this window.
	sluicetest.Consistently(t, 2*time.Second, func() (bool, string) {
		got := values(c, topic)
		return len(got) == 150, fmt.Sprintf("%d records while paused, want the 150 from before", len(got))
	})
	if got := values(c, topic); len(got) != 150 {
		t.Fatalf("%d records while paused, want the 150 from before", len(got))
	}
	c.Must(http.StatusAccepted, "PUT", "/connectors/src/resume", nil)
	waitValues(t, c, topic, ls[50:])
	wantOffsets(offsets(len(strings.Join(ls, "\n") + "\n")))

	c.Must(http.StatusNoContent, "PUT", "/connectors/src/stop", nil)
	c.WaitState("src", "STOPPED", 0, "")
	c.Must(http.StatusOK, "DELETE", "/connectors/src/offsets", nil)
	wantOffsets(`{"offsets":[]}`)
	c.Must(http.StatusAccepted, "PUT", "/connectors/src/resume", nil)
	waitValues(t, c, topic, append(append([]string{}, ls[50:]...), ls...))
}

// TestJavaSourcePreflight: Kafka Connect's exactly-once preflight checks
// for a Java source ask the connector in its agent's host: Kafka's
// FileStreamSourceConnector supports exactly-once with a file, and cannot
// define transaction boundaries.
func TestJavaSourcePreflight(t *testing.T) {
	c := startWith(t, sluicetest.Options{Agents: 1, ExactlyOnce: true})
	cfg := func(kv ...string) map[string]string {
		m := map[string]string{"connector.class": sourceClass, "connector.plugin.version": javaFileVersion,
			"name": "pre", "file": filepath.Join(c.WorkDir, "pre.txt"), "topic": c.Name("pre")}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	count, errs := validateErrors(t, c, "FileStreamSourceConnector", cfg("exactly.once.support", "required", "transaction.boundary", "connector"))
	want := "The connector does not support connector-defined transaction boundaries with the given configuration. " +
		"Please reconfigure it to use a different transaction boundary definition."
	if count != 1 || len(errs) != 1 || len(errs["transaction.boundary"]) != 1 || errs["transaction.boundary"][0] != want {
		t.Fatalf("validate answered %d errors %q; want only %q on transaction.boundary", count, errs, want)
	}
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "pre", "config": cfg("exactly.once.support", "required")})
	c.WaitState("pre", "RUNNING", 1, "RUNNING")
}
