package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// Java plugins the test double hosts: one only hosts have, and a version of
// a class that also has a built-in Go plugin.
const (
	classRemoteSource   = "com.example.RemoteSource"
	remoteSourceVersion = "1.2.3"
	hostFileVersion     = "4.4.0"
)

// hostPlugins are what the double announces (the agent's HostPlugins).
var hostPlugins = []api.PluginInfo{
	{Class: classRemoteSource, Type: "source", Version: remoteSourceVersion},
	{Class: classFileSource, Type: "source", Version: hostFileVersion},
}

// fakeJavaHost behaves, over the agent's connector endpoint, as a connector
// host running Java plugins would: com.example.RemoteSource validates its
// "tables" key (required; "bad" is no table), and splits the tables into
// task configs, at most max_tasks of them; the FileStream source of the
// host's version gives one task config. It records what it was asked, so
// tests see which agent ran what.
type fakeJavaHost struct {
	agent string

	mu      sync.Mutex
	started map[string]hostStart
	// tables, when set for a connector, replaces its configured tables:
	// what a real connector would discover in its source system.
	tables map[string]string
	ops    []wire.PluginConnectorRequest
}

// hostStart is a connector the double started.
type hostStart struct {
	class, version string
	config         map[string]string
}

func newFakeJavaHost(agent string) *fakeJavaHost {
	return &fakeJavaHost{agent: agent, started: map[string]hostStart{}, tables: map[string]string{}}
}

// HandleConnector implements agent.ConnectorHost.
func (h *fakeJavaHost) HandleConnector(_ context.Context, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, req)
	class := req.Class
	if class == "" {
		class = req.Config["connector.class"]
	}
	switch req.Op {
	case wire.PluginOpValidate:
		return infosReply(h.ownInfos(class, req.Config, true))
	case wire.PluginOpConfigDef:
		return infosReply(h.ownInfos(class, nil, false))
	case wire.PluginOpStart:
		if errs := tableErrors(class, req.Config["tables"]); len(errs) > 0 {
			return wire.PluginConnectorReply{}, api.Errorf(api.CodeBadRequest, "%s", errs[0])
		}
		h.started[req.Name] = hostStart{class: class, version: req.Version, config: maps.Clone(req.Config)}
		return wire.PluginConnectorReply{}, nil
	case wire.PluginOpTaskConfigs:
		s, ok := h.started[req.Name]
		if !ok {
			return wire.PluginConnectorReply{}, api.Errorf(api.CodeConflict, "connector %s is not started on %s", req.Name, h.agent)
		}
		return wire.PluginConnectorReply{TaskConfigs: h.split(req.Name, s, req.MaxTasks)}, nil
	case wire.PluginOpStop:
		delete(h.started, req.Name)
		return wire.PluginConnectorReply{}, nil
	case wire.PluginOpAlterOffsets:
		return wire.PluginConnectorReply{Definite: true}, nil
	}
	return wire.PluginConnectorReply{}, api.Errorf(api.CodeBadRequest, "unknown operation %s", req.Op)
}

// split is the task configs of connector name: its tables in at most max
// groups, round robin, as a JDBC source splits its tables.
func (h *fakeJavaHost) split(name string, s hostStart, max int) []map[string]string {
	if s.class != classRemoteSource {
		return []map[string]string{{"file": s.config["file"], "topic": s.config["topic"]}}
	}
	tables := s.config["tables"]
	if t, ok := h.tables[name]; ok {
		tables = t
	}
	list := strings.Split(tables, ",")
	n := min(max, len(list))
	groups := make([][]string, n)
	for i, t := range list {
		groups[i%n] = append(groups[i%n], t)
	}
	out := make([]map[string]string, n)
	for i, g := range groups {
		out[i] = map[string]string{"tables": strings.Join(g, ","), "topic": s.config["topic"]}
	}
	return out
}

// ownInfos are the validate entries of the class's own keys (values only
// when withValues).
func (h *fakeJavaHost) ownInfos(class string, config map[string]string, withValues bool) []api.ConfigInfo {
	if class != classRemoteSource {
		return nil
	}
	group := "Remote"
	info := api.ConfigInfo{Definition: api.ConfigKeyInfo{Name: "tables", Type: "LIST", Required: true, Importance: "HIGH",
		Documentation: "Tables to copy.", Group: &group, Width: "LONG", DisplayName: "Tables", Dependents: []string{}}}
	if withValues {
		v, set := config["tables"]
		info.Value = api.ConfigValueInfo{Name: "tables", Visible: true, RecommendedValues: []string{}, Errors: tableErrors(class, v)}
		if set {
			info.Value.Value = &v
		}
	}
	return []api.ConfigInfo{info}
}

// tableErrors are the errors of a "tables" value.
func tableErrors(class, tables string) []string {
	if class != classRemoteSource {
		return []string{}
	}
	if tables == "" {
		return []string{`Missing required configuration "tables" which has no default value.`}
	}
	if slices.Contains(strings.Split(tables, ","), "bad") {
		return []string{"Invalid value bad for configuration tables: no such table"}
	}
	return []string{}
}

func infosReply(infos []api.ConfigInfo) (wire.PluginConnectorReply, error) {
	raw, err := json.Marshal(infos)
	if err != nil {
		return wire.PluginConnectorReply{}, fmt.Errorf("encoding config infos: %w", err)
	}
	return wire.PluginConnectorReply{ConfigInfos: raw}, nil
}

// runs reports whether the double runs connector name, and how it was
// started.
func (h *fakeJavaHost) runs(name string) (hostStart, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.started[name]
	return s, ok
}

// setTables makes the tables connector name finds from now on.
func (h *fakeJavaHost) setTables(name, tables string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tables[name] = tables
}

// asked reports whether the double was sent an operation op.
func (h *fakeJavaHost) asked(op string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.ContainsFunc(h.ops, func(r wire.PluginConnectorRequest) bool { return r.Op == op })
}

// exit forgets every connector, as a host process that ended with its
// agent would.
func (h *fakeJavaHost) exit() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.started)
}
