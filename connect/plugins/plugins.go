// Package plugins is the registry of the plugins a Sluice process knows:
// the built-in connectors and converters, found by full class name or by the
// aliases Kafka Connect derives (the simple class name, and the simple name
// without its Connector or Converter suffix).
package plugins

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
	"github.com/sluice-io/sluice/connect/file"
	"github.com/sluice-io/sluice/connect/generator"
	"github.com/sluice-io/sluice/connect/postgres"
	"github.com/sluice-io/sluice/connect/transforms"
)

// Registry resolves class names and aliases to plugins. It is immutable
// once built and safe for concurrent use.
type Registry struct {
	all     []*connect.Plugin // sorted by class
	byClass map[string]*connect.Plugin
	aliases map[string]*connect.Plugin
}

// New builds a registry. Aliases follow Kafka's rules: each plugin's simple
// name and pruned name (plus its declared Aliases) resolve to it unless they
// would resolve to more than one plugin, in which case they resolve to
// none. Two plugins with one class name are an error.
func New(ps ...*connect.Plugin) (*Registry, error) {
	r := &Registry{byClass: map[string]*connect.Plugin{}, aliases: map[string]*connect.Plugin{}}
	owners := map[string]map[string]*connect.Plugin{}
	for _, p := range ps {
		if _, dup := r.byClass[p.Class]; dup {
			return nil, fmt.Errorf("plugin %s registered twice", p.Class)
		}
		r.byClass[p.Class] = p
		r.all = append(r.all, p)
		for _, a := range append([]string{p.SimpleName(), p.PrunedName()}, p.Aliases...) {
			if owners[a] == nil {
				owners[a] = map[string]*connect.Plugin{}
			}
			owners[a][p.Class] = p
		}
	}
	for a, m := range owners {
		if len(m) != 1 {
			continue // ambiguous: Kafka ignores it too
		}
		for _, p := range m {
			r.aliases[a] = p
		}
	}
	slices.SortFunc(r.all, func(a, b *connect.Plugin) int { return cmp.Compare(a.Class, b.Class) })
	return r, nil
}

// Builtin returns the registry of Sluice's built-in plugins: the file source
// and sink, the generator source, the native PostgreSQL source, the String, Json and ByteArray
// converters, and Kafka's transformations and predicates.
func Builtin() *Registry {
	ps := []*connect.Plugin{file.SourcePlugin(), file.SinkPlugin(), generator.Plugin(), postgres.Plugin()}
	ps = append(ps, converters.Plugins()...)
	ps = append(ps, transforms.Plugins()...)
	r, err := New(ps...)
	if err != nil {
		panic(err) // the built-in set is fixed; a clash is a programming error
	}
	return r
}

// Lookup finds a plugin by full class name or alias.
func (r *Registry) Lookup(classOrAlias string) (*connect.Plugin, bool) {
	if p, ok := r.byClass[classOrAlias]; ok {
		return p, true
	}
	p, ok := r.aliases[classOrAlias]
	return p, ok
}

// LookupConnector finds a connector by class name or alias; it also accepts
// a simple name given without its Connector suffix, as Kafka's
// Plugins.connectorClass does.
func (r *Registry) LookupConnector(classOrAlias string) (*connect.Plugin, bool) {
	if p, ok := r.Lookup(classOrAlias); ok && p.IsConnector() {
		return p, true
	}
	var match *connect.Plugin
	for _, p := range r.Connectors() {
		if s := p.SimpleName(); s == classOrAlias || s == classOrAlias+"Connector" {
			if match != nil {
				return nil, false
			}
			match = p
		}
	}
	return match, match != nil
}

// All returns every plugin, sorted by class name.
func (r *Registry) All() []*connect.Plugin { return slices.Clone(r.all) }

// Connectors returns the source and sink connectors, sorted by class name.
func (r *Registry) Connectors() []*connect.Plugin {
	return r.filter(func(p *connect.Plugin) bool { return p.IsConnector() })
}

// Converters returns the converters, sorted by class name.
func (r *Registry) Converters() []*connect.Plugin {
	return r.filter(func(p *connect.Plugin) bool { return p.Kind == connect.KindConverter })
}

// HeaderConverters returns the plugins usable as header converters.
func (r *Registry) HeaderConverters() []*connect.Plugin {
	return r.filter(func(p *connect.Plugin) bool { return p.Kind == connect.KindHeaderConverter || p.HeaderConverter })
}

func (r *Registry) filter(keep func(*connect.Plugin) bool) []*connect.Plugin {
	var out []*connect.Plugin
	for _, p := range r.all {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}

// AvailableConnectors is the list Kafka appends to "Failed to find any class
// that implements Connector and which name matches <cls>, available
// connectors are: ": every connector as Kafka's PluginDesc prints it,
// sorted by class, joined by ", ".
func (r *Registry) AvailableConnectors() string {
	var parts []string
	for _, p := range r.Connectors() {
		parts = append(parts, p.String())
	}
	return strings.Join(parts, ", ")
}

// UnknownConnectorMessage is Kafka's message for a connector class that
// resolves to no connector.
func (r *Registry) UnknownConnectorMessage(classOrAlias string) string {
	return "Failed to find any class that implements Connector and which name matches " + classOrAlias +
		", available connectors are: " + r.AvailableConnectors()
}
