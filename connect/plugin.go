package connect

import "strings"

// Plugin describes one installed plugin: what GET /connector-plugins lists
// and what the runtime instantiates.
type Plugin struct {
	// Class is the full class name, the plugin's identity (Sluice keeps Kafka
	// Connect's class names so existing configs work unchanged).
	Class string
	// Aliases are extra names that resolve to Class, on top of the simple
	// name and pruned simple name the registry derives.
	Aliases []string
	// Kind is the plugin's kind.
	Kind Kind
	// Version is what GET /connector-plugins shows.
	Version string
	// HeaderConverter says a converter may also be named in
	// header.converter, as Kafka's StringConverter, JsonConverter and
	// ByteArrayConverter are both Converter and HeaderConverter. Sluice
	// passes headers through as bytes, so this only affects validation.
	HeaderConverter bool
	// NewConnector makes a connector (source and sink kinds).
	NewConnector func() Connector
	// NewConverter makes an unconfigured converter (converter kind).
	NewConverter func() Converter
	// NewTransformation makes an unconfigured transformation
	// (transformation kind).
	NewTransformation func() Transformation
	// NewPredicate makes an unconfigured predicate (predicate kind).
	NewPredicate func() Predicate
	// Config returns the ConfigDef of a plugin that is not a connector (a
	// connector's comes from its ConfigDef method).
	Config func() *ConfigDef
	// FileConfigs are the connector's config keys whose values are paths
	// of files its tasks open on the agent (the file connectors' "file").
	// With --file-allowed-paths set, validation refuses a path that no
	// agent able to run the connector allows, and an agent refuses to
	// start a task whose path it does not allow.
	FileConfigs []string
}

// ConfigDef returns the plugin's own config definition, as its config()
// method does in Kafka; an empty one when it defines none.
func (p *Plugin) ConfigDef() *ConfigDef {
	switch {
	case p.NewConnector != nil:
		if d := p.NewConnector().ConfigDef(); d != nil {
			return d
		}
	case p.Config != nil:
		if d := p.Config(); d != nil {
			return d
		}
	}
	return NewConfigDef()
}

// SimpleName is the class name without its package, and for a nested
// class without its enclosing class ("Value" for Cast$Value), as Java's
// Class.getSimpleName, from which Kafka derives aliases.
func (p *Plugin) SimpleName() string {
	return p.Class[strings.LastIndexAny(p.Class, ".$")+1:]
}

// PrunedName is the simple name without the kind's suffix ("Connector" for
// connectors, "Converter" for converters), Kafka's short alias. The suffix
// is only removed when something precedes it.
func (p *Plugin) PrunedName() string {
	suffix := "Connector"
	switch p.Kind {
	case KindConverter:
		suffix = "Converter"
	case KindHeaderConverter:
		suffix = "HeaderConverter"
	case KindTransformation:
		suffix = "Transformation"
	case KindPredicate:
		suffix = "Predicate"
	}
	simple := p.SimpleName()
	if i := strings.LastIndex(simple, suffix); i > 0 {
		return simple[:i]
	}
	return simple
}

// IsConnector reports whether the plugin is a source or sink connector.
func (p *Plugin) IsConnector() bool { return p.Kind == KindSource || p.Kind == KindSink }

// String renders the plugin as Kafka's PluginDesc.toString, which is how
// Kafka lists available plugins in its "Failed to find any class" messages.
func (p *Plugin) String() string {
	return "PluginDesc{klass=class " + p.Class + ", name='" + p.Class + "', version='" + p.Version +
		"', encodedVersion=" + p.Version + ", type=" + string(p.Kind) + ", typeName='" + string(p.Kind) +
		"', location='classpath'}"
}
