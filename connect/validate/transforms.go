package validate

import (
	"cmp"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/connect/pluginversion"
	"github.com/sluice-io/sluice/connect/transforms"
)

// enrich adds the keys that transforms and predicates introduce, as
// Kafka's ConnectorConfig.enrich does: for each alias its type and
// plugin.version, then — embedded under the alias's prefix — a
// transformation's predicate and negate and the keys of the plugin its
// type names, when Sluice has it. An embedded key validates under its own
// name (Kafka's messages say "configuration regex", not the prefixed one).
func enrich(reg *plugins.Registry, d *connect.ConfigDef, props map[string]string) *connect.ConfigDef {
	for _, e := range []struct {
		config, group, kind, display string
		want                         connect.Kind
	}{
		{TransformsConfig, transformsGroup, "transformation", "Transformation", connect.KindTransformation},
		{PredicatesConfig, predicatesGroup, "predicate", "Predicate", connect.KindPredicate},
	} {
		raw, ok := props[e.config]
		if !ok {
			continue
		}
		var seen []string
		for _, alias := range connect.ParseList(raw) {
			if slices.Contains(seen, alias) {
				continue
			}
			seen = append(seen, alias)
			prefix := e.config + "." + alias + "."
			group := e.group + ": " + alias
			typeKey, versionKey := prefix+"type", prefix+"plugin.version"
			p := exactPlugin(reg, props[typeKey], e.want)
			d.Define(connect.ConfigKey{Name: typeKey, Type: connect.TypeClass, Required: true,
				Validator:  typeValidator(props, prefix, p, e.want == connect.KindTransformation),
				Importance: connect.ImportanceHigh, Documentation: "Class for the '" + alias + "' " + e.kind + ".",
				Group: group, OrderInGroup: 0, Width: connect.WidthLong,
				DisplayName: e.display + " type for " + alias, Recommender: classRecommender{reg, e.want}})
			var version any
			if p != nil {
				version = p.Version
			}
			d.Define(connect.ConfigKey{Name: versionKey, Type: connect.TypeString, Default: version,
				Validator:  pluginVersionValidator{p},
				Importance: connect.ImportanceHigh, Documentation: "Version of the '" + alias + "' " + e.kind + ".",
				Group: group, OrderInGroup: 1, Width: connect.WidthLong,
				DisplayName: e.display + " version for " + alias, Recommender: versionRecommender{p}})
			own := connect.NewConfigDef()
			if e.want == connect.KindTransformation {
				own.Define(connect.ConfigKey{Name: transforms.PredicateKey, Type: connect.TypeString, Default: nil,
					Importance: connect.ImportanceMedium, Documentation: "The alias of a predicate used to determine whether to apply this transformation."})
				own.Define(connect.ConfigKey{Name: transforms.NegateKey, Type: connect.TypeBoolean, Default: false,
					Importance: connect.ImportanceMedium, Documentation: "Whether the configured predicate should be negated."})
			}
			if p != nil {
				for _, k := range p.ConfigDef().Keys() {
					// The implicit keys mask a plugin's of the same name.
					if _, implicit := own.Key(k.Name); !implicit {
						own.Define(k)
					}
				}
			}
			embed(d, prefix, group, 2, own)
		}
	}
	return d
}

// exactPlugin is the plugin of kind want whose class is exactly cls (after
// Java's trim), or nil: Kafka resolves a transformation's or predicate's
// type by its full class name only, never by an alias.
func exactPlugin(reg *plugins.Registry, cls string, want connect.Kind) *connect.Plugin {
	cls = connect.JavaTrim(cls)
	p, ok := reg.Lookup(cls)
	if !ok || p.Class != cls || p.Kind != want {
		return nil
	}
	return p
}

// embed adds child's keys to d under prefix, in Kafka's ConfigDef.embed
// order (sortedConfigs: keys without a default first, then by importance,
// then by name), numbered in group from start.
func embed(d *connect.ConfigDef, prefix, group string, start int, child *connect.ConfigDef) {
	keys := child.Keys()
	slices.SortStableFunc(keys, func(a, b connect.ConfigKey) int {
		if a.Required != b.Required {
			if a.Required {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(importanceRank(a.Importance), importanceRank(b.Importance)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	for i, k := range keys {
		k.Name = prefix + k.Name
		k.Group = group
		k.OrderInGroup = start + i
		if k.DisplayName == "" {
			k.DisplayName = strings.TrimPrefix(k.Name, prefix)
		}
		if base := k.Validator; base != nil {
			k.Validator = connect.ValidatorFunc(func(name string, v any) error {
				return base.EnsureValid(strings.TrimPrefix(name, prefix), v)
			})
		}
		d.Define(k)
	}
}

func importanceRank(i connect.Importance) int {
	switch i {
	case connect.ImportanceHigh:
		return 0
	case connect.ImportanceMedium:
		return 1
	}
	return 2
}

// typeValidator is the type key's validator: the class must be a plugin of
// the alias's kind, and a transformation's negate needs a predicate.
func typeValidator(props map[string]string, prefix string, p *connect.Plugin, transform bool) connect.Validator {
	return connect.ValidatorFunc(func(name string, v any) error {
		if transform {
			_, negate := props[prefix+transforms.NegateKey]
			_, predicate := props[prefix+transforms.PredicateKey]
			if negate && !predicate {
				return &connect.ConfigError{Message: "Config '" + prefix + "negate' was provided but there is no config '" +
					prefix + "predicate' defining a predicate to be negated."}
			}
		}
		if v != nil && p == nil {
			raw := props[name]
			return connect.InvalidValue(name, raw, "Class "+raw+" could not be found.")
		}
		if p != nil {
			if msg := versionError(p, props[prefix+"plugin.version"]); msg != "" {
				return &connect.ConfigError{Message: msg}
			}
		}
		return nil
	})
}

// pluginVersionValidator checks a transformation's or predicate's
// plugin.version against the one version Sluice has of it.
type pluginVersionValidator struct{ p *connect.Plugin }

func (v pluginVersionValidator) EnsureValid(_ string, value any) error {
	s, _ := value.(string)
	if v.p == nil {
		return nil
	}
	if msg := versionError(v.p, s); msg != "" {
		return &connect.ConfigError{Message: msg}
	}
	return nil
}

// versionError is what is wrong with want, a *.plugin.version value, for
// plugin p (Sluice has one version of each transformation, predicate and
// converter): Maven's message for a spec it cannot read, Kafka's "not
// found" message for a requirement p's version does not meet; empty when
// p's version will do.
func versionError(p *connect.Plugin, want string) string {
	req, has, err := pluginversion.Requirement(want)
	switch {
	case err != nil:
		return err.Error()
	case has && !req.Contains(p.Version):
		return VersionNotFound(p.Class, req, []string{p.Version})
	}
	return ""
}

// VersionNotFound is Kafka Connect's message for a version requirement no
// plugin of class satisfies; available are the versions there are, which
// it lists in order.
func VersionNotFound(class string, req pluginversion.Range, available []string) string {
	sorted := slices.Clone(available)
	slices.SortFunc(sorted, pluginversion.Compare)
	sorted = slices.Compact(sorted)
	return "Plugin " + class + " not found that matches the version range " + req.String() +
		", available versions: [" + strings.Join(sorted, ", ") + "]"
}

// classRecommender recommends the plugins of a kind, as Kafka's
// ClassRecommender lists the transformations or predicates it has.
type classRecommender struct {
	reg  *plugins.Registry
	kind connect.Kind
}

// ValidValues implements connect.Recommender.
func (r classRecommender) ValidValues(string, map[string]any) []any {
	var out []any
	for _, p := range r.reg.All() {
		if p.Kind == r.kind {
			out = append(out, connect.Class(p.Class))
		}
	}
	return out
}

// Visible implements connect.Recommender.
func (classRecommender) Visible(string, map[string]any) bool { return true }

// versionRecommender recommends the version Sluice has of the type's
// plugin (none when the type names no plugin).
type versionRecommender struct{ p *connect.Plugin }

// ValidValues implements connect.Recommender.
func (r versionRecommender) ValidValues(string, map[string]any) []any {
	if r.p == nil {
		return nil
	}
	return []any{r.p.Version}
}

// Visible implements connect.Recommender.
func (versionRecommender) Visible(string, map[string]any) bool { return true }
