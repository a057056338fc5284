package validate

import (
	"slices"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
)

// TestRemote: a connector validated elsewhere gets the framework's entries
// and errors from here and its own from there, an own entry of a framework
// key takes that key's place, and the error count is the sum.
func TestRemote(t *testing.T) {
	p := &connect.Plugin{Class: "com.example.RemoteSource", Kind: connect.KindSource, Version: "1.2.3"}
	props := map[string]string{"name": "r", "connector.class": p.Class, "tasks.max": "0", "tables": "bad"}
	group := "Remote"
	tables := "bad"
	own := []api.ConfigInfo{
		{Definition: api.ConfigKeyInfo{Name: "tables", Type: "LIST", Group: &group},
			Value: api.ConfigValueInfo{Name: "tables", Value: &tables, Errors: []string{"no such table"}}},
		{Definition: api.ConfigKeyInfo{Name: "errors.tolerance", Type: "BOOLEAN"},
			Value: api.ConfigValueInfo{Name: "errors.tolerance", Errors: []string{"own"}}},
	}
	got := Remote(plugins.Builtin(), p, props, own)
	if got.Name != p.Class || got.ErrorCount != 3 {
		t.Fatalf("name %q, error_count %d; want 3 (tasks.max, tables, the shadowed key)", got.Name, got.ErrorCount)
	}
	errs := map[string][]string{}
	var names []string
	for _, c := range got.Configs {
		names = append(names, c.Definition.Name)
		if len(c.Value.Errors) > 0 {
			errs[c.Value.Name] = c.Value.Errors
		}
	}
	if len(errs["tasks.max"]) != 1 || !slices.Equal(errs["tables"], []string{"no such table"}) || !slices.Equal(errs["errors.tolerance"], []string{"own"}) {
		t.Fatalf("errors %v", errs)
	}
	if n := len(slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s != "errors.tolerance" })); n != 1 {
		t.Fatalf("errors.tolerance listed %d times", n)
	}
	if names[len(names)-1] != "tables" || !slices.Contains(got.Groups, "Remote") {
		t.Fatalf("keys %v, groups %v: want the connector's own last and its group", names, got.Groups)
	}
	defs := RemotePluginConfig(p, []api.ConfigKeyInfo{own[0].Definition})
	if defs[0].Name != "tables" || !slices.ContainsFunc(defs, func(d api.ConfigKeyInfo) bool { return d.Name == TasksMaxConfig }) {
		t.Fatalf("plugin config %v", defs)
	}
}

// TestRemoteTakesPluginKeysFromTheHost: a Java transformation the Go
// registry does not have is valid when the host validated it, and a
// converter the host validated has its settings listed once, the host's.
func TestRemoteTakesPluginKeysFromTheHost(t *testing.T) {
	p := &connect.Plugin{Class: "com.example.RemoteSource", Kind: connect.KindSource, Version: "1.2.3"}
	json := "org.apache.kafka.connect.json.JsonConverter"
	unwrap := "io.debezium.transforms.ExtractNewRecordState"
	props := map[string]string{"name": "r", "connector.class": p.Class, "transforms": "unwrap",
		"transforms.unwrap.type": unwrap, "value.converter": json, "value.converter.schemas.enable": "false"}
	if local := Remote(plugins.Builtin(), p, props, nil); local.ErrorCount != 1 {
		t.Fatalf("without the host's entries: %d errors, want 1 (the transformation's class)", local.ErrorCount)
	}
	no := "false"
	own := []api.ConfigInfo{
		{Definition: api.ConfigKeyInfo{Name: "transforms.unwrap.type", Type: "CLASS"},
			Value: api.ConfigValueInfo{Name: "transforms.unwrap.type", Value: &unwrap}},
		{Definition: api.ConfigKeyInfo{Name: "value.converter", Type: "CLASS"},
			Value: api.ConfigValueInfo{Name: "value.converter", Value: &json}},
		{Definition: api.ConfigKeyInfo{Name: "value.converter.schemas.enable", Type: "BOOLEAN"},
			Value: api.ConfigValueInfo{Name: "value.converter.schemas.enable", Value: &no}},
	}
	got := Remote(plugins.Builtin(), p, props, own)
	count := map[string]int{}
	for _, c := range got.Configs {
		count[c.Value.Name]++
		if len(c.Value.Errors) > 0 {
			t.Errorf("%s: %v", c.Value.Name, c.Value.Errors)
		}
	}
	if got.ErrorCount != 0 || count["transforms.unwrap.type"] != 1 || count["value.converter"] != 1 || count["value.converter.schemas.enable"] != 1 {
		t.Fatalf("error_count %d, entries %v", got.ErrorCount, count)
	}
}
