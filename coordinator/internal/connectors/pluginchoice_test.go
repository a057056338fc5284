package connectors

import (
	"encoding/json"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/file"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
)

// TestDecodeHostAnswers: a host's validate and config_def answers are read
// in each shape the contract allows.
func TestDecodeHostAnswers(t *testing.T) {
	for _, raw := range []string{
		`[{"definition":{"name":"tables"},"value":{"name":"tables","errors":["x"]}}]`,
		`{"configs":[{"definition":{"name":"tables"},"value":{"name":"tables","errors":["x"]}}]}`,
	} {
		infos, err := decodeConfigInfos(json.RawMessage(raw))
		if err != nil || len(infos) != 1 || infos[0].Value.Errors[0] != "x" {
			t.Errorf("%s: %+v, %v", raw, infos, err)
		}
		keys, err := decodeConfigKeys(json.RawMessage(raw))
		if err != nil || len(keys) != 1 || keys[0].Name != "tables" {
			t.Errorf("keys of %s: %+v, %v", raw, keys, err)
		}
	}
	for _, raw := range []string{`[{"name":"tables","type":"LIST"}]`, `{"configs":[{"name":"tables","type":"LIST"}]}`} {
		keys, err := decodeConfigKeys(json.RawMessage(raw))
		if err != nil || len(keys) != 1 || keys[0].Name != "tables" || keys[0].Type != "LIST" {
			t.Errorf("keys of %s: %+v, %v", raw, keys, err)
		}
	}
	if infos, err := decodeConfigInfos(nil); err != nil || infos != nil {
		t.Errorf("empty answer: %v, %v", infos, err)
	}
	if _, err := decodeConfigInfos(json.RawMessage(`"nope"`)); err == nil {
		t.Error("a string was read as config infos")
	}
}

// TestHostPluginNamed: Java classes are named as Kafka Connect resolves
// connector.class: in full, by simple name, or without "Connector".
func TestHostPluginNamed(t *testing.T) {
	const class = "com.example.RemoteSourceConnector"
	for name, want := range map[string]bool{class: true, "RemoteSourceConnector": true, "RemoteSource": true,
		"com.example.RemoteSource": false, "Remote": false, "": false} {
		if got := hostPluginNamed(class, name); got != want {
			t.Errorf("hostPluginNamed(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestChoice: the one place that decides between a built-in Go plugin and
// an agent's Java one.
func TestChoice(t *testing.T) {
	const javaSink = "com.example.RemoteSinkConnector"
	goSource := file.SourceClass
	hostOnly := map[registry.PluginKey]api.PluginInfo{
		{Class: javaSink, Version: "2.0"}:       {Class: javaSink, Type: "sink", Version: "2.0"},
		{Class: javaSink, Version: "1.0"}:       {Class: javaSink, Type: "sink", Version: "1.0"},
		{Class: goSource, Version: "9.9"}:       {Class: goSource, Type: "source", Version: "9.9"},
		{Class: "a.DupConnector", Version: "1"}: {Class: "a.DupConnector", Type: "source", Version: "1"},
		{Class: "b.DupConnector", Version: "1"}: {Class: "b.DupConnector", Type: "sink", Version: "1"},
	}
	f := newFixture(t)
	f.agents.host = hostOnly
	f.agents.agents = []registry.Agent{ // by id, as reconciler.Table lists them
		{ID: "agent-1", Registered: true, HostPlugins: map[registry.PluginKey]api.PluginInfo{{Class: javaSink, Version: "1.0"}: {}}},
		{ID: "agent-2", Registered: true, HostPlugins: map[registry.PluginKey]api.PluginInfo{{Class: javaSink, Version: "2.0"}: {}}},
		{ID: "agent-3", HostPlugins: map[registry.PluginKey]api.PluginInfo{{Class: javaSink, Version: "2.0"}: {}}},
	}
	p := f.s.Plugins()
	for _, tc := range []struct {
		class, version string
		ok, java       bool
		wantClass      string
		wantVersion    string
		typ            string
	}{
		{class: "FileStreamSource", ok: true, wantClass: goSource, wantVersion: connectVersion(), typ: api.TypeSource},
		// A pinned version only a host has is the host's plugin.
		{class: "FileStreamSource", version: "9.9", ok: true, java: true, wantClass: goSource, wantVersion: "9.9", typ: api.TypeSource},
		// A version nobody has stays the built-in: validation says so.
		{class: "FileStreamSource", version: "7.7", ok: true, wantClass: goSource, wantVersion: connectVersion(), typ: api.TypeSource},
		// A range is any version: the built-in.
		{class: "FileStreamSource", version: "[1.0,)", ok: true, wantClass: goSource, wantVersion: connectVersion(), typ: api.TypeSource},
		// Java only: by full, simple and short name; the newest live version.
		{class: javaSink, ok: true, java: true, wantClass: javaSink, wantVersion: "2.0", typ: api.TypeSink},
		{class: "RemoteSink", ok: true, java: true, wantClass: javaSink, wantVersion: "2.0", typ: api.TypeSink},
		{class: "RemoteSink", version: "1.0", ok: true, java: true, wantClass: javaSink, wantVersion: "1.0", typ: api.TypeSink},
		// An alias two classes share, and a class nobody has.
		{class: "Dup", typ: api.TypeUnknown},
		{class: "com.example.Nothing", typ: api.TypeUnknown},
	} {
		props := map[string]string{"connector.class": tc.class}
		if tc.version != "" {
			props["connector.plugin.version"] = tc.version
		}
		c, ok := p.Choice(props)
		if ok != tc.ok || ok && (c.Java() != tc.java || c.Class != tc.wantClass || c.Version != tc.wantVersion) {
			t.Errorf("%s@%s: %+v %v", tc.class, tc.version, c, ok)
		}
		if got := p.Type(props); got != tc.typ {
			t.Errorf("%s@%s: type %s, want %s", tc.class, tc.version, got, tc.typ)
		}
		if p.IsJava(props) != (tc.ok && tc.java) {
			t.Errorf("%s@%s: IsJava %v", tc.class, tc.version, !tc.java)
		}
	}
	// The agents whose hosts have it, registered ones only, by id.
	agents, why := p.HostAgents(javaSink, "")
	if len(agents) != 2 || agents[0] != "agent-1" || agents[1] != "agent-2" {
		t.Errorf("host agents %v", agents)
	}
	if agents, _ := p.HostAgents(javaSink, "2.0"); len(agents) != 1 || agents[0] != "agent-2" {
		t.Errorf("host agents of 2.0: %v", agents)
	}
	if why != "No live agent has the plugin "+registry.HostPluginPlacement(javaSink, "") {
		t.Errorf("why: %q", why)
	}
	// A Java connector with no live host: Locate says there is nowhere to run.
	f.agents.agents = nil
	if _, _, err := p.Locate(map[string]string{"connector.class": javaSink}); !api.IsCode(err, api.CodeUnavailable) {
		t.Errorf("locate with no agent: %v", err)
	}
	if _, _, err := p.Locate(map[string]string{"connector.class": "FileStreamSource"}); err == nil {
		t.Error("a built-in was located on agents")
	}
}

// connectVersion is the built-in plugins' version.
func connectVersion() string { return connect.Version }
