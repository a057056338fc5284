package integration

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/shared/wire"
	"github.com/sluice-io/sluice/sluicetest"
)

// javaCluster starts three agents; agent-1 and agent-3 have a connector
// host (the test double), agent-2 has none.
func javaCluster(t *testing.T) (*sluicetest.Cluster, []*fakeJavaHost) {
	return javaClusterWith(t, sluicetest.Options{})
}

// javaClusterWith is javaCluster with more options.
func javaClusterWith(t *testing.T, opts sluicetest.Options) (*sluicetest.Cluster, []*fakeJavaHost) {
	hosts := []*fakeJavaHost{newFakeJavaHost("agent-1"), nil, newFakeJavaHost("agent-3")}
	spec := make([]*sluicetest.ConnectorHost, len(hosts))
	for i, h := range hosts {
		if h != nil {
			spec[i] = &sluicetest.ConnectorHost{Host: h, Plugins: hostPlugins}
		}
	}
	opts.Agents, opts.Lease, opts.ConnectorHosts = 3, time.Second, spec
	c := sluicetest.Start(t, opts)
	return c, hosts
}

// remoteCfg is a com.example.RemoteSource config.
func remoteCfg(topic, tables string, kv ...string) map[string]string {
	return cfgWith(cfgOf("connector.class", classRemoteSource, "topic", topic, "tables", tables), kv...)
}

// taskConfigs is GET /connectors/{name}/tasks: each task's config.
func taskConfigs(c *sluicetest.Cluster, name string) []map[string]string {
	c.T.Helper()
	var got []struct {
		Config map[string]string `json:"config"`
	}
	c.Must(http.StatusOK, "GET", "/connectors/"+name+"/tasks", nil).JSON(c.T, &got)
	out := make([]map[string]string, len(got))
	for i, g := range got {
		out[i] = g.Config
	}
	return out
}

// waitTables waits until the connector's task configs carry these tables
// values, in task order.
func waitTables(c *sluicetest.Cluster, name string, want ...string) {
	c.T.Helper()
	sluicetest.Eventually(c.T, 15*time.Second, func() (bool, string) {
		tcs := taskConfigs(c, name)
		got := make([]string, len(tcs))
		for i, tc := range tcs {
			got[i] = tc["tables"]
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("tables %v, want %v", got, want)
	})
}

// runner is the index of the double that runs connector name, or -1.
func runner(hosts []*fakeJavaHost, name string) int {
	for i, h := range hosts {
		if h == nil {
			continue
		}
		if _, ok := h.runs(name); ok {
			return i
		}
	}
	return -1
}

// TestJavaPluginsListedAndValidated: GET /connector-plugins lists the
// hosts' Java plugins with their versions, a class with a built-in in both
// versions; GET …/config answers the agent's definitions; validate shows
// the agent's error on the connector's own key and the framework's on a
// framework key.
func TestJavaPluginsListedAndValidated(t *testing.T) {
	t.Parallel()
	c, _ := javaCluster(t)
	var listed []api.PluginInfo
	c.Must(http.StatusOK, "GET", "/connector-plugins", nil).JSON(t, &listed)
	versions := map[string][]string{}
	for _, p := range listed {
		versions[p.Class] = append(versions[p.Class], p.Version)
	}
	if fmt.Sprint(versions[classRemoteSource]) != "["+remoteSourceVersion+"]" {
		t.Errorf("versions of %s listed: %v", classRemoteSource, versions[classRemoteSource])
	}
	if fmt.Sprint(versions[classFileSource]) != "["+connect.Version+" "+hostFileVersion+"]" {
		t.Errorf("versions of %s listed: %v, want the built-in's and the host's", classFileSource, versions[classFileSource])
	}

	var defs []api.ConfigKeyInfo
	c.Must(http.StatusOK, "GET", "/connector-plugins/"+classRemoteSource+"/config", nil).JSON(t, &defs)
	if len(defs) == 0 || defs[0].Name != "tables" || !defs[0].Required {
		t.Fatalf("config of %s: %+v, want the agent's tables first", classRemoteSource, defs)
	}
	if !hasKey(defs, "tasks.max") {
		t.Errorf("config of %s lacks the framework's tasks.max", classRemoteSource)
	}

	v := validateConfig(c, "RemoteSource", remoteCfg(c.Name("t"), "a,bad", "name", "r", "tasks.max", "0"))
	if v.ErrorCount != 2 || len(v.Errors["tables"]) != 1 || !strings.Contains(v.Errors["tables"][0], "no such table") ||
		len(v.Errors["tasks.max"]) != 1 {
		t.Fatalf("validate: error_count %d, errors %v; want the agent's on tables and the framework's on tasks.max", v.ErrorCount, v.Errors)
	}
	if v := validateConfig(c, "RemoteSource", remoteCfg(c.Name("t"), "a,b", "name", "r")); v.ErrorCount != 0 {
		t.Fatalf("validate of a good config: %v", v.Errors)
	}
	r := c.Do("POST", "/connectors", map[string]any{"name": c.Name("bad"), "config": remoteCfg(c.Name("t"), "bad")})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Message(), "no such table") {
		t.Fatalf("create with a bad table: %s", r)
	}
}

func hasKey(defs []api.ConfigKeyInfo, name string) bool {
	for _, d := range defs {
		if d.Name == name {
			return true
		}
	}
	return false
}

// TestJavaConnectorRunsOnAgents: a Java connector's task configs come from
// the agent that runs it, a reconfigure event gets new ones, it starts
// again on the other agent with the plugin when its agent stops, and with
// no agent with the plugin left, validate and create refuse it and its
// tasks are UNASSIGNED saying why.
func TestJavaConnectorRunsOnAgents(t *testing.T) {
	t.Parallel()
	c, hosts := javaCluster(t)
	name := c.Name("remote")
	mustCreate(c, name, remoteCfg(c.Name("t"), "a,b,c", "tasks.max", "2"), "")
	waitTables(c, name, "a,c", "b")
	i := runner(hosts, name)
	if i < 0 {
		t.Fatal("no connector host runs the connector")
	}
	st := waitConnector(c, name, 2)
	for _, ts := range st.Tasks {
		if ts.WorkerID == "agent-2" {
			t.Errorf("task %d placed on agent-2, which has no connector host", ts.ID)
		}
	}

	hosts[i].setTables(name, "x,y,z,w")
	c.Agents[i].ConnectorEvent(wire.PluginConnectorEvent{Name: name, Kind: wire.PluginEventReconfigure})
	waitTables(c, name, "x,z", "y,w")

	other := 2 - i // agent-1 (0) and agent-3 (2) have hosts
	c.StopAgent(i)
	hosts[i].exit()
	sluicetest.Eventually(t, 15*time.Second, func() (bool, string) {
		_, ok := hosts[other].runs(name)
		return ok, "the connector is not started on the other agent with the plugin"
	})
	waitConnector(c, name, 2)

	c.StopAgent(other)
	hosts[other].exit()
	sluicetest.Eventually(t, 15*time.Second, func() (bool, string) {
		st, _ := c.Status(name)
		for _, ts := range st.Tasks {
			if ts.State != "UNASSIGNED" || !strings.Contains(ts.Trace, "No live agent has the plugin "+classRemoteSource) {
				return false, fmt.Sprintf("task %d: %s on %s, trace %q", ts.ID, ts.State, ts.WorkerID, ts.Trace)
			}
		}
		return len(st.Tasks) == 2, fmt.Sprintf("%d tasks", len(st.Tasks))
	})
	v := validateConfig(c, "RemoteSource", remoteCfg(c.Name("t"), "a", "name", "r"))
	if errs := v.Errors["connector.class"]; len(errs) != 1 || !strings.Contains(errs[0], "No live agent has the plugin "+classRemoteSource) {
		t.Fatalf("validate with no host: %v", v.Errors)
	}
	r := c.Do("POST", "/connectors", map[string]any{"name": c.Name("none"), "config": remoteCfg(c.Name("t"), "a")})
	if r.Status != http.StatusBadRequest || !strings.HasPrefix(r.Message(), "Connector configuration is invalid and contains the following 1 error(s):") ||
		!strings.Contains(r.Message(), "No live agent has the plugin "+classRemoteSource) {
		t.Fatalf("create with no host: %s", r)
	}

	// An agent with the plugin back: the connector runs again.
	c.StartAgent(other)
	waitConnector(c, name, 2)
	if runner(hosts, name) != other {
		t.Fatal("the connector is not started on the agent that came back")
	}
}

// TestPluginVersionChoosesTheHost: a PUT config whose
// connector.plugin.version names the host's version of a class that also
// has a built-in runs the connector on an agent's host, and its tasks
// only where that version is.
func TestPluginVersionChoosesTheHost(t *testing.T) {
	t.Parallel()
	c, hosts := javaCluster(t)
	name := c.Name("file")
	cfg := fileSourceCfg("in.txt", c.Name("t"))
	mustCreate(c, name, cfg, "")
	waitConnector(c, name, 1)
	if runner(hosts, name) >= 0 {
		t.Fatal("the built-in file source was started on a connector host")
	}
	pinned := cfgWith(cfg, "connector.plugin.version", hostFileVersion)
	c.Must(http.StatusOK, "PUT", "/connectors/"+name+"/config", pinned)
	sluicetest.Eventually(t, 15*time.Second, func() (bool, string) {
		i := runner(hosts, name)
		if i < 0 {
			return false, "no host runs it"
		}
		s, _ := hosts[i].runs(name)
		return s.class == classFileSource && s.version == hostFileVersion, fmt.Sprintf("started as %+v", s)
	})
	sluicetest.Eventually(t, 15*time.Second, func() (bool, string) {
		st, _ := c.Status(name)
		if len(st.Tasks) != 1 || st.Tasks[0].WorkerID == "" || st.Tasks[0].WorkerID == "agent-2" {
			return false, fmt.Sprintf("tasks %+v", st.Tasks)
		}
		return true, ""
	})
	// The host's task configs replace the built-in's (which the reconcile
	// pass commits after the new instance computed them).
	want := map[string]string{"file": "in.txt", "topic": c.Name("t"), "task.class": "org.apache.kafka.connect.file.FileStreamSourceTask"}
	sluicetest.Eventually(t, 15*time.Second, func() (bool, string) {
		tcs := taskConfigs(c, name)
		return len(tcs) == 1 && maps.Equal(tcs[0], want), fmt.Sprintf("task configs %v", tcs)
	})
}

// waitConnector waits until the connector is RUNNING with n tasks, each
// placed on an agent, whatever the tasks' own states: the agents run no
// task of the double's Java plugin.
func waitConnector(c *sluicetest.Cluster, name string, n int) sluicetest.Status {
	c.T.Helper()
	var last sluicetest.Status
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		last, _ = c.Status(name)
		if last.Connector.State != "RUNNING" || len(last.Tasks) != n {
			return false, fmt.Sprintf("%+v", last)
		}
		for _, ts := range last.Tasks {
			if ts.WorkerID == "" {
				return false, fmt.Sprintf("task %d unplaced: %s %q", ts.ID, ts.State, ts.Trace)
			}
		}
		return true, ""
	})
	return last
}

// TestJavaConnectorOnSecuredNATS: with deploy/nats's permissions the
// leader reaches the agents' connector endpoints and receives their
// connector events, and the server refuses nothing.
func TestJavaConnectorOnSecuredNATS(t *testing.T) {
	t.Parallel()
	c, hosts := javaClusterWith(t, sluicetest.Options{SecureNATS: true})
	name := c.Name("remote")
	v := validateConfig(c, "RemoteSource", remoteCfg(c.Name("t"), "bad", "name", name))
	if len(v.Errors["tables"]) != 1 {
		t.Fatalf("validate: %v", v.Errors)
	}
	mustCreate(c, name, remoteCfg(c.Name("t"), "a,b", "tasks.max", "2"), "")
	waitTables(c, name, "a", "b")
	i := runner(hosts, name)
	hosts[i].setTables(name, "c")
	c.Agents[i].ConnectorEvent(wire.PluginConnectorEvent{Name: name, Kind: wire.PluginEventReconfigure})
	waitTables(c, name, "c")
	if lines := c.Logged("NATS server refused"); len(lines) > 0 {
		t.Fatalf("the server refused operations of the cluster's own processes:\n%s", strings.Join(lines, "\n"))
	}
}

// TestJavaConnectorErrorAndOffsets: an error the connector raises on its
// host fails it with the message until a restart; its alterOffsets runs
// on an agent, whose definite answer the PATCH reports.
func TestJavaConnectorErrorAndOffsets(t *testing.T) {
	t.Parallel()
	c, hosts := javaCluster(t)
	name := c.Name("remote")
	mustCreate(c, name, remoteCfg(c.Name("t"), "a"), "")
	waitTables(c, name, "a")
	i := runner(hosts, name)
	c.Agents[i].ConnectorEvent(wire.PluginConnectorEvent{Name: name, Kind: wire.PluginEventError, Message: "the source went away"})
	sluicetest.Eventually(t, 15*time.Second, func() (bool, string) {
		st, _ := c.Status(name)
		return st.Connector.State == "FAILED" && strings.Contains(st.Connector.Trace, "the source went away"), fmt.Sprintf("%+v", st.Connector)
	})
	c.Must(http.StatusNoContent, "POST", "/connectors/"+name+"/restart", nil)
	waitConnector(c, name, 1)

	c.Must(http.StatusNoContent, "PUT", "/connectors/"+name+"/stop", nil)
	sluicetest.Eventually(t, 15*time.Second, func() (bool, string) {
		st, _ := c.Status(name)
		return st.Connector.State == "STOPPED" && len(st.Tasks) == 0, fmt.Sprintf("%+v", st)
	})
	part := map[string]any{"table": "a"}
	patch(t, c, name, body(offset{Partition: part, Offset: map[string]any{"id": json.Number("7")}}), http.StatusOK, msgAlterDefinite)
	ran := false
	for _, h := range hosts {
		if h != nil && h.asked(wire.PluginOpAlterOffsets) {
			ran = true
		}
	}
	if !ran {
		t.Fatal("no agent's host was asked about the offsets change")
	}
}
