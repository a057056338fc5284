package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	v1 "github.com/sluice-io/sluice/api/v1"
)

// Java plugins the test double hosts: one only hosts have, and a version of
// a class that also has a built-in Go plugin.
const (
	classRemoteSource   = "com.example.RemoteSource"
	remoteSourceVersion = "1.2.3"
	hostFileVersion     = "4.4.0"
)

// hostPlugins are what the double announces (the agent's HostPlugins).
var hostPlugins = []v1.PluginInfo{
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
	ops    []v1.PluginConnectorRequest
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
func (h *fakeJavaHost) HandleConnector(_ context.Context, req v1.PluginConnectorRequest) (v1.PluginConnectorReply, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, req)
	class := req.Class
	if class == "" {
		class = req.Config["connector.class"]
	}
	switch req.Op {
	case v1.PluginOpValidate:
		return infosReply(h.ownInfos(class, req.Config, true))
	case v1.PluginOpConfigDef:
		return infosReply(h.ownInfos(class, nil, false))
	case v1.PluginOpStart:
		if errs := tableErrors(class, req.Config["tables"]); len(errs) > 0 {
			return v1.PluginConnectorReply{}, v1.Errorf(v1.CodeBadRequest, "%s", errs[0])
		}
		h.started[req.Name] = hostStart{class: class, version: req.Version, config: maps.Clone(req.Config)}
		return v1.PluginConnectorReply{}, nil
	case v1.PluginOpTaskConfigs:
		s, ok := h.started[req.Name]
		if !ok {
			return v1.PluginConnectorReply{}, v1.Errorf(v1.CodeConflict, "connector %s is not started on %s", req.Name, h.agent)
		}
		return v1.PluginConnectorReply{TaskConfigs: h.split(req.Name, s, req.MaxTasks)}, nil
	case v1.PluginOpStop:
		delete(h.started, req.Name)
		return v1.PluginConnectorReply{}, nil
	case v1.PluginOpAlterOffsets:
		return v1.PluginConnectorReply{Definite: true}, nil
	}
	return v1.PluginConnectorReply{}, v1.Errorf(v1.CodeBadRequest, "unknown operation %s", req.Op)
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
func (h *fakeJavaHost) ownInfos(class string, config map[string]string, withValues bool) []v1.ConfigInfo {
	if class != classRemoteSource {
		return nil
	}
	group := "Remote"
	info := v1.ConfigInfo{Definition: v1.ConfigKeyInfo{Name: "tables", Type: "LIST", Required: true, Importance: "HIGH",
		Documentation: "Tables to copy.", Group: &group, Width: "LONG", DisplayName: "Tables", Dependents: []string{}}}
	if withValues {
		v, set := config["tables"]
		info.Value = v1.ConfigValueInfo{Name: "tables", Visible: true, RecommendedValues: []string{}, Errors: tableErrors(class, v)}
		if set {
			info.Value.Value = &v
		}
	}
	return []v1.ConfigInfo{info}
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

func infosReply(infos []v1.ConfigInfo) (v1.PluginConnectorReply, error) {
	raw, err := json.Marshal(infos)
	if err != nil {
		return v1.PluginConnectorReply{}, fmt.Errorf("encoding config infos: %w", err)
	}
	return v1.PluginConnectorReply{ConfigInfos: raw}, nil
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
	return slices.ContainsFunc(h.ops, func(r v1.PluginConnectorRequest) bool { return r.Op == op })
}

// exit forgets every connector, as a host process that ended with its
// agent would.
func (h *fakeJavaHost) exit() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.started)
}
