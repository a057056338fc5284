package plugins

import (
	"archive/zip"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/sluicetest"
)

// versionedClass is the source connector the test builds in three
// versions; its tasks write "<version>:<n>" records, except at
// brokenVersion, whose tasks fail to start.
const (
	versionedClass = "com.example.versioned.VersionedSourceConnector"
	brokenVersion  = "3.0.0"
)

// versionedConnector and versionedTask are the plugin's code, its version
// put in with fmt (%[1]s).
const versionedConnector = `package com.example.versioned;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.SourceConnector;

public class VersionedSourceConnector extends SourceConnector {
    private Map<String, String> props;
    public void start(Map<String, String> props) { this.props = props; }
    public Class<? extends Task> taskClass() { return VersionedSourceTask.class; }
    public List<Map<String, String>> taskConfigs(int max) {
        List<Map<String, String>> out = new ArrayList<>();
        for (int i = 0; i < max; i++) out.add(props);
        return out;
    }
    public void stop() { }
    public ConfigDef config() {
        return new ConfigDef().define("topic", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "Where the records go.");
    }
    public String version() { return "%[1]s"; }
}
`

const versionedTask = `package com.example.versioned;

import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

public class VersionedSourceTask extends SourceTask {
    private String topic;
    private long n;
    public void start(Map<String, String> props) {
        if ("%[1]s".equals("` + brokenVersion + `")) throw new IllegalStateException("version %[1]s cannot start");
        topic = props.get("topic");
    }
    public List<SourceRecord> poll() throws InterruptedException {
        Thread.sleep(100);
        n++;
        return List.of(new SourceRecord(Map.of("source", "versioned"), Map.of("n", n), topic, Schema.STRING_SCHEMA, "%[1]s:" + n));
    }
    public void stop() { }
    public String version() { return "%[1]s"; }
}
`

// buildVersionedPlugins compiles the plugin in each version into a plugin
// directory of its own under a new plugin path, as a user installs
// several versions, and returns that path.
func buildVersionedPlugins(t *testing.T, hostDir string, versions ...string) string {
	t.Helper()
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Fatalf("javac (a JDK) builds the test's plugin: %v", err)
	}
	libs, err := filepath.Glob(filepath.Join(hostDir, "lib", "*.jar"))
	if err != nil || len(libs) == 0 {
		t.Fatalf("no host libraries in %s/lib (make javahost): %v", hostDir, err)
	}
	path := t.TempDir()
	for _, v := range versions {
		src, classes := t.TempDir(), t.TempDir()
		pkg := filepath.Join(src, "com", "example", "versioned")
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{"VersionedSourceConnector.java": versionedConnector, "VersionedSourceTask.java": versionedTask}
		var args []string
		for name, code := range files {
			f := filepath.Join(pkg, name)
			if err := os.WriteFile(f, []byte(fmt.Sprintf(code, v)), 0o644); err != nil {
				t.Fatal(err)
			}
			args = append(args, f)
		}
		cmd := exec.Command(javac, append([]string{"--release", "17", "-d", classes, "-cp", strings.Join(libs, string(os.PathListSeparator))}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("javac of version %s: %v\n%s", v, err, out)
		}
		dir := filepath.Join(path, "versioned-"+v)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeJar(t, filepath.Join(dir, "versioned-"+v+".jar"), classes,
			map[string]string{"META-INF/services/org.apache.kafka.connect.source.SourceConnector": versionedClass + "\n"})
	}
	return path
}

// writeJar zips the class files under classes, and extra entries, into a
// jar.
func writeJar(t *testing.T, jar, classes string, extra map[string]string) {
	t.Helper()
	f, err := os.Create(jar)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	add := func(name string, data []byte) {
		w, err := zw.Create(name)
		if err == nil {
			_, err = w.Write(data)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	err = filepath.Walk(classes, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(classes, p)
		add(filepath.ToSlash(rel), data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range extra {
		add(name, []byte(data))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// waitWriting waits until connector name runs at version, the connector
// and every task, and its topic's newest record is of that version.
func waitWriting(t *testing.T, c *sluicetest.Cluster, name, topic, version string) {
	t.Helper()
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		st, _ := c.Status(name)
		if st.Connector.State != api.StateRunning || st.Connector.Version != version || len(st.Tasks) == 0 {
			return false, fmt.Sprintf("%s: %+v", name, st)
		}
		for _, ts := range st.Tasks {
			if ts.State != api.StateRunning || ts.Version != version {
				return false, fmt.Sprintf("%s task %d: %s at %s %q", name, ts.ID, ts.State, ts.Version, ts.Trace)
			}
		}
		got := values(c, topic)
		if len(got) == 0 || !strings.HasPrefix(got[len(got)-1], version+":") {
			return false, fmt.Sprintf("%s: %d records, the newest %v", topic, len(got), got[max(0, len(got)-1):])
		}
		return true, ""
	})
}

// TestPluginVersionUpgradeThroughHost: three versions of one plugin on
// the agents' plugin path, each in its own class loader of the real
// connector host. GET /connector-plugins lists them; connectors run the
// version they name; a rollout moves them to a newer one batch by batch,
// and a rollout to a version whose tasks fail is rolled back, the
// connectors writing with their previous version again.
func TestPluginVersionUpgradeThroughHost(t *testing.T) {
	pluginPath, hostDir := hostSetup(t)
	versioned := buildVersionedPlugins(t, hostDir, "1.0.0", "2.0.0", brokenVersion)
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, PluginPath: append(slices.Clone(pluginPath), versioned), ConnectorHostDir: hostDir})

	var listed []api.PluginInfo
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		c.Must(http.StatusOK, "GET", "/connector-plugins", nil).JSON(t, &listed)
		var versions []string
		for _, p := range listed {
			if p.Class == versionedClass {
				versions = append(versions, p.Version)
			}
		}
		return slices.Equal(versions, []string{"1.0.0", "2.0.0", brokenVersion}), fmt.Sprintf("versions listed: %v", versions)
	})

	names, topics := []string{c.Name("ver-0"), c.Name("ver-1")}, []string{c.Name("v0"), c.Name("v1")}
	for i, name := range names {
		c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": name, "config": map[string]string{
			"connector.class": versionedClass, "connector.plugin.version": "1.0.0", "topic": topics[i], "tasks.max": "2",
			"value.converter": "org.apache.kafka.connect.storage.StringConverter"}})
	}
	for i, name := range names {
		waitWriting(t, c, name, topics[i], "1.0.0")
	}

	rollout := func(version, want string) api.Rollout {
		t.Helper()
		var r api.Rollout
		c.Must(http.StatusCreated, "POST", "/sluice/rollouts", map[string]any{
			"names": names, "patch": map[string]any{"connector.plugin.version": version}, "batches": []any{1, "rest"},
			"health": map[string]any{"running_for": "2s", "max_failed_tasks": 0}, "on_failure": "rollback"}).JSON(t, &r)
		sluicetest.Eventually(t, 3*time.Minute, func() (bool, string) {
			c.Must(http.StatusOK, "GET", "/sluice/rollouts/"+r.ID, nil).JSON(t, &r)
			return r.State == want, fmt.Sprintf("rollout %s at batch %d: %s", r.State, r.Batch, r.Error)
		})
		return r
	}
	rollout("[2.0,3.0)", api.RolloutDone)
	for i, name := range names {
		waitWriting(t, c, name, topics[i], "2.0.0")
	}
	r := rollout(brokenVersion, api.RolloutRolledBack)
	if !strings.Contains(r.Error, "batch 1 of 2 failed its health gate") {
		t.Errorf("rolled back for %q", r.Error)
	}
	for i, name := range names {
		waitWriting(t, c, name, topics[i], "2.0.0")
	}
}
