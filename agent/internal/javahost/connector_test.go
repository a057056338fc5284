package javahost

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

func newFakeConnectors(t *testing.T) (*Supervisor, *Connectors, chan wire.PluginConnectorEvent) {
	s := newFakeSupervisor(t, "host")
	events := make(chan wire.PluginConnectorEvent, 8)
	return s, NewConnectors(s, "agent-1", nil, func(ev wire.PluginConnectorEvent) { events <- ev }), events
}

func nextEvent(t *testing.T, events chan wire.PluginConnectorEvent) wire.PluginConnectorEvent {
	t.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no connector event")
		return wire.PluginConnectorEvent{}
	}
}

func TestConnectorOperations(t *testing.T) {
	s, cs, events := newFakeConnectors(t)
	ctx := context.Background()
	r, err := cs.HandleConnector(ctx, wire.PluginConnectorRequest{Op: wire.PluginOpValidate, Config: map[string]string{"connector.class": "io.example.JdbcSourceConnector"}})
	if err != nil {
		t.Fatal(r, err)
	}
	var infos []map[string]any
	if err := json.Unmarshal(r.ConfigInfos, &infos); err != nil || len(infos) != 1 || infos[0]["value"].(map[string]any)["value"] != "x" {
		t.Errorf("validate: %s (%v)", r.ConfigInfos, err)
	}
	if r, err = cs.HandleConnector(ctx, wire.PluginConnectorRequest{Op: wire.PluginOpConfigDef, Class: "io.example.JdbcSourceConnector"}); err != nil || !strings.Contains(string(r.ConfigInfos), `"file"`) {
		t.Errorf("config_def: %s, %v", r.ConfigInfos, err)
	}
	if _, err = cs.HandleConnector(ctx, wire.PluginConnectorRequest{Op: wire.PluginOpStart, Name: "jdbc", Config: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, events); ev != (wire.PluginConnectorEvent{AgentID: "agent-1", Name: "jdbc", Kind: wire.PluginEventReconfigure}) {
		t.Errorf("event %+v", ev)
	}
	r, err = cs.HandleConnector(ctx, wire.PluginConnectorRequest{Op: wire.PluginOpTaskConfigs, Name: "jdbc", MaxTasks: 2})
	if err != nil || !reflect.DeepEqual(r.TaskConfigs, []map[string]string{{"task": "0"}, {"task": "1"}}) {
		t.Errorf("task_configs: %+v, %v", r.TaskConfigs, err)
	}
	c, _ := s.Conn(ctx)
	if err := c.CallJSON(ctx, "test.raise", map[string]string{"name": "jdbc"}, nil); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, events); ev.Kind != wire.PluginEventError || ev.Message != "lost the database" || ev.Trace != "T" || ev.Name != "jdbc" {
		t.Errorf("error event %+v", ev)
	}
	r, err = cs.HandleConnector(ctx, wire.PluginConnectorRequest{Op: wire.PluginOpAlterOffsets, Class: "x", Offsets: []api.ConnectorOffset{{Partition: map[string]any{"a": 1.0}}}})
	if err != nil || !r.Definite {
		t.Errorf("alter_offsets: %+v, %v", r, err)
	}
	_, err = cs.HandleConnector(ctx, wire.PluginConnectorRequest{Op: wire.PluginOpAlterOffsets, Class: "x"})
	if e := api.AsError(err); e == nil || e.Code != api.CodeBadRequest || e.Message != "no offsets to alter" {
		t.Errorf("rejected alter_offsets: %#v", err)
	}
	if _, err = cs.HandleConnector(ctx, wire.PluginConnectorRequest{Op: wire.PluginOpStop, Name: "jdbc"}); err != nil {
		t.Fatal(err)
	}
	if st := hostState(t, s); len(st.Connectors) != 0 || len(cs.Started()) != 0 {
		t.Errorf("after stop: host %v, agent %v", st.Connectors, cs.Started())
	}
	// Stopping one never started does not even need the host.
	if _, err = cs.HandleConnector(ctx, wire.PluginConnectorRequest{Op: wire.PluginOpStop, Name: "never"}); err != nil {
		t.Errorf("stop of a connector not started: %v", err)
	}
	if _, err = cs.HandleConnector(ctx, wire.PluginConnectorRequest{Op: "dance"}); !api.IsCode(err, api.CodeBadRequest) {
		t.Errorf("unknown op: %v", err)
	}
}

func TestConnectorStartFailureCarriesTrace(t *testing.T) {
	_, cs, _ := newFakeConnectors(t)
	r, err := cs.HandleConnector(context.Background(), wire.PluginConnectorRequest{Op: wire.PluginOpStart, Name: "bad", Config: map[string]string{"fake": fakeFail}})
	if e := api.AsError(err); e == nil || e.Message != "cannot start" || e.Code != api.CodeInternal {
		t.Errorf("failed start: %#v", err)
	}
	if !strings.HasPrefix(r.Trace, "java.lang.IllegalStateException: cannot start") {
		t.Errorf("trace %q", r.Trace)
	}
	if len(cs.Started()) != 0 {
		t.Errorf("a failed start is listed as started: %v", cs.Started())
	}
}

// TestConnectorsLostWithTheirHost: every connector started in a host that
// died is reported lost, once.
func TestConnectorsLostWithTheirHost(t *testing.T) {
	s, cs, events := newFakeConnectors(t)
	ctx := context.Background()
	for _, name := range []string{"a", "b"} {
		if _, err := cs.HandleConnector(ctx, wire.PluginConnectorRequest{Op: wire.PluginOpStart, Name: name}); err != nil {
			t.Fatal(err)
		}
		nextEvent(t, events) // its reconfigure
	}
	c, _ := s.Conn(ctx)
	_, _ = c.Call(ctx, "task.start", mustJSON(map[string]any{"id": "x-0", "connector_config": map[string]string{"fake": fakeCrash}}))
	lost := map[string]bool{}
	for range 2 {
		ev := nextEvent(t, events)
		if ev.Kind != wire.PluginEventHostLost || !strings.Contains(ev.Message, "exit status 137") {
			t.Errorf("event %+v", ev)
		}
		lost[ev.Name] = true
	}
	if !lost["a"] || !lost["b"] || len(cs.Started()) != 0 {
		t.Errorf("lost %v, still started %v", lost, cs.Started())
	}
	if _, err := cs.HandleConnector(ctx, wire.PluginConnectorRequest{Op: wire.PluginOpStop, Name: "a"}); err != nil {
		t.Errorf("stop of a connector lost with its host: %v", err)
	}
}

func TestWithVersion(t *testing.T) {
	if got := withVersion(map[string]string{"a": "1"}, "4.4.0"); got[versionKey] != "4.4.0" || got["a"] != "1" {
		t.Errorf("version added: %v", got)
	}
	// The leader names the version the config's spec resolved to: it
	// replaces the spec (a range, latest) for the host.
	if got := withVersion(map[string]string{versionKey: "[4.0,5.0)"}, "4.4.0"); got[versionKey] != "4.4.0" {
		t.Errorf("the resolved version not given: %v", got)
	}
	if got := withVersion(map[string]string{versionKey: "[4.0,5.0)"}, ""); got[versionKey] != "[4.0,5.0)" {
		t.Errorf("the config's spec replaced with no version named: %v", got)
	}
	in := map[string]string{"a": "1"}
	if withVersion(in, "4.4.0"); len(in) != 1 {
		t.Errorf("the request's config was changed: %v", in)
	}
}
