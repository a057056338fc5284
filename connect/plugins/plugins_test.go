package plugins

import (
	"strings"
	"testing"

	"github.com/sluice-io/sluice/connect"
)

func TestLookup(t *testing.T) {
	reg := Builtin()
	tests := map[string]string{
		"org.apache.kafka.connect.file.FileStreamSourceConnector": "org.apache.kafka.connect.file.FileStreamSourceConnector",
		"FileStreamSource":          "org.apache.kafka.connect.file.FileStreamSourceConnector",
		"FileStreamSourceConnector": "org.apache.kafka.connect.file.FileStreamSourceConnector",
		"FileStreamSink":            "org.apache.kafka.connect.file.FileStreamSinkConnector",
		"GeneratorSource":           "io.sluice.connect.generator.GeneratorSourceConnector",
		"GeneratorSourceConnector":  "io.sluice.connect.generator.GeneratorSourceConnector",
		"JsonConverter":             "org.apache.kafka.connect.json.JsonConverter",
		"Json":                      "org.apache.kafka.connect.json.JsonConverter",
		"StringConverter":           "org.apache.kafka.connect.storage.StringConverter",
		"String":                    "org.apache.kafka.connect.storage.StringConverter",
		"ByteArray":                 "org.apache.kafka.connect.converters.ByteArrayConverter",
		"org.apache.kafka.connect.json.JsonConverter": "org.apache.kafka.connect.json.JsonConverter",
	}
	for name, want := range tests {
		p, ok := reg.Lookup(name)
		if !ok || p.Class != want {
			t.Errorf("Lookup(%q) = %v, %v; want %s", name, p, ok, want)
		}
	}
	for _, name := range []string{"", "FileStream", "filestreamsource", "org.apache.kafka.connect.file.Nope"} {
		if p, ok := reg.Lookup(name); ok {
			t.Errorf("Lookup(%q) = %s", name, p.Class)
		}
	}
	if _, ok := reg.LookupConnector("JsonConverter"); ok {
		t.Errorf("a converter resolved as a connector")
	}
	if p, ok := reg.LookupConnector("FileStreamSink"); !ok || p.Kind != connect.KindSink {
		t.Errorf("LookupConnector(FileStreamSink) = %v", p)
	}
}

func TestListings(t *testing.T) {
	reg := Builtin()
	var names []string
	for _, p := range reg.Connectors() {
		names = append(names, p.Class)
		if p.Version != connect.Version {
			t.Errorf("%s version %s", p.Class, p.Version)
		}
	}
	want := "io.sluice.connect.generator.GeneratorSourceConnector,io.sluice.connect.postgres.PostgresSourceConnector,org.apache.kafka.connect.file.FileStreamSinkConnector,org.apache.kafka.connect.file.FileStreamSourceConnector"
	if strings.Join(names, ",") != want {
		t.Errorf("connectors = %v", names)
	}
	// 26 transformations (11 of them with $Key and $Value variants), 3
	// predicates and SimpleHeaderConverter
	// beside the connectors and converters.
	if n := len(reg.All()); n != 37 {
		t.Errorf("all = %d plugins", n)
	}
	if p, ok := reg.Lookup("org.apache.kafka.connect.transforms.HoistField$Value"); !ok || p.Kind != connect.KindTransformation {
		t.Errorf("HoistField$Value = %v", p)
	}
	// Kafka's alias of a nested class is its simple name, "Value": shared
	// by every $Value variant, so no alias at all.
	if p, ok := reg.Lookup("Value"); ok {
		t.Errorf("the alias Value resolves to %s", p.Class)
	}
	if p, ok := reg.Lookup("RegexRouter"); !ok || p.Kind != connect.KindTransformation {
		t.Errorf("RegexRouter = %v", p)
	}
	if n := len(reg.Converters()); n != 3 {
		t.Errorf("converters = %d", n)
	}
	if n := len(reg.HeaderConverters()); n != 4 {
		t.Errorf("header converters = %d", n)
	}
	msg := reg.UnknownConnectorMessage("Nope")
	wantPrefix := "Failed to find any class that implements Connector and which name matches Nope, available connectors are: " +
		"PluginDesc{klass=class io.sluice.connect.generator.GeneratorSourceConnector, name='io.sluice.connect.generator.GeneratorSourceConnector', " +
		"version='0.1.0', encodedVersion=0.1.0, type=source, typeName='source', location='classpath'}, PluginDesc{klass=class io.sluice.connect.postgres.PostgresSourceConnector"
	if !strings.HasPrefix(msg, wantPrefix) || strings.Count(msg, "PluginDesc{") != 4 {
		t.Errorf("message = %s", msg)
	}
}

func TestAmbiguousAliases(t *testing.T) {
	a := &connect.Plugin{Class: "x.FooConnector", Kind: connect.KindSource}
	b := &connect.Plugin{Class: "y.FooConnector", Kind: connect.KindSink}
	reg, err := New(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Lookup("Foo"); ok {
		t.Errorf("ambiguous alias resolved")
	}
	if p, ok := reg.Lookup("y.FooConnector"); !ok || p != b {
		t.Errorf("full name did not resolve")
	}
	if _, err := New(a, a); err == nil {
		t.Errorf("duplicate class accepted")
	}
}
