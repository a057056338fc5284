package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
	"github.com/sluice-io/sluice/connect/file"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/sluicetest"
)

// TestTasksRunOnlyWhereTheirPluginIs checks issue 12 §8: agents announce
// their plugins; a task is placed only on an agent that has its plugin (as
// in a rolling upgrade that adds one), GET /connector-plugins lists what
// live agents have, and a task no live agent can run is UNASSIGNED saying why.
func TestTasksRunOnlyWhereTheirPluginIs(t *testing.T) {
	t.Parallel()
	// agent-1 is "old": it has the file connectors but not the generator.
	old, err := plugins.New(append([]*connect.Plugin{file.SourcePlugin(), file.SinkPlugin()}, converters.Plugins()...)...)
	if err != nil {
		t.Fatal(err)
	}
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, Lease: time.Second, Plugins: []*plugins.Registry{old, nil}})
	c.WaitAgents(2)
	name := c.Name("gen")
	mustCreate(c, name, generatorCfg(c.Name("gen-data"), "streams", "4", "tasks.max", "4"), "")
	st := c.WaitState(name, "RUNNING", 4, "RUNNING")
	for _, ts := range st.Tasks {
		if ts.WorkerID != "agent-2" {
			t.Errorf("task %d runs on %s, which lacks the generator plugin", ts.ID, ts.WorkerID)
		}
	}
	var listed []struct{ Class, Type string }
	c.Must(200, "GET", "/connector-plugins", nil).JSON(t, &listed)
	if !hasClass(listed, classGenerator) {
		t.Fatalf("GET /connector-plugins = %v, want the generator of agent-2", listed)
	}

	c.StopAgent(1)
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		st, _ := c.Status(name)
		for _, ts := range st.Tasks {
			if ts.State != "UNASSIGNED" || !strings.Contains(ts.Trace, "No live agent has the plugin "+classGenerator) {
				return false, fmt.Sprintf("task %d: %s on %s, trace %q", ts.ID, ts.State, ts.WorkerID, ts.Trace)
			}
		}
		return len(st.Tasks) == 4, fmt.Sprintf("%d tasks", len(st.Tasks))
	})
	c.Must(200, "GET", "/connector-plugins", nil).JSON(t, &listed)
	if hasClass(listed, classGenerator) {
		t.Fatalf("GET /connector-plugins = %v, still lists the plugin no live agent has", listed)
	}
	c.StartAgent(1)
	c.WaitState(name, "RUNNING", 4, "RUNNING")
}

func hasClass(ps []struct{ Class, Type string }, class string) bool {
	for _, p := range ps {
		if p.Class == class {
			return true
		}
	}
	return false
}

// TestInvalidSelectorIsRefusedEverywhere checks issue 12 §7: a selector
// that does not parse is a per-field error from validate and Kafka
// Connect's 400 on create, PUT and PATCH config, and the connector keeps
// its previous config.
func TestInvalidSelectorIsRefusedEverywhere(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	name := c.Name("sel")
	cfg := generatorCfg(c.Name("sel-data"), "sluice.agent.selector", "zone=a")
	mustCreate(c, name, cfg, "STOPPED")

	bad := cfgWith(cfg, "sluice.agent.selector", "zone")
	v := validateConfig(c, classGenerator, cfgWith(bad, "name", name))
	if v.ErrorCount != 1 || len(v.Errors["sluice.agent.selector"]) != 1 {
		t.Fatalf("validate: error_count %d, errors %v; want one, on sluice.agent.selector", v.ErrorCount, v.Errors)
	}
	const prefix = "Connector configuration is invalid and contains the following 1 error(s):"
	for _, r := range []sluicetest.Response{
		c.Do("POST", "/connectors", map[string]any{"name": name + "-new", "config": bad}),
		c.Do("PUT", "/connectors/"+name+"/config", bad),
		c.Do("PATCH", "/connectors/"+name+"/config", map[string]any{"sluice.agent.selector": "zone"}),
	} {
		if r.Status != 400 || !strings.HasPrefix(r.Message(), prefix) || !strings.Contains(r.Message(), "sluice.agent.selector") {
			t.Errorf("got %s, want a 400 naming sluice.agent.selector", r)
		}
	}
	var got map[string]string
	c.Must(200, "GET", "/connectors/"+name+"/config", nil).JSON(t, &got)
	if got["sluice.agent.selector"] != "zone=a" {
		t.Fatalf("config after refused writes: selector %q, want the previous zone=a", got["sluice.agent.selector"])
	}
}
