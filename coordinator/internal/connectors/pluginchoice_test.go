package connectors

import (
	"encoding/json"
	"testing"
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
