package instances

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/configprovider"
	"github.com/sluice-io/sluice/connect/plugins"
)

// seenConnector is a sink that records the config it was started with and
// hands every task that config plus a key of its own.
type seenConnector struct {
	connect.SinkConnector
	seen  *map[string]string
	props map[string]string
}

func (c *seenConnector) Start(_ connect.ConnectorContext, props map[string]string) error {
	*c.seen, c.props = maps.Clone(props), props
	return nil
}

func (c *seenConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		out[i] = maps.Clone(c.props)
		out[i]["task.own"] = "x"
	}
	return out, nil
}

func (c *seenConnector) Stop() error { return nil }

func TestLocalHostResolvesAndPutsPlaceholdersBack(t *testing.T) {
	var seen map[string]string
	reg, err := plugins.New(&connect.Plugin{Class: "com.example.SeenConnector", Kind: connect.KindSink, Version: "1",
		NewConnector: func() connect.Connector { return &seenConnector{seen: &seen} }})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DB_PASSWORD": "s3cr3t", "TASKS": "3"}
	tr, err := configprovider.New([]string{"env"}, configprovider.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	raw := map[string]string{"connector.class": "com.example.SeenConnector", "topics": "t",
		"db.password": "${env:DB_PASSWORD}", "db.url": "pg://${env:DB_HOST}/x"}
	h := NewLocalHost(reg, tr)
	if _, err := h.Start(context.Background(), "c", raw, discard{}); err != nil {
		t.Fatal(err)
	}
	if seen["db.password"] != "s3cr3t" || seen["db.url"] != "pg://${env:DB_HOST}/x" {
		t.Fatalf("the plugin saw %v", seen)
	}
	tasks, err := h.TaskConfigs(context.Background(), "c", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := maps.Clone(raw)
	want["task.own"] = "x"
	if len(tasks) != 1 || !maps.Equal(tasks[0], want) {
		t.Fatalf("task configs = %v, want %v", tasks, want)
	}
	if err := h.Stop(context.Background(), "c"); err != nil {
		t.Fatal(err)
	}

	// A tasks.max placeholder counts as what it resolves to, though the
	// Manager asked for what the stored text gives (1).
	withMax := cfgOf(raw, "tasks.max", "${env:TASKS}")
	if _, err := h.Start(context.Background(), "c", withMax, discard{}); err != nil {
		t.Fatal(err)
	}
	if tasks, err = h.TaskConfigs(context.Background(), "c", MaxTasks(withMax)); err != nil || len(tasks) != 3 || tasks[2]["tasks.max"] != "${env:TASKS}" {
		t.Fatalf("task configs = %v, %v; want 3 with the placeholder", tasks, err)
	}
	if err := h.Stop(context.Background(), "c"); err != nil {
		t.Fatal(err)
	}

	got, err := Generate(reg, tr, raw)
	if err != nil || len(got) != 1 || strings.Contains(got[0]["db.password"], "s3cr3t") {
		t.Fatalf("Generate = %v, %v", got, err)
	}
}

func cfgOf(base map[string]string, kv ...string) map[string]string {
	out := maps.Clone(base)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}
