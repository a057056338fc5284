package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/shared/wire"
	"github.com/sluice-io/sluice/sluicetest"
)

// The KIP-891 tests: several versions of one Java plugin on agents'
// hosts (test doubles through the real NATS transport and the agents'
// runtimes), a connector's version resolved once for the fleet, and a
// plugin upgrade as a health-gated rollout.

// classVersioned is the double's versioned source; its version
// versionBroken starts its connector but fails every task.
const (
	classVersioned = "com.example.VersionedSource"
	versionBroken  = "3.0.0"
)

// versionedPlugins announces versions of classVersioned.
func versionedPlugins(versions ...string) []api.PluginInfo {
	out := make([]api.PluginInfo, len(versions))
	for i, v := range versions {
		out[i] = api.PluginInfo{Class: classVersioned, Type: "source", Version: v}
	}
	return out
}

// versionedHost is one agent's connector host of the double: its
// connector side (the leader's operations) and its tasks, which record
// the version the agent ran them at.
type versionedHost struct {
	agent    string
	versions []string

	mu      sync.Mutex
	started map[string]string // connector → version started
	running map[api.TaskID]string
	defs    []string // the versions config_def was asked for
}

func newVersionedHost(agent string, versions ...string) *versionedHost {
	return &versionedHost{agent: agent, versions: versions, started: map[string]string{}, running: map[api.TaskID]string{}}
}

// spec is the host as sluicetest gives it to an agent.
func (h *versionedHost) spec() *sluicetest.ConnectorHost {
	return &sluicetest.ConnectorHost{Host: h, Plugins: versionedPlugins(h.versions...), Tasks: h}
}

// HandleConnector implements agent.ConnectorHandler: start only a version
// the host has (as Kafka's Plugins would refuse another), tasks.max task
// configs.
func (h *versionedHost) HandleConnector(_ context.Context, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch req.Op {
	case wire.PluginOpValidate:
		return wire.PluginConnectorReply{}, nil
	case wire.PluginOpConfigDef:
		h.defs = append(h.defs, req.Version)
		return wire.PluginConnectorReply{}, nil
	case wire.PluginOpStart:
		if !slices.Contains(h.versions, req.Version) {
			return wire.PluginConnectorReply{}, api.Errorf(api.CodeBadRequest, "Plugin %s not found that matches the version range [%s,%s]", classVersioned, req.Version, req.Version)
		}
		h.started[req.Name] = req.Version
		return wire.PluginConnectorReply{}, nil
	case wire.PluginOpTaskConfigs:
		out := make([]map[string]string, req.MaxTasks)
		for i := range out {
			out[i] = map[string]string{"task": strconv.Itoa(i)}
		}
		return wire.PluginConnectorReply{TaskConfigs: out}, nil
	case wire.PluginOpStop:
		delete(h.started, req.Name)
		return wire.PluginConnectorReply{}, nil
	}
	return wire.PluginConnectorReply{}, api.Errorf(api.CodeBadRequest, "unknown operation %s", req.Op)
}

// TaskKind implements agent.HostTasks: the double's class, at a version
// this host has.
func (h *versionedHost) TaskKind(conn map[string]string) (connect.Kind, bool) {
	return connect.KindSource, conn["connector.class"] == classVersioned && slices.Contains(h.versions, conn["connector.plugin.version"])
}

// NewSourceTask implements agent.HostTasks.
func (h *versionedHost) NewSourceTask(id api.TaskID, conn map[string]string) connect.SourceTask {
	return &versionedTask{h: h, id: id, version: conn["connector.plugin.version"]}
}

// NewSinkTask implements agent.HostTasks; the double has no sink.
func (h *versionedHost) NewSinkTask(api.TaskID, map[string]string) connect.SinkTask { return nil }

// Restartable implements agent.HostTasks.
func (h *versionedHost) Restartable(error) bool { return false }

// runs is the version the host runs task id at ("" for none).
func (h *versionedHost) runs(id api.TaskID) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running[id]
}

// versionedTask is a task of the double: it produces nothing; at
// versionBroken it fails to start.
type versionedTask struct {
	h       *versionedHost
	id      api.TaskID
	version string
}

func (t *versionedTask) Start(context.Context, connect.SourceTaskContext, map[string]string) error {
	if t.version == versionBroken {
		return errors.New("version " + versionBroken + " of " + classVersioned + " cannot start")
	}
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	t.h.running[t.id] = t.version
	return nil
}

func (t *versionedTask) Poll(ctx context.Context) ([]connect.SourceRecord, error) {
	select {
	case <-ctx.Done():
	case <-time.After(100 * time.Millisecond):
	}
	return nil, nil
}

func (t *versionedTask) Stop() error {
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	if t.h.running[t.id] == t.version {
		delete(t.h.running, t.id)
	}
	return nil
}

// versionedCfg is a config of the double's source at version spec.
func versionedCfg(spec string, tasks int) map[string]string {
	return cfgOf("connector.class", classVersioned, "connector.plugin.version", spec, "tasks.max", strconv.Itoa(tasks))
}

// waitVersion waits until connector name and its n tasks are RUNNING at
// version, each task run at that version by its agent's host, and
// returns the status.
func waitVersion(c *sluicetest.Cluster, hosts []*versionedHost, name, version string, n int) sluicetest.Status {
	c.T.Helper()
	var last sluicetest.Status
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		last, _ = c.Status(name)
		if last.Connector.State != api.StateRunning || last.Connector.Version != version || len(last.Tasks) != n {
			return false, fmt.Sprintf("%+v", last)
		}
		for _, ts := range last.Tasks {
			if ts.State != api.StateRunning || ts.Version != version {
				return false, fmt.Sprintf("task %d: %s at %s on %s %q", ts.ID, ts.State, ts.Version, ts.WorkerID, ts.Trace)
			}
			i, err := strconv.Atoi(strings.TrimPrefix(ts.WorkerID, "agent-"))
			if err != nil || i < 1 || i > len(hosts) {
				return false, "task on " + ts.WorkerID
			}
			if got := hosts[i-1].runs(api.TaskID{Connector: name, Task: ts.ID}); got != version {
				return false, fmt.Sprintf("task %d: %s's host runs it at %q", ts.ID, ts.WorkerID, got)
			}
		}
		return true, ""
	})
	return last
}

// TestPluginVersionsFleetWide: agents with different versions of one
// plugin. GET /connector-plugins lists each version; a range resolves,
// once, to the highest version a live agent has, which the status shows
// and every task runs, placed only where that version is; a requirement
// no version meets is Kafka's validation error. When the agents with
// that version leave, the tasks wait UNASSIGNED saying so rather than
// run another version; when one returns, they run there again.
func TestPluginVersionsFleetWide(t *testing.T) {
	t.Parallel()
	hosts := []*versionedHost{
		newVersionedHost("agent-1", "1.0.0", "2.0.0"),
		newVersionedHost("agent-2", "1.0.0"),
		newVersionedHost("agent-3", "1.0.0", "2.0.0", "1.10.0"),
	}
	c := sluicetest.Start(t, sluicetest.Options{Agents: 3, Lease: time.Second,
		ConnectorHosts: []*sluicetest.ConnectorHost{hosts[0].spec(), hosts[1].spec(), hosts[2].spec()}})

	var listed []api.PluginInfo
	c.Must(http.StatusOK, "GET", "/connector-plugins", nil).JSON(t, &listed)
	var versions []string
	for _, p := range listed {
		if p.Class == classVersioned {
			versions = append(versions, p.Version)
		}
	}
	if !slices.Equal(versions, []string{"1.0.0", "1.10.0", "2.0.0"}) {
		t.Fatalf("GET /connector-plugins lists %s at %v, want each version once, in order", classVersioned, versions)
	}

	v := validateConfig(c, "VersionedSource", cfgWith(versionedCfg("[5.0,)", 1), "name", "v"))
	want := "Plugin " + classVersioned + " not found that matches the version range [5.0,), available versions: [1.0.0, 1.10.0, 2.0.0]"
	if got := v.Errors["connector.plugin.version"]; len(got) != 1 || got[0] != want || len(v.Errors["connector.class"]) != 1 || v.Errors["connector.class"][0] != want {
		t.Fatalf("validate of an unmet range: %v", v.Errors)
	}

	// A spec Maven cannot read fails the request with Maven's message, as
	// Kafka Connect's does: validate's 500 wraps it, create's 400 is it.
	wantError(t, c.Do("PUT", "/connector-plugins/VersionedSource/config/validate", cfgWith(versionedCfg("[1.0", 1), "name", "v")),
		http.StatusInternalServerError, "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: Unbounded range: [1.0")
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": c.Name("bad"), "config": versionedCfg("(1.0]", 1)}),
		http.StatusBadRequest, "Single version must be surrounded by []: (1.0]")

	// GET …/config?version=: the keys of a version, from a host that has
	// it; a version nobody has is Kafka's 400, for a built-in too.
	wantError(t, c.Do("GET", "/connector-plugins/VersionedSource/config?version=[5.0,)", nil), http.StatusBadRequest, want)
	c.Must(http.StatusOK, "GET", "/connector-plugins/VersionedSource/config?version=1.10.0", nil)
	hosts[2].mu.Lock()
	defs := slices.Clone(hosts[2].defs)
	hosts[2].mu.Unlock()
	if !slices.Equal(defs, []string{"1.10.0"}) {
		t.Errorf("agent-3's host was asked for the config of versions %v, want [1.10.0]", defs)
	}
	wantError(t, c.Do("GET", "/connector-plugins/FileStreamSource/config?version=9.9", nil), http.StatusBadRequest,
		"Plugin "+classFileSource+" not found that matches the version range [9.9,9.9], available versions: ["+connect.Version+"]")
	c.Must(http.StatusOK, "GET", "/connector-plugins/FileStreamSource/config?version=latest", nil)

	name := c.Name("ver")
	cfg := versionedCfg("[1.0,3.0)", 3)
	mustCreate(c, name, cfg, "")
	st := waitVersion(c, hosts, name, "2.0.0", 3)
	for _, ts := range st.Tasks {
		if ts.WorkerID == "agent-2" {
			t.Errorf("task %d placed on agent-2, which has no 2.0.0", ts.ID)
		}
	}
	if got := connectorConfig(c, name)["connector.plugin.version"]; got != "[1.0,3.0)" {
		t.Errorf("GET config shows connector.plugin.version %q, want the range as written", got)
	}

	// The agents with 2.0.0 leave: no other version runs in its place.
	c.StopAgent(0)
	c.StopAgent(2)
	waitUnassigned := func() {
		t.Helper()
		sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
			st, _ := c.Status(name)
			for _, ts := range st.Tasks {
				if ts.State != api.StateUnassigned || !strings.Contains(ts.Trace, "No live agent has the plugin "+classVersioned+" version 2.0.0 (Java)") {
					return false, fmt.Sprintf("task %d: %s on %s, trace %q", ts.ID, ts.State, ts.WorkerID, ts.Trace)
				}
			}
			return len(st.Tasks) == 3, fmt.Sprintf("%d tasks", len(st.Tasks))
		})
		sluicetest.Consistently(t, 2*time.Second, func() (bool, string) {
			r := hosts[1].runs(api.TaskID{Connector: name, Task: 0})
			return r == "", "agent-2 runs a task at " + r
		})
	}
	waitUnassigned()
	// A new leader reads the version from the config topic: it does not
	// resolve the range again with the agents it has now.
	c.StopCoordinator()
	c.StartCoordinator()
	waitUnassigned()

	// A write of another key keeps the recorded version, though the range
	// would resolve to 1.0.0 with the agents live now.
	c.Must(http.StatusOK, "PATCH", "/connectors/"+name+"/config", map[string]string{"note": "a key the plugin ignores"})
	waitUnassigned()

	// One comes back: the tasks run there, at 2.0.0.
	c.StartAgent(2)
	st = waitVersion(c, hosts, name, "2.0.0", 3)
	for _, ts := range st.Tasks {
		if ts.WorkerID != "agent-3" {
			t.Errorf("task %d on %s", ts.ID, ts.WorkerID)
		}
	}
}

// TestPluginUpgradeRollout: a plugin upgrade as a health-gated rollout.
// A rollout patching connector.plugin.version moves the connectors to the
// new version batch by batch, each resolved when its patch applies; a
// version whose tasks fail its health gate is rolled back, the connectors
// running their previous version again.
func TestPluginUpgradeRollout(t *testing.T) {
	t.Parallel()
	all := []string{"1.0.0", "2.0.0", versionBroken}
	hosts := []*versionedHost{newVersionedHost("agent-1", all...), newVersionedHost("agent-2", all...)}
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, Lease: time.Second,
		ConnectorHosts: []*sluicetest.ConnectorHost{hosts[0].spec(), hosts[1].spec()}})
	var names []string
	for i := range 4 {
		name := c.Name(fmt.Sprintf("up-%d", i))
		mustCreate(c, name, versionedCfg("1.0.0", 2), "")
		names = append(names, name)
	}
	for _, n := range names {
		waitVersion(c, hosts, n, "1.0.0", 2)
	}

	// The upgrade, to a range: each connector resolves it to 2.0.0.
	r := createRollout(c, map[string]any{
		"match":      c.Name("up-*"),
		"patch":      map[string]any{"connector.plugin.version": "[2.0,3.0)"},
		"batches":    []any{1, "rest"},
		"health":     map[string]any{"running_for": "1s", "max_failed_tasks": 0},
		"on_failure": "rollback",
	})
	if len(r.Batches) != 2 || len(r.Batches[0].Connectors) != 1 || len(r.Batches[1].Connectors) != 3 {
		t.Fatalf("batches: %s", batchStates(r))
	}
	r = waitRollout(c, r.ID, api.RolloutDone)
	for _, n := range names {
		waitVersion(c, hosts, n, "2.0.0", 2)
	}

	// A version whose tasks fail: the first batch fails its gate and is
	// rolled back; the others never leave 2.0.0.
	r = createRollout(c, map[string]any{
		"match":      c.Name("up-*"),
		"patch":      map[string]any{"connector.plugin.version": versionBroken},
		"batches":    []any{1, "rest"},
		"health":     map[string]any{"running_for": "1s", "max_failed_tasks": 0},
		"on_failure": "rollback",
	})
	r = waitRollout(c, r.ID, api.RolloutRolledBack)
	if r.Batch != 0 || !strings.Contains(r.Error, "batch 1 of 2 failed its health gate") || r.Batches[1].State != api.BatchPending {
		t.Fatalf("rollout at batch %d, error %q: %s", r.Batch, r.Error, batchStates(r))
	}
	for _, n := range names {
		if got := connectorConfig(c, n)["connector.plugin.version"]; got != "[2.0,3.0)" {
			t.Errorf("%s: connector.plugin.version %q after the rollback", n, got)
		}
		waitVersion(c, hosts, n, "2.0.0", 2)
	}
}
