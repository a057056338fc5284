package validate

import (
	"slices"
	"testing"

	v1 "github.com/sluice-io/sluice/api/v1"
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
	own := []v1.ConfigInfo{
		{Definition: v1.ConfigKeyInfo{Name: "tables", Type: "LIST", Group: &group},
			Value: v1.ConfigValueInfo{Name: "tables", Value: &tables, Errors: []string{"no such table"}}},
		{Definition: v1.ConfigKeyInfo{Name: "errors.tolerance", Type: "BOOLEAN"},
			Value: v1.ConfigValueInfo{Name: "errors.tolerance", Errors: []string{"own"}}},
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
	defs := RemotePluginConfig(p, []v1.ConfigKeyInfo{own[0].Definition})
	if defs[0].Name != "tables" || !slices.ContainsFunc(defs, func(d v1.ConfigKeyInfo) bool { return d.Name == TasksMaxConfig }) {
		t.Fatalf("plugin config %v", defs)
	}
}
