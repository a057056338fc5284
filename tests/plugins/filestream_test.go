package plugins

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sluice-io/sluice/sluicetest"
)

const (
	sourceClass = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	sinkClass   = "org.apache.kafka.connect.file.FileStreamSinkConnector"
	// javaFileVersion is the version the host gives Kafka's connect-file
	// jar (deploy/plugins/connect-file; 4.3.1 reports the host kafka-clients' 4.4.0): connector.plugin.version picks it
	// over Sluice's built-in of the same class.
	javaFileVersion = "4.4.0"
)

// start runs a cluster whose agents have the plugin path, or skips the
// test when none is given.
func start(t *testing.T, agents int) *sluicetest.Cluster {
	t.Helper()
	return startWith(t, sluicetest.Options{Agents: agents})
}

// startWith is start with more options.
func startWith(t *testing.T, opts sluicetest.Options) *sluicetest.Cluster {
	t.Helper()
	opts.PluginPath, opts.ConnectorHostDir = hostSetup(t)
	return sluicetest.Start(t, opts)
}

// hostSetup is the plugin path (SLUICE_TEST_PLUGINS) and the connector
// host's directory (SLUICE_CONNECT_HOST_DIR, absolute) agents get, or skips
// the test when no plugin path is given.
func hostSetup(t *testing.T) (pluginPath []string, hostDir string) {
	t.Helper()
	path := os.Getenv("SLUICE_TEST_PLUGINS")
	if path == "" {
		t.Skip("SLUICE_TEST_PLUGINS is not set (make test-plugins lays out the plugins and sets it)")
	}
	hostDir = os.Getenv("SLUICE_CONNECT_HOST_DIR")
	if hostDir == "" {
		hostDir = filepath.Join("..", "..", "connect", "javahost", "target")
	}
	abs, err := filepath.Abs(hostDir)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(path, ","), abs
}

// lines are n numbered lines, some with characters a converter could get
// wrong.
func lines(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("line %05d ünïcödé \"quoted\" \\ tab\t%d", i, i*i)
	}
	return out
}

func writeFile(t *testing.T, path string, ls []string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(ls, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func values(c *sluicetest.Cluster, topic string) []string {
	var out []string
	for _, r := range c.ReadTopic(topic) {
		out = append(out, string(r.Value))
	}
	return out
}

// waitValues waits until topic holds want, in order.
func waitValues(t *testing.T, c *sluicetest.Cluster, topic string, want []string) {
	t.Helper()
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		got := values(c, topic)
		return strings.Join(got, "\n") == strings.Join(want, "\n"), fmt.Sprintf("%s has %d of %d records", topic, len(got), len(want))
	})
}

// TestFileStreamSourceThroughHost: Kafka's FileStreamSourceConnector, run
// in the connector host (picked with connector.plugin.version), writes
// the same records as Sluice's built-in of that class on the same input,
// and its offsets have the built-in's shape.
func TestFileStreamSourceThroughHost(t *testing.T) {
	c := start(t, 1)
	in := filepath.Join(c.WorkDir, "in.txt")
	ls := lines(500)
	writeFile(t, in, ls)
	for _, name := range []string{"go-src", "java-src"} {
		cfg := map[string]string{"connector.class": sourceClass, "file": in, "topic": c.Name(name)}
		if name == "java-src" {
			cfg["connector.plugin.version"] = javaFileVersion
		}
		c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": name, "config": cfg})
	}
	waitValues(t, c, c.Name("go-src"), ls)
	waitValues(t, c, c.Name("java-src"), ls)
	// Kafka's task counts its position in characters, Sluice's built-in in
	// bytes (docs/plugins.md): with non-ASCII lines they differ.
	text := strings.Join(ls, "\n") + "\n"
	positions := map[string]int{"go-src": len(text), "java-src": utf8.RuneCountInString(text)}
	for _, name := range []string{"go-src", "java-src"} {
		want := fmt.Sprintf(`{"offsets":[{"partition":{"filename":%q},"offset":{"position":%d}}]}`, in, positions[name])
		sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
			r := c.Do("GET", "/connectors/"+name+"/offsets", nil)
			return strings.TrimSpace(string(r.Body)) == want, fmt.Sprintf("%s offsets %s, want %s", name, r.Body, want)
		})
	}
}

// TestFileStreamSinkThroughHost: Kafka's FileStreamSinkConnector in the
// host writes the same file, byte for byte, as Sluice's built-in sink
// reading the same topic.
func TestFileStreamSinkThroughHost(t *testing.T) {
	c := start(t, 1)
	topic := c.Name("lines")
	ls := lines(500)
	c.Produce(topic, ls...)
	outs := map[string]string{}
	for _, name := range []string{"go-sink", "java-sink"} {
		outs[name] = filepath.Join(c.WorkDir, name+".txt")
		cfg := map[string]string{"connector.class": sinkClass, "file": outs[name], "topics": topic}
		if name == "java-sink" {
			cfg["connector.plugin.version"] = javaFileVersion
		}
		c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": name, "config": cfg})
	}
	want := []byte(strings.Join(ls, "\n") + "\n")
	for _, name := range []string{"go-sink", "java-sink"} {
		sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
			got, _ := os.ReadFile(outs[name])
			return bytes.Equal(got, want), fmt.Sprintf("%s wrote %d of %d bytes", name, len(got), len(want))
		})
	}
}

// TestConnectorPluginsListsBothVersions: GET /connector-plugins lists the
// FileStream source twice: Sluice's built-in and the host's Java one.
func TestConnectorPluginsListsBothVersions(t *testing.T) {
	c := start(t, 1)
	var list []struct{ Class, Type, Version string }
	c.Must(http.StatusOK, "GET", "/connector-plugins", nil).JSON(t, &list)
	var versions []string
	for _, p := range list {
		if p.Class == sourceClass {
			versions = append(versions, p.Version)
		}
	}
	if len(versions) != 2 || !strings.Contains(strings.Join(versions, ","), javaFileVersion) {
		t.Fatalf("FileStreamSourceConnector versions listed: %v, want the built-in's and %s", versions, javaFileVersion)
	}
}

// TestHostKilledMidStream: kill -9 of the connector host JVM while a Java
// file source streams: its task is FAILED with a trace naming the lost
// host, the agent starts the host and the task again, and every line
// reaches the topic (at least once).
func TestHostKilledMidStream(t *testing.T) {
	c := start(t, 1)
	in := filepath.Join(c.WorkDir, "in.txt")
	first := lines(200)
	writeFile(t, in, first)
	topic := c.Name("killed")
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "src", "config": map[string]string{
		"connector.class": sourceClass, "file": in, "topic": topic, "connector.plugin.version": javaFileVersion}})
	waitValues(t, c, topic, first)
	pid := c.Agents[0].ConnectorHostPid()
	if pid == 0 {
		t.Fatal("no connector host runs")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		st, _ := c.Status("src")
		trace := ""
		if len(st.Tasks) > 0 {
			trace = st.Tasks[0].Trace
		}
		return len(st.Tasks) == 1 && st.Tasks[0].State == "FAILED" && strings.Contains(trace, "connector host"),
			fmt.Sprintf("task after kill -9 of the host: %+v", st.Tasks)
	})
	more := lines(300)[200:]
	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.Join(more, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c.WaitState("src", "RUNNING", 1, "RUNNING")
	all := append(append([]string{}, first...), more...)
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		seen := map[string]bool{}
		for _, v := range values(c, topic) {
			seen[v] = true
		}
		missing := 0
		for _, l := range all {
			if !seen[l] {
				missing++
			}
		}
		return missing == 0, fmt.Sprintf("%d of %d lines missing", missing, len(all))
	})
	if pid2 := c.Agents[0].ConnectorHostPid(); pid2 == 0 || pid2 == pid {
		t.Fatalf("connector host pid %d after the kill of %d, want a new one", pid2, pid)
	}
}
