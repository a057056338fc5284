package validate

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Errorf("%s differs from golden file; got:\n%s", name, got)
	}
}

func TestGolden(t *testing.T) {
	reg := plugins.Builtin()
	for name, props := range map[string]map[string]string{
		"file_source.json": {"connector.class": "FileStreamSource", "name": "src", "file": "in.txt", "topic": "t",
			"value.converter": "JsonConverter", "value.converter.schemas.enable": "false"},
		"file_sink_errors.json": {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "name": "",
			"tasks.max": "0", "transforms": "a"},
	} {
		t.Run(name, func(t *testing.T) {
			infos, _, err := Connector(reg, props)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name, infos)
		})
	}
}

// errorsOf returns every error message by key name.
func errorsOf(infos api.ConfigInfos) map[string][]string {
	out := map[string][]string{}
	for _, c := range infos.Configs {
		if len(c.Value.Errors) > 0 {
			out[c.Value.Name] = c.Value.Errors
		}
	}
	return out
}

func TestErrors(t *testing.T) {
	reg := plugins.Builtin()
	src := fileSourceProps
	sink := func(kv ...string) map[string]string {
		return withKV(map[string]string{"connector.class": "FileStreamSink", "name": "n"}, kv...)
	}
	tests := []struct {
		name  string
		props map[string]string
		want  map[string][]string
	}{
		{"valid source", src(), map[string][]string{}},
		{"valid sink", sink("topics", "a"), map[string][]string{}},
		{"missing file", map[string]string{"connector.class": "FileStreamSource", "name": "n", "topic": "t"},
			map[string][]string{"file": {`Missing required configuration "file" which has no default value.`}}},
		{"empty topic", src("topic", ""), map[string][]string{"topic": {"Invalid value  for configuration topic: String must be non-empty"}}},
		{"tasks.max 0", src("tasks.max", "0"), map[string][]string{"tasks.max": {"Invalid value 0 for configuration tasks.max: Value must be at least 1"}}},
		{"empty name", src("name", ""), map[string][]string{"name": {"Invalid value  for configuration name: String may not be empty"}}},
		{"offsets topic", src("offsets.storage.topic", "my-offsets"), map[string][]string{}},
		{"empty offsets topic", src("offsets.storage.topic", ""), map[string][]string{"offsets.storage.topic": {"Invalid value  for configuration offsets.storage.topic: String must be non-empty"}}},
		{"exactly once", src("exactly.once.support", "sometimes"), map[string][]string{"exactly.once.support": {"Invalid value sometimes for configuration exactly.once.support: String must be one of (case insensitive): REQUIRED, REQUESTED"}}},
		{"exactly once any case", src("exactly.once.support", "Required"), map[string][]string{"exactly.once.support": {msgWorkerNoExactlyOnce}}},
		{"transaction boundary", src("transaction.boundary", "x"), map[string][]string{"transaction.boundary": {"Invalid value x for configuration transaction.boundary: String must be one of (case insensitive): INTERVAL, POLL, CONNECTOR"}}},
		{"tolerance", src("errors.tolerance", "some"), map[string][]string{"errors.tolerance": {"Invalid value some for configuration errors.tolerance: String must be one of: none, all"}}},
		{"duplicate transform", src("transforms", "a,a", "transforms.a.type", "X"), map[string][]string{
			"transforms":        {"Invalid value [a, a] for configuration transforms: Duplicate alias provided."},
			"transforms.a.type": {"Invalid value X for configuration transforms.a.type: Class X could not be found."}}},
		{"transform without type", src("transforms", "a"), map[string][]string{"transforms.a.type": {`Missing required configuration "transforms.a.type" which has no default value.`}}},
		{"negate without predicate", src("transforms", "a", "transforms.a.negate", "true"), map[string][]string{"transforms.a.type": {
			`Missing required configuration "transforms.a.type" which has no default value.`,
			"Config 'transforms.a.negate' was provided but there is no config 'transforms.a.predicate' defining a predicate to be negated."}}},
		{"unknown converter", src("key.converter", "Nope"), map[string][]string{"key.converter": {"Invalid value Nope for configuration key.converter: Class Nope could not be found."}}},
		{"connector as converter", src("value.converter", "FileStreamSink"), map[string][]string{"value.converter": {"Class class org.apache.kafka.connect.file.FileStreamSinkConnector does not implement the Converter interface"}}},
		{"header converter", src("header.converter", "StringConverter"), map[string][]string{}},
		{"converter prop", src("value.converter", "JsonConverter", "value.converter.schemas.enable", "perhaps"), map[string][]string{
			"value.converter.schemas.enable": {"Invalid value perhaps for configuration schemas.enable: Expected value to be either true or false"}}},
		{"selector", src("sluice.agent.selector", "zone=a, host=web-1"), map[string][]string{}},
		// Kafka defines batch.size without a validator: a value that does
		// not parse reports its parse error only, not also Sluice's bound.
		{"unparsable batch.size", src("batch.size", "lots"), map[string][]string{"batch.size": {"Invalid value lots for configuration batch.size: Not a number of type INT"}}},
		{"batch.size over the bound", src("batch.size", "100001"), map[string][]string{"batch.size": {"Invalid value 100001 for configuration batch.size: Value must be no more than 100000"}}},
		{"bad selector", src("sluice.agent.selector", "zone"), map[string][]string{"sluice.agent.selector": {"Invalid value zone for configuration sluice.agent.selector: " + errSelectorShape.Error()}}},
		// Kafka Connect 4.1+ (KIP-891): a bare version is exactly that
		// version, the error on both keys; a range is Maven's; latest is
		// no requirement; a spec Maven cannot read is its error.
		{"plugin version", src("connector.plugin.version", "9.9"), map[string][]string{
			"connector.class":          {"Plugin org.apache.kafka.connect.file.FileStreamSourceConnector not found that matches the version range [9.9,9.9], available versions: [" + connect.Version + "]"},
			"connector.plugin.version": {"Plugin org.apache.kafka.connect.file.FileStreamSourceConnector not found that matches the version range [9.9,9.9], available versions: [" + connect.Version + "]"}}},
		{"plugin version range", src("connector.plugin.version", "[0.0.1,1.0)"), map[string][]string{}},
		{"plugin version range excluding", src("connector.plugin.version", "(,0.0.1],[1.0,)"), map[string][]string{
			"connector.class":          {"Plugin org.apache.kafka.connect.file.FileStreamSourceConnector not found that matches the version range (,0.0.1],[1.0,), available versions: [" + connect.Version + "]"},
			"connector.plugin.version": {"Plugin org.apache.kafka.connect.file.FileStreamSourceConnector not found that matches the version range (,0.0.1],[1.0,), available versions: [" + connect.Version + "]"}}},
		{"plugin version latest", src("connector.plugin.version", "latest"), map[string][]string{}},
		{"plugin version exact", src("connector.plugin.version", connect.Version), map[string][]string{}},
		{"plugin version unreadable", src("connector.plugin.version", "[1.0"), map[string][]string{"connector.plugin.version": {"Unbounded range: [1.0"}}},
		{"converter version", src("value.converter", "JsonConverter", "value.converter.plugin.version", "[2.0,)"), map[string][]string{
			"value.converter.plugin.version": {"Plugin org.apache.kafka.connect.json.JsonConverter not found that matches the version range [2.0,), available versions: [" + connect.Version + "]"}}},
		{"converter version met", src("value.converter", "JsonConverter", "value.converter.plugin.version", "(,1.0)"), map[string][]string{}},
		{"sink without topics", sink(), map[string][]string{
			"topics":       {"Must configure one of topics or topics.regex"},
			"topics.regex": {"Must configure one of topics or topics.regex"}}},
		{"sink with both", sink("topics", "a", "topics.regex", "b.*"), map[string][]string{
			"topics":       {"topics and topics.regex are mutually exclusive options, but both are set."},
			"topics.regex": {"topics and topics.regex are mutually exclusive options, but both are set."}}},
		{"sink dlq in topics", sink("topics", "a,dlq", "errors.deadletterqueue.topic.name", "dlq"), map[string][]string{
			"topics": {"The DLQ topic 'dlq' may not be included in the list of topics ('topics=[a, dlq]') consumed by the connector"}}},
		{"sink dlq matched", sink("topics.regex", "d.*", "errors.deadletterqueue.topic.name", "dlq"), map[string][]string{
			"topics.regex": {"The DLQ topic 'dlq' may not be matched by the regex for the topics ('topics.regex=d.*') consumed by the connector"}}},
		{"sink dlq partial match is fine", sink("topics.regex", "d", "errors.deadletterqueue.topic.name", "dlq"), map[string][]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			infos, _, err := Connector(reg, tt.props)
			if err != nil {
				t.Fatal(err)
			}
			got := errorsOf(infos)
			if len(got) != len(tt.want) {
				t.Fatalf("errors = %q, want %q", got, tt.want)
			}
			n := 0
			for k, w := range tt.want {
				if !slices.Equal(got[k], w) {
					t.Errorf("%s: errors = %q, want %q", k, got[k], w)
				}
				n += len(w)
			}
			if infos.ErrorCount != n && !strings.HasPrefix(tt.name, "converter prop") {
				t.Errorf("error_count = %d, want %d", infos.ErrorCount, n)
			}
		})
	}
}

func TestConnectorErrors(t *testing.T) {
	reg := plugins.Builtin()
	_, _, err := Connector(reg, map[string]string{"name": "c", "file": "x"})
	if e, ok := err.(*api.Error); !ok || e.Code != api.CodeBadRequest || e.Message != "Connector config contains no connector type" {
		t.Errorf("no class: %#v", err)
	}
	_, _, err = Connector(reg, map[string]string{"connector.class": "Nope"})
	if e, ok := err.(*api.Error); !ok || e.Code != api.CodeBadRequest ||
		!strings.HasPrefix(e.Message, "Failed to find any class that implements Connector and which name matches Nope, available connectors are: PluginDesc{") {
		t.Errorf("unknown class: %#v", err)
	}
	_, p, err := Connector(reg, map[string]string{"connector.class": "GeneratorSource", "name": "g", "topic": "t"})
	if err != nil || p.Class != "io.sluice.connect.generator.GeneratorSourceConnector" {
		t.Errorf("generator: %v, %v", p, err)
	}
}

func TestWorkerConverters(t *testing.T) {
	reg := plugins.Builtin()
	infos, _, _ := Connector(reg, map[string]string{"connector.class": "FileStreamSource", "name": "n", "file": "f", "topic": "t"},
		WithWorkerConverters("StringConverter", "", ""))
	for _, c := range infos.Configs {
		switch c.Definition.Name {
		case "key.converter":
			if c.Definition.DefaultValue == nil || *c.Definition.DefaultValue != "org.apache.kafka.connect.storage.StringConverter" ||
				c.Value.Value == nil || *c.Value.Value != *c.Definition.DefaultValue {
				t.Errorf("key.converter = %+v", c)
			}
		case "key.converter.plugin.version":
			if c.Value.Value == nil || *c.Value.Value != "0.1.0" || !c.Value.Visible {
				t.Errorf("key.converter.plugin.version = %+v", c.Value)
			}
		case "value.converter":
			if c.Definition.DefaultValue != nil {
				t.Errorf("value.converter default = %v", *c.Definition.DefaultValue)
			}
		}
	}
}

func TestErrorMessage(t *testing.T) {
	reg := plugins.Builtin()
	infos, _, _ := Connector(reg, map[string]string{"connector.class": "FileStreamSource", "name": "", "topic": "t"})
	want := "Connector configuration is invalid and contains the following 2 error(s):\n" +
		"Invalid value  for configuration name: String may not be empty\n" +
		`Missing required configuration "file" which has no default value.` + "\n" +
		"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"
	if got := ErrorMessage(infos); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := ErrorMessage(api.ConfigInfos{}); got != "" {
		t.Errorf("no errors: %q", got)
	}
}

func TestPluginConfig(t *testing.T) {
	reg := plugins.Builtin()
	p, _ := reg.Lookup("FileStreamSource")
	keys := PluginConfig(p)
	var names []string
	for _, k := range keys {
		names = append(names, k.Name)
	}
	if !slices.Equal(names[:4], []string{"file", "topic", "batch.size", "name"}) || !slices.Contains(names, "offsets.storage.topic") ||
		slices.Contains(names, "topics") {
		t.Errorf("names = %v", names)
	}
	for _, k := range keys {
		if k.Name == "connector.plugin.version" && (k.DefaultValue == nil || *k.DefaultValue != "0.1.0") {
			t.Errorf("version key = %+v", k)
		}
		if k.Name == "batch.size" && (k.Group != nil || k.Order != -1 || k.Width != "NONE" || k.DisplayName != "batch.size" || *k.DefaultValue != "2000") {
			t.Errorf("batch.size = %+v", k)
		}
	}
	sink, _ := reg.Lookup("FileStreamSink")
	if names := PluginConfig(sink); !slices.ContainsFunc(names, func(k api.ConfigKeyInfo) bool { return k.Name == "topics.regex" }) {
		t.Errorf("sink keys lack topics.regex")
	}
	conv, _ := reg.Lookup("JsonConverter")
	if keys := PluginConfig(conv); len(keys) != 5 || keys[0].Name != "converter.type" || !keys[0].Required {
		t.Errorf("converter keys = %+v", keys)
	}
}

func TestCheckPluginType(t *testing.T) {
	for _, tt := range []struct {
		cls, path string
		ok        bool
	}{
		{"org.apache.kafka.connect.file.FileStreamSourceConnector", "FileStreamSourceConnector", true},
		{"org.apache.kafka.connect.file.FileStreamSourceConnector", "FileStreamSource", true},
		{"FileStreamSource", "org.apache.kafka.connect.file.FileStreamSourceConnector", false},
		{"FileStreamSink", "FileStreamSource", false},
	} {
		err := CheckPluginType(map[string]string{"connector.class": tt.cls}, tt.path)
		if (err == nil) != tt.ok {
			t.Errorf("%s vs %s: %v", tt.cls, tt.path, err)
		}
		if err != nil && err.Error() != "Included connector type "+tt.cls+" does not match request type "+tt.path {
			t.Errorf("message = %s", err)
		}
	}
	if err := CheckPluginType(map[string]string{}, "X"); err != nil {
		t.Errorf("no class: %v", err)
	}
}

func TestParseSelector(t *testing.T) {
	m, err := ParseSelector(" zone = a ,host=web-1,empty=")
	if err != nil || len(m) != 3 || m["zone"] != "a" || m["host"] != "web-1" || m["empty"] != "" {
		t.Errorf("selector = %v, %v", m, err)
	}
	if m, err := ParseSelector(""); err != nil || len(m) != 0 {
		t.Errorf("empty = %v, %v", m, err)
	}
	for _, bad := range []string{"a", "=b", "a=b,,c=d", "a=1,a=2"} {
		if _, err := ParseSelector(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
