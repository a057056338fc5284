package thirdparty

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

// The success messages of an offsets change (spec §5.6): a connector that
// alters its own offsets gets the first, any other the second.
var (
	altered = []string{"The offsets for this connector have been altered successfully",
		"The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses."}
	reset = []string{"The offsets for this connector have been reset successfully",
		"The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."}
)

// kcctlPluginTypes are kcctl's PluginType names: `get plugins -t` maps
// every plugin's type to one (valueOf, which throws on any other).
var kcctlPluginTypes = []string{"source", "sink", "transformation", "converter", "header_converter", "predicate"}

// TestKcctlCommands makes the REST calls of kcctl's commands (info, apply,
// get, describe, restart, pause, resume, stop, offsets, loggers) as kcctl
// makes them, in a user's order, and reads the answers as kcctl reads them.
// kcctl reads GET /'s version before many of them and refuses them (or
// does less) below a Kafka Connect version — get connectors' expand below
// 2.3, describe's topics below 2.5, restart -t all|failed below 3.0,
// describe plugin and get plugins -t of other types below 3.2, stop and
// get offsets below 3.5, patch and delete offsets below 3.6, patch
// loglevel --scope cluster below 3.7: Sluice's version passes every gate.
func TestKcctlCommands(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})

	t.Run("info", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		info := k.getWorkerInfo()
		v, err := parseKcctlVersion(info.Version)
		if err != nil {
			t.Fatalf("kcctl cannot parse GET /'s version: %v", err)
		}
		if want := strings.Join(strings.Split(api.KafkaConnectVersion, ".")[:2], "."); v.String() != want || !v.atLeast(3, 6) {
			t.Errorf("kcctl reads version %s from %q, want %s (the Kafka Connect level Sluice implements)", v, info.Version, want)
		}
		if info.KafkaClusterID == "" {
			t.Errorf("GET / has no kafka_cluster_id: %+v", info)
		}
	})

	source, sink := "orders-gen", "orders-sink"
	topic := c.Name("orders")
	c.Produce(topic, "a", "b", "c", "d")
	sinkConfig := map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "topics": topic, "file": "out.txt"}

	t.Run("apply --dry-run", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		// kcctl adds a placeholder name, and names the plugin by its
		// simple class name.
		valid := map[string]string{"name": "dummy-name"}
		maps.Copy(valid, sinkConfig)
		if got := k.validateConfig("FileStreamSinkConnector", valid); got.ErrorCount != 0 || len(got.Configs) == 0 {
			t.Errorf("validate of a valid config: %+v", got)
		}
		invalid := maps.Clone(valid)
		delete(invalid, "topics")
		got := k.validateConfig("FileStreamSinkConnector", invalid)
		var errs []string
		for _, ci := range got.Configs {
			for _, e := range ci.Value.Errors {
				errs = append(errs, ci.Definition.Name+": "+e)
			}
		}
		if got.ErrorCount == 0 || len(errs) == 0 {
			t.Errorf("validate of a sink without topics: %d errors (%q), want them listed per config", got.ErrorCount, errs)
		}
	})

	t.Run("apply", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		file, err := json.Marshal(map[string]any{"name": sink, "config": sinkConfig})
		if err != nil {
			t.Fatal(err)
		}
		// A named file: created when GET /connectors/ lacks it, else its
		// config is put.
		if slices.Contains(k.getConnectors(), sink) {
			t.Fatalf("%s exists before apply", sink)
		}
		if got := k.createConnector(string(file)); got.Name != sink {
			t.Errorf("create answered %+v", got)
		}
		if got := k.updateConnector(sink, sinkConfig); got.Name != sink {
			t.Errorf("update answered %+v", got)
		}
	})
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": source, "config": map[string]string{
		"connector.class": "GeneratorSource", "topic": c.Name("gen"), "tasks.max": "2", "streams": "2", "rate": "50"}})
	c.WaitState(source, "RUNNING", 2, "RUNNING")
	c.WaitState(sink, "RUNNING", 1, "RUNNING")

	t.Run("get connectors", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		k.gate("The expand API", 2, 3) // below it kcctl asks each status alone
		got := k.getConnectorExpandInfo("status")
		for _, name := range []string{source, sink} {
			// kcctl sorts by type, then name, and prints the state and tasks.
			st := got[name].Status
			if st == nil || st.Name != name || (st.Type != "source" && st.Type != "sink") || st.Connector.State != "RUNNING" {
				t.Errorf("expand=status: %s is %+v in %+v", name, st, got)
			}
		}
	})

	t.Run("describe connector --tasks-config", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		k.gate("The topics API", 2, 5) // below it kcctl shows no topics
		info, st, cfg := k.getConnector(sink), k.getConnectorStatus(sink), k.getConnectorConfig(sink)
		if info.Name != sink || st.Type != "sink" || st.Connector.WorkerID == "" || cfg["topics"] != topic {
			t.Errorf("describe: %+v, %+v, %v", info, st, cfg)
		}
		// kcctl finds each status task's config by "<name>-<id>".
		configs := map[string]map[string]string{}
		for _, tc := range k.getConnectorTasks(sink) {
			if tc.ID.Task != nil {
				configs[fmt.Sprintf("%s-%d", tc.ID.Connector, *tc.ID.Task)] = tc.Config
			}
		}
		for _, task := range st.Tasks {
			if configs[fmt.Sprintf("%s-%d", sink, task.ID)] == nil {
				t.Errorf("task %d of the status has no config in GET …/tasks: %v", task.ID, configs)
			}
		}
		// kcctl reads the first entry of the topics map: there must be one.
		sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
			topics := k.getConnectorTopics(sink)
			return len(topics) == 1 && slices.Equal(topics[sink].Topics, []string{topic}), fmt.Sprintf("topics: %+v", topics)
		})
	})

	t.Run("patch loglevel", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		const logger = "org.apache.kafka.connect.runtime.WorkerSinkTask"
		if got := k.updateLogLevel(logger, "DEBUG"); !slices.Contains(got, logger) {
			t.Errorf("patch loglevel %s: %q, want it among the loggers changed", logger, got)
		}
		var worker []string
		if got := k.updateLogLevelWithScope(logger, "worker", "INFO"); json.Unmarshal([]byte(got), &worker) != nil || !slices.Contains(worker, logger) {
			t.Errorf("patch loglevel --scope worker: %q, want a JSON list with %s", got, logger)
		}
		k.gate("Cluster-wide logging adjustments", 3, 7)
		k.updateLogLevelWithScope(logger, "cluster", "WARN")
	})

	t.Run("get plugins -t transformation,converter", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		k.gate("Listing plugins other than source and sink", 3, 2)
		plugins := k.getConnectorPlugins(false)
		seen := map[string]int{}
		for _, p := range plugins {
			if p.Class == "" || !slices.Contains(kcctlPluginTypes, p.Type) {
				t.Errorf("plugin %+v: kcctl needs a class and one of the types %q", p, kcctlPluginTypes)
			}
			seen[p.Type]++
		}
		if seen["transformation"] == 0 || seen["converter"] == 0 || seen["source"] == 0 || seen["sink"] == 0 {
			t.Errorf("plugins by type: %v, want sources, sinks, transformations and converters", seen)
		}
	})

	for _, name := range []string{"FileStreamSink", "org.apache.kafka.connect.file.FileStreamSinkConnector"} {
		t.Run("describe plugin "+name, func(t *testing.T) {
			k := kcctl{t: t, base: c.URL}
			k.gate("This command", 3, 2)
			var file *kcctlConfigKeyInfo
			keys := k.getConnectorPluginConfig(name)
			for i := range keys {
				if keys[i].Name == "" || keys[i].Type == "" {
					t.Errorf("config key %+v: kcctl prints its name and type", keys[i])
				}
				if keys[i].Name == "file" {
					file = &keys[i]
				}
			}
			if file == nil || file.Documentation == "" {
				t.Fatalf("describe plugin %s: no documented \"file\" key in %+v", name, keys)
			}
		})
	}

	t.Run("restart connector", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		k.restartConnector(source)
		c.WaitState(source, "RUNNING", 2, "RUNNING")
	})

	t.Run("restart connector -t all", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		k.gate("Restarting tasks en masse", 3, 0)
		st := k.restartConnectorAndTasks(source, true, false)
		if n := restarting(st); st.Name != source || n != 2 {
			t.Errorf("kcctl says \"Restarted connector %s and %d task(s)\", want 2 tasks restarting: %+v", st.Name, n, st)
		}
		c.WaitState(source, "RUNNING", 2, "RUNNING")
	})

	t.Run("restart connector -e -t failed", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		k.gate("Restarting tasks en masse", 3, 0)
		// -e: the names are patterns, matched against GET /connectors/.
		if names := k.getConnectors(); !slices.Contains(names, source) || !slices.Contains(names, sink) {
			t.Fatalf("GET /connectors/ = %q, want %s and %s", names, source, sink)
		}
		// No task failed: nothing restarts.
		st := k.restartConnectorAndTasks(source, true, true)
		if n := restarting(st); st.Name != source || n != 0 || len(st.Tasks) != 2 {
			t.Errorf("restart of only failed tasks with none failed: %d restarting in %+v, want 0 of 2", n, st)
		}
	})

	t.Run("restart connector -t failed, a task failed", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		// A file sink whose file is a directory: its task fails at start.
		broken := "broken-sink"
		c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": broken, "config": map[string]string{
			"connector.class": "FileStreamSink", "topics": topic, "file": "."}})
		c.WaitState(broken, "RUNNING", 1, "FAILED")
		// describe connector prints a failed task's trace (a null one throws).
		if st := k.getConnectorStatus(broken); len(st.Tasks) != 1 || st.Tasks[0].Trace == "" {
			t.Errorf("a failed task without its trace: %+v", st)
		}
		k.gate("Restarting tasks en masse", 3, 0)
		st := k.restartConnectorAndTasks(broken, true, true)
		if n := restarting(st); n != 1 {
			t.Errorf("kcctl says \"Restarted connector %s and %d task(s)\", want the 1 failed task: %+v", broken, n, st)
		}
		c.WaitState(broken, "RUNNING", 1, "FAILED")
		k.deleteConnector(broken)
	})

	t.Run("pause, resume, restart task", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		k.pauseConnector(sink)
		c.WaitState(sink, "PAUSED", 1, "PAUSED")
		k.resumeConnector(sink)
		c.WaitState(sink, "RUNNING", 1, "RUNNING")
		k.restartTask(sink, "0") // kcctl's "restart task <name>/0"
		c.WaitState(sink, "RUNNING", 1, "RUNNING")
	})

	t.Run("get offsets", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		k.gate("Reading connector offsets", 3, 5)
		sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
			got := k.getConnectorOffsets(source)
			return len(got.Offsets) == 2, fmt.Sprintf("offsets of %s: %+v, want one per stream", source, got)
		})
	})

	t.Run("stop connector", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		k.gate("Stopping connectors", 3, 5)
		k.stopConnector(source)
		k.stopConnector(sink)
		c.WaitState(source, "STOPPED", 0, "")
		c.WaitState(sink, "STOPPED", 0, "")
	})

	t.Run("patch offsets --source-partition --source-offset", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		k.gate("Patching connector offsets", 3, 6)
		// kcctl's get offsets output is meant to be pasted into patch.
		first := k.getConnectorOffsets(source).Offsets[0]
		change := kcctlOffset{Partition: first.Partition, Offset: map[string]any{"seq": 5}}
		if got := k.patchConnectorOffsets(source, kcctlOffsets{Offsets: []kcctlOffset{change}}); !slices.Contains(altered, got.Message) {
			t.Fatalf("patch offsets: %q, want one of %q", got.Message, altered)
		}
		if got := offsetOf(k.getConnectorOffsets(source), first.Partition); got != fmt.Sprint(change.Offset) {
			t.Errorf("offset of %v after the patch: %s, want %v", first.Partition, got, change.Offset)
		}
	})

	t.Run("patch offsets --kafka-topic --kafka-partition --kafka-offset", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		k.gate("Patching connector offsets", 3, 6)
		partition := map[string]any{"kafka_topic": topic, "kafka_partition": 0}
		change := kcctlOffset{Partition: partition, Offset: map[string]any{"kafka_offset": 3}}
		if got := k.patchConnectorOffsets(sink, kcctlOffsets{Offsets: []kcctlOffset{change}}); !slices.Contains(altered, got.Message) {
			t.Fatalf("patch offsets: %q, want one of %q", got.Message, altered)
		}
		if got := offsetOf(k.getConnectorOffsets(sink), partition); got != fmt.Sprint(change.Offset) {
			t.Errorf("offset of %v after the patch: %s, want %v", partition, got, change.Offset)
		}
	})

	t.Run("delete offsets", func(t *testing.T) {
		k := kcctl{t: t, base: c.URL}
		k.gate("Deleting connector offsets", 3, 6)
		for _, name := range []string{source, sink} {
			if got := k.deleteConnectorOffsets(name); !slices.Contains(reset, got.Message) {
				t.Fatalf("delete offsets %s: %q, want one of %q", name, got.Message, reset)
			}
			if got := k.getConnectorOffsets(name); len(got.Offsets) != 0 {
				t.Errorf("offsets of %s after delete offsets: %+v, want none", name, got)
			}
			k.deleteConnector(name)
		}
		if names := k.getConnectors(); len(names) != 0 {
			t.Errorf("connectors after delete: %q", names)
		}
	})
}

// TestKcctlVersionParse: the test's copy of kcctl's version check takes
// Kafka's forms and refuses what kcctl refuses — Sluice's own version
// failed every gate, a suffix on the minor part throws.
func TestKcctlVersionParse(t *testing.T) {
	for _, tc := range []struct {
		version string
		parses  bool
		gate36  bool // passes the newest gate (patch and delete offsets)
	}{
		{api.KafkaConnectVersion, true, true},
		{"4.4.0", true, true},
		{"3.9.0-SNAPSHOT", true, true},
		{"7.5.0-ccs", true, true},
		{"3.5.1", true, false},
		{"2.8.1", true, false},
		{"0.1.0", true, false},
		{"4.4-sluice", false, false},
		{"4", false, false},
		{"v4.4.0", false, false},
	} {
		v, err := parseKcctlVersion(tc.version)
		if (err == nil) != tc.parses || (err == nil && v.atLeast(3, 6) != tc.gate36) {
			t.Errorf("kcctl's check of %q: %v, %v; want parses=%v, at least 3.6=%v", tc.version, v, err, tc.parses, tc.gate36)
		}
	}
}

// restarting counts the tasks an answer shows RESTARTING, as kcctl does
// for its "Restarted connector <name> and <n> task(s)".
func restarting(st kcctlStatus) int {
	n := 0
	for _, task := range st.Tasks {
		if task.State == "RESTARTING" {
			n++
		}
	}
	return n
}

// offsetOf is the offset listed for partition, as text ("" if none).
func offsetOf(list kcctlOffsets, partition map[string]any) string {
	for _, o := range list.Offsets {
		if fmt.Sprint(o.Partition) == fmt.Sprint(partition) {
			return fmt.Sprint(o.Offset)
		}
	}
	return ""
}

// TestKcctlBasicAuth: a kcctl context with a username and password sends
// them as HTTP Basic on every call (its KafkaConnectClientHeadersFactory):
// against a Sluice with REST authentication — `sluice dev --secure`'s
// admin, here — the gated commands work with them, and without them kcctl
// gets the 401 it shows as text.
func TestKcctlBasicAuth(t *testing.T) {
	t.Parallel()
	authFile := filepath.Join(t.TempDir(), "auth.yaml")
	cred, err := coordinator.WriteAdminAuthFile(authFile, "admin")
	if err != nil {
		t.Fatal(err)
	}
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, RESTSecurity: coordinator.RESTSecurity{AuthFile: authFile}})
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(cred.User+":"+cred.Password))
	k := kcctl{t: t, base: c.URL, header: http.Header{"Authorization": {basic}}}
	k.gate("Reading connector offsets", 3, 5)
	if plugins := k.getConnectorPlugins(false); len(plugins) == 0 {
		t.Error("get plugins with the context's credentials: none")
	}
	if r := sluicetest.Do(t, c.URL, http.MethodGet, "/", nil); r.Status != http.StatusUnauthorized {
		t.Errorf("GET / without credentials: %s, want 401", r)
	}
}
