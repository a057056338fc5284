package validate

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/connect/plugins"
)

// TestTransformKeys validates transforms.* and predicates.* keys with the
// messages Kafka Connect 4.4 gives for the same configs.
func TestTransformKeys(t *testing.T) {
	reg := plugins.Builtin()
	const tr = "org.apache.kafka.connect.transforms."
	src := fileSourceProps
	tests := []struct {
		name  string
		props map[string]string
		want  map[string][]string
	}{
		{"valid chain", src("transforms", "r,h", "transforms.r.type", tr+"RegexRouter", "transforms.r.regex", "(.*)",
			"transforms.r.replacement", "x-$1", "transforms.r.predicate", "p", "transforms.h.type", tr+"HoistField$Value",
			"transforms.h.field", "line", "predicates", "p", "predicates.p.type", tr+"predicates.TopicNameMatches",
			"predicates.p.pattern", "t.*"), map[string][]string{}},
		// Kafka resolves a type by its full class name only.
		{"alias", src("transforms", "r", "transforms.r.type", "RegexRouter"), map[string][]string{
			"transforms.r.type": {"Invalid value RegexRouter for configuration transforms.r.type: Class RegexRouter could not be found."}}},
		{"a connector as a transformation", src("transforms", "r", "transforms.r.type", "org.apache.kafka.connect.file.FileStreamSourceConnector"),
			map[string][]string{"transforms.r.type": {"Invalid value org.apache.kafka.connect.file.FileStreamSourceConnector for configuration transforms.r.type: " +
				"Class org.apache.kafka.connect.file.FileStreamSourceConnector could not be found."}}},
		{"missing keys", src("transforms", "r", "transforms.r.type", tr+"RegexRouter"), map[string][]string{
			"transforms.r.replacement": {`Missing required configuration "transforms.r.replacement" which has no default value.`},
			"transforms.r.regex": {`Missing required configuration "transforms.r.regex" which has no default value.`,
				`Invalid value null for configuration regex: Invalid regex: Cannot invoke "String.isEmpty()" because "this.pattern" is null`}}},
		{"plugin version", src("transforms", "r", "transforms.r.type", tr+"RegexRouter", "transforms.r.regex", "a",
			"transforms.r.replacement", "x", "transforms.r.plugin.version", "9.9"), map[string][]string{
			"transforms.r.plugin.version": {"Plugin org.apache.kafka.connect.transforms.RegexRouter not found that matches the version range [9.9,9.9], available versions: [0.1.0]"},
			"transforms.r.type":           {"Plugin org.apache.kafka.connect.transforms.RegexRouter not found that matches the version range [9.9,9.9], available versions: [0.1.0]"}}},
		// A range meets the one version Sluice has, or not; latest is none.
		{"plugin version range", src("transforms", "r", "transforms.r.type", tr+"RegexRouter", "transforms.r.regex", "a",
			"transforms.r.replacement", "x", "transforms.r.plugin.version", "[0.0.1,1.0)", "predicates", "p",
			"predicates.p.type", tr+"predicates.TopicNameMatches", "predicates.p.pattern", "t.*", "predicates.p.plugin.version", "latest"),
			map[string][]string{}},
		{"predicate version outside", src("predicates", "p", "predicates.p.type", tr+"predicates.TopicNameMatches",
			"predicates.p.pattern", "t.*", "predicates.p.plugin.version", "[1.0,)"), map[string][]string{
			"predicates.p.plugin.version": {"Plugin org.apache.kafka.connect.transforms.predicates.TopicNameMatches not found that matches the version range [1.0,), available versions: [0.1.0]"},
			"predicates.p.type":           {"Plugin org.apache.kafka.connect.transforms.predicates.TopicNameMatches not found that matches the version range [1.0,), available versions: [0.1.0]"}}},
		{"embedded keys validate under their own names", src("transforms", "r", "transforms.r.type", tr+"MaskField$Value",
			"transforms.r.fields", "", "transforms.r.negate", "maybe"), map[string][]string{
			"transforms.r.negate": {"Invalid value maybe for configuration transforms.r.negate: Expected value to be either true or false"},
			"transforms.r.fields": {"Configuration 'fields' must not be empty. Valid values include: any non-empty value"},
			"transforms.r.type":   {"Config 'transforms.r.negate' was provided but there is no config 'transforms.r.predicate' defining a predicate to be negated."}}},
		{"renames", src("transforms", "r", "transforms.r.type", tr+"ReplaceField$Value", "transforms.r.renames", "x",
			"transforms.r.exclude", "a,a"), map[string][]string{
			"transforms.r.renames": {"Invalid value [x] for configuration renames: Invalid rename mapping: x"},
			"transforms.r.exclude": {"Configuration 'exclude' values must not be duplicated."}}},
		{"predicate keys", src("transforms", "f", "transforms.f.type", tr+"Filter", "transforms.f.predicate", "h",
			"predicates", "h", "predicates.h.type", tr+"predicates.HasHeaderKey", "predicates.h.name", ""), map[string][]string{
			"predicates.h.name": {"Invalid value  for configuration name: String must be non-empty"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			infos, _, err := Connector(reg, tt.props)
			if err != nil {
				t.Fatal(err)
			}
			wantErrors(t, infos, tt.want)
		})
	}
}

// TestTransformKeyOrder lists an alias's keys in Kafka's order: type,
// plugin.version, then the embedded keys, those without a default first,
// then by importance and name.
func TestTransformKeyOrder(t *testing.T) {
	infos, _, err := Connector(plugins.Builtin(), map[string]string{"connector.class": "FileStreamSource", "name": "n", "file": "f",
		"topic": "t", "transforms": "r", "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range infos.Configs {
		if n := c.Definition.Name; strings.HasPrefix(n, "transforms.r.") {
			names = append(names, strings.TrimPrefix(n, "transforms.r.")+"@"+c.Definition.DisplayName)
		}
	}
	want := []string{"type@Transformation type for r", "plugin.version@Transformation version for r", "regex@regex",
		"replacement@replacement", "negate@negate", "predicate@predicate"}
	if !slices.Equal(names, want) {
		t.Errorf("keys %v, want %v", names, want)
	}
}
