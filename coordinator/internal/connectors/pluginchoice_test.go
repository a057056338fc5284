package connectors

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/file"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
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
		{Class: javaSink, Version: "10.0"}:      {Class: javaSink, Type: "sink", Version: "10.0"},
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
		unmet          string
	}{
		{class: "FileStreamSource", ok: true, wantClass: goSource, wantVersion: connectVersion(), typ: api.TypeSource},
		// A pinned version only a host has is the host's plugin.
		{class: "FileStreamSource", version: "9.9", ok: true, java: true, wantClass: goSource, wantVersion: "9.9", typ: api.TypeSource},
		// A version nobody has stays the built-in: validation says so.
		{class: "FileStreamSource", version: "7.7", ok: true, wantClass: goSource, wantVersion: connectVersion(), typ: api.TypeSource,
			unmet: "Plugin " + goSource + " not found that matches the version range [7.7,7.7], available versions: [" + connectVersion() + ", 9.9]"},
		// A range: the highest version in it, the built-in's or a host's.
		{class: "FileStreamSource", version: "[1.0,)", ok: true, java: true, wantClass: goSource, wantVersion: "9.9", typ: api.TypeSource},
		{class: "FileStreamSource", version: "[0.0.1,9.0)", ok: true, wantClass: goSource, wantVersion: connectVersion(), typ: api.TypeSource},
		{class: "FileStreamSource", version: "[0.0.1,)", ok: true, java: true, wantClass: goSource, wantVersion: "9.9", typ: api.TypeSource},
		// latest is no requirement: the built-in.
		{class: "FileStreamSource", version: "latest", ok: true, wantClass: goSource, wantVersion: connectVersion(), typ: api.TypeSource},
		// Java only: by full, simple and short name; the newest live version
		// by Maven's order.
		{class: javaSink, ok: true, java: true, wantClass: javaSink, wantVersion: "10.0", typ: api.TypeSink},
		{class: "RemoteSink", ok: true, java: true, wantClass: javaSink, wantVersion: "10.0", typ: api.TypeSink},
		{class: "RemoteSink", version: "latest", ok: true, java: true, wantClass: javaSink, wantVersion: "10.0", typ: api.TypeSink},
		{class: "RemoteSink", version: "1.0", ok: true, java: true, wantClass: javaSink, wantVersion: "1.0", typ: api.TypeSink},
		{class: "RemoteSink", version: "1.0.0", ok: true, java: true, wantClass: javaSink, wantVersion: "1.0", typ: api.TypeSink},
		{class: "RemoteSink", version: "[1.0,3)", ok: true, java: true, wantClass: javaSink, wantVersion: "2.0", typ: api.TypeSink},
		{class: "RemoteSink", version: "(,2.0)", ok: true, java: true, wantClass: javaSink, wantVersion: "1.0", typ: api.TypeSink},
		{class: "RemoteSink", version: "[3.0,4.0)", ok: true, java: true, wantClass: javaSink, typ: api.TypeSink,
			unmet: "Plugin " + javaSink + " not found that matches the version range [3.0,4.0), available versions: [1.0, 2.0, 10.0]"},
		// An alias two classes share, and a class nobody has.
		{class: "Dup", typ: api.TypeUnknown},
		{class: "com.example.Nothing", typ: api.TypeUnknown},
	} {
		props := map[string]string{"connector.class": tc.class}
		if tc.version != "" {
			props["connector.plugin.version"] = tc.version
		}
		c, ok := p.Choice(props)
		if ok != tc.ok || ok && (c.Java() != tc.java || c.Class != tc.wantClass || c.Version != tc.wantVersion || c.Unmet != tc.unmet) {
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

// TestChoiceKeepsRecordedVersion: a stored config runs the version its
// write recorded, whatever versions agents have now, until a config with
// another class or version spec is written; Pin records what Resolve
// chooses.
func TestChoiceKeepsRecordedVersion(t *testing.T) {
	const javaSink = "com.example.RemoteSinkConnector"
	f := newFixture(t)
	f.agents.host = map[registry.PluginKey]api.PluginInfo{
		{Class: javaSink, Version: "1.0"}: {Class: javaSink, Type: "sink", Version: "1.0"},
		{Class: javaSink, Version: "2.0"}: {Class: javaSink, Type: "sink", Version: "2.0"},
	}
	f.agents.agents = []registry.Agent{
		{ID: "agent-1", Registered: true, HostPlugins: map[registry.PluginKey]api.PluginInfo{{Class: javaSink, Version: "1.0"}: {}}},
		{ID: "agent-2", Registered: true, HostPlugins: map[registry.PluginKey]api.PluginInfo{{Class: javaSink, Version: "2.0"}: {}}},
	}
	p := f.s.Plugins()
	config := map[string]string{"name": "c", "connector.class": javaSink, "connector.plugin.version": "[1.0,3)"}
	if pin := p.Pin(config); pin == nil || *pin != (records.PluginPin{Class: javaSink, Spec: "[1.0,3)", Version: "2.0", Java: true}) {
		t.Fatalf("pin %+v", pin)
	}
	put := func(config map[string]string, pin *records.PluginPin) {
		t.Helper()
		if err := f.mem.Apply(context.Background(), store.PutConnectorConfig{Name: "c", Config: config, Plugin: pin}); err != nil {
			t.Fatal(err)
		}
	}
	put(config, &records.PluginPin{Class: javaSink, Spec: "[1.0,3)", Version: "1.0", Java: true})
	c, ok := p.Choice(config)
	if !ok || c.Version != "1.0" || c.Placement() != registry.HostPluginPlacement(javaSink, "1.0") {
		t.Fatalf("recorded 1.0, choice %+v", c)
	}
	if r, _ := p.Resolve(config); r.Version != "2.0" {
		t.Errorf("resolving now: %+v", r)
	}
	if agents, _ := p.HostAgents(c.Class, c.Pinned); len(agents) != 1 || agents[0] != "agent-1" {
		t.Errorf("agents of the recorded version: %v", agents)
	}
	// Another spec than the recorded one's: resolved now.
	if c, _ := p.Choice(map[string]string{"name": "c", "connector.class": javaSink, "connector.plugin.version": "[2.0,3)"}); c.Version != "2.0" {
		t.Errorf("another spec: %+v", c)
	}
	// A config naming the class by its alias keeps its version too.
	alias := map[string]string{"name": "c", "connector.class": "RemoteSink", "connector.plugin.version": "[1.0,3)"}
	put(alias, &records.PluginPin{Class: "RemoteSink", Spec: "[1.0,3)", Version: "1.0", Java: true})
	if c, _ := p.Choice(alias); c.Class != javaSink || c.Version != "1.0" {
		t.Errorf("recorded 1.0 for the alias: %+v", c)
	}
	// The recorded version gone from every agent: nowhere to run, saying so.
	put(config, &records.PluginPin{Class: javaSink, Spec: "[1.0,3)", Version: "1.5", Java: true})
	_, _, err := p.Locate(config)
	if !api.IsCode(err, api.CodeUnavailable) || !strings.Contains(err.Error(), "No live agent has the plugin "+javaSink+" version 1.5 (Java)") {
		t.Errorf("locate of a version no agent has: %v", err)
	}
	if v := p.Version(config); v != "1.5" {
		t.Errorf("status version %q", v)
	}

	// A write of another key keeps the recorded version; a write of
	// another spec resolves it anew.
	put(config, &records.PluginPin{Class: javaSink, Spec: "[1.0,3)", Version: "1.0", Java: true})
	wider := map[string]string{"name": "c", "connector.class": javaSink, "connector.plugin.version": "[1.0,3)", "tasks.max": "4"}
	if pin := p.PinFor("c", wider); pin == nil || pin.Version != "1.0" {
		t.Errorf("a write of tasks.max: pin %+v, want 1.0 kept", pin)
	}
	if pin := p.PinFor("c", map[string]string{"name": "c", "connector.class": javaSink, "connector.plugin.version": "latest"}); pin == nil || pin.Version != "2.0" {
		t.Errorf("a write of another spec: pin %+v, want 2.0 resolved", pin)
	}

	// A config no write recorded a version for (an older Sluice's, Kafka
	// Connect's) runs on any agent with the class, as before versions were
	// recorded; one naming an exact version runs that version only.
	put(map[string]string{"name": "c", "connector.class": javaSink}, nil)
	if c, _ := p.Choice(map[string]string{"name": "c", "connector.class": javaSink}); c.Pinned != "" || c.Placement() != registry.HostPluginPlacement(javaSink, "") {
		t.Errorf("an unrecorded config: %+v, want any version", c)
	}
	exact := map[string]string{"name": "c", "connector.class": javaSink, "connector.plugin.version": "1.0"}
	put(exact, nil)
	if c, _ := p.Choice(exact); c.Pinned != "1.0" {
		t.Errorf("an unrecorded config naming 1.0: %+v", c)
	}
}
