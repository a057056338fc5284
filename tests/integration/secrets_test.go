package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/generator"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/sluicetest"
)

// classProbe is a test plugin: the generator, with a PASSWORD key of its
// own, telling the test the configs its connector and tasks were started
// with.
const classProbe = "io.sluice.test.SecretProbeSourceConnector"

// probeSeen records what the probe's connector and tasks were started with.
type probeSeen struct {
	mu        sync.Mutex
	connector []map[string]string
	tasks     []map[string]string
}

func (s *probeSeen) add(list *[]map[string]string, props map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*list = append(*list, maps.Clone(props))
}

func (s *probeSeen) snapshot() (conn, tasks []map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]string(nil), s.connector...), append([]map[string]string(nil), s.tasks...)
}

type probeConnector struct {
	generator.Connector
	seen *probeSeen
}

func (c *probeConnector) ConfigDef() *connect.ConfigDef {
	return generator.ConfigDef().Copy().Define(connect.ConfigKey{Name: "probe.password", Type: connect.TypePassword,
		Importance: connect.ImportanceHigh, Documentation: "a secret the probe receives"})
}

func (c *probeConnector) Start(ctx connect.ConnectorContext, props map[string]string) error {
	c.seen.add(&c.seen.connector, props)
	return c.Connector.Start(ctx, props)
}

func (c *probeConnector) NewTask() connect.SourceTask {
	return &probeTask{SourceTask: c.Connector.NewTask(), seen: c.seen}
}

type probeTask struct {
	connect.SourceTask
	seen *probeSeen
}

func (t *probeTask) Start(ctx context.Context, tc connect.SourceTaskContext, props map[string]string) error {
	t.seen.add(&t.seen.tasks, props)
	return t.SourceTask.Start(ctx, tc, props)
}

func probeRegistry(t *testing.T, seen *probeSeen) *plugins.Registry {
	return generatorVariant(t, classProbe, func() connect.Connector { return &probeConnector{seen: seen} })
}

// secretValue is a value no test writes anywhere but where it is kept.
func secretValue(t *testing.T, what string) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return what + "-" + hex.EncodeToString(b)
}

// TestConfigProviderSecretsStayOutOfConfigTopicAndLogs checks issue 14 §4:
// secrets named by ${file:…}, ${directory:…} and ${env:…} placeholders reach
// the connector and its tasks resolved, and appear neither in the raw config
// topic (connector and task-<name>-<n> records hold the placeholders, put
// back by the reverse transform), nor in GET …/config and GET …/tasks, nor
// in any log line at debug level; validate hides the PASSWORD key's value.
func TestConfigProviderSecretsStayOutOfConfigTopicAndLogs(t *testing.T) {
	dir := t.TempDir()
	password, token, fromEnv := secretValue(t, "pw"), secretValue(t, "token"), secretValue(t, "env")
	props := filepath.Join(dir, "db.properties")
	if err := os.WriteFile(props, []byte("# the database\nuser = alice\npassword="+password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A Kubernetes secret volume: each key a file, linked into ..data.
	secretDir := filepath.Join(dir, "k8s-secret")
	if err := os.MkdirAll(filepath.Join(secretDir, "..data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secretDir, "..data", "token"), []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/token", filepath.Join(secretDir, "token")); err != nil {
		t.Fatal(err)
	}
	envName := "SLUICE_TEST_SECRET_" + strings.ToUpper(hex.EncodeToString([]byte(t.Name()))[:8])
	t.Setenv(envName, fromEnv)

	seen := &probeSeen{}
	reg := probeRegistry(t, seen)
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, CoordinatorPlugins: reg, Plugins: []*plugins.Registry{reg, reg},
		ConfigProviders: []string{"file", "env", "directory"}, LogLevel: slog.LevelDebug})
	name := c.Name("probe")
	raw := cfgOf("connector.class", classProbe, "topic", c.Name("probe-data"), "rate", "20", "streams", "2", "tasks.max", "2",
		"probe.password", "${file:"+props+":password}",
		"probe.user", "${file:"+props+":user}",
		"probe.token", "${directory:"+secretDir+":token}",
		"probe.env", "prefix-${env:"+envName+"}",
		"probe.unknown", "${vault:secret/db:password}",
		"probe.missing", "${file:"+props+":nope}")
	resolved := cfgWith(raw, "probe.password", password, "probe.user", "alice", "probe.token", token, "probe.env", "prefix-"+fromEnv)
	secrets := []string{password, token, fromEnv}

	// Validate sees the resolved config, as Kafka Connect's does, and
	// hides the PASSWORD value.
	var infos struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Value struct {
				Name  string  `json:"name"`
				Value *string `json:"value"`
			} `json:"value"`
		} `json:"configs"`
	}
	vr := c.Must(http.StatusOK, "PUT", "/connector-plugins/"+classProbe+"/config/validate", cfgWith(raw, "name", name))
	vr.JSON(t, &infos)
	for _, cv := range infos.Configs {
		if cv.Value.Name == "probe.password" && (cv.Value.Value == nil || *cv.Value.Value != "[hidden]") {
			t.Errorf("validate shows probe.password as %v, want [hidden]", cv.Value.Value)
		}
	}
	if strings.Contains(string(vr.Body), password) {
		t.Errorf("validate output holds the password: %s", vr.Body)
	}

	mustCreate(c, name, raw, "")
	c.WaitState(name, "RUNNING", 2, "RUNNING")

	// The connector and every task saw the secrets resolved; placeholders
	// without a provider or a value stayed as they were.
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		conns, tasks := seen.snapshot()
		return len(conns) >= 1 && len(tasks) >= 2, fmt.Sprintf("%d connector and %d task starts", len(conns), len(tasks))
	})
	conns, tasks := seen.snapshot()
	for _, got := range append(conns, tasks...) {
		for _, k := range []string{"probe.password", "probe.user", "probe.token", "probe.env", "probe.unknown", "probe.missing"} {
			if got[k] != resolved[k] {
				t.Errorf("the plugin saw %s = %q, want %q", k, got[k], resolved[k])
			}
		}
	}

	// The REST API shows the placeholders.
	var gotCfg map[string]string
	c.Must(http.StatusOK, "GET", "/connectors/"+name+"/config", nil).JSON(t, &gotCfg)
	if !maps.Equal(gotCfg, cfgWith(raw, "name", name)) {
		t.Errorf("GET config = %v, want the stored placeholders %v", gotCfg, raw)
	}
	var gotTasks []struct {
		Config map[string]string `json:"config"`
	}
	tr := c.Must(http.StatusOK, "GET", "/connectors/"+name+"/tasks", nil)
	tr.JSON(t, &gotTasks)
	if len(gotTasks) != 2 {
		t.Fatalf("GET tasks = %s", tr.Body)
	}
	for i, task := range gotTasks {
		for _, k := range []string{"probe.password", "probe.user", "probe.token", "probe.env"} {
			if task.Config[k] != raw[k] {
				t.Errorf("GET tasks: task %d has %s = %q, want the placeholder %q", i, k, task.Config[k], raw[k])
			}
		}
	}

	// The raw config topic: placeholders in the connector and task
	// records, no secret in any record.
	taskRecords := 0
	for _, r := range c.ReadTopic(c.Prefix + "-configs") {
		key := string(r.Key)
		for _, s := range secrets {
			if strings.Contains(string(r.Value), s) {
				t.Errorf("config topic record %s holds a secret: %s", key, r.Value)
			}
		}
		if !strings.HasPrefix(key, "task-"+name+"-") || r.Value == nil {
			continue
		}
		var rec struct {
			Properties map[string]string `json:"properties"`
		}
		if err := json.Unmarshal(r.Value, &rec); err != nil {
			t.Fatalf("record %s: %v", key, err)
		}
		taskRecords++
		if rec.Properties["probe.password"] != raw["probe.password"] || rec.Properties["probe.token"] != raw["probe.token"] ||
			rec.Properties["probe.env"] != raw["probe.env"] {
			t.Errorf("record %s = %v, want the placeholders back", key, rec.Properties)
		}
	}
	if taskRecords != 2 {
		t.Fatalf("found %d task-%s-<n> records, want 2", taskRecords, name)
	}

	// No log line, at debug level, of any process holds a secret.
	if c.LogLines() == 0 {
		t.Fatal("nothing was logged: the check below would prove nothing")
	}
	for _, s := range secrets {
		if lines := c.Logged(s); len(lines) > 0 {
			t.Errorf("a log line holds a secret: %q", lines)
		}
	}

	// A placeholder its provider cannot read refuses validate and create
	// with a 400 that names the file.
	missing := filepath.Join(dir, "none.properties")
	bad := cfgWith(raw, "probe.password", "${file:"+missing+":password}")
	wantMissing := "config provider file: Could not read properties from file " + missing
	wantError(t, c.Do("PUT", "/connector-plugins/"+classProbe+"/config/validate", bad), http.StatusBadRequest, wantMissing)
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": c.Name("unreadable"), "config": bad}), http.StatusBadRequest, wantMissing)
}
