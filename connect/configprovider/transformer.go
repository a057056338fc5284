// Package configprovider resolves Kafka Connect's config placeholders,
// ${provider:[path:]key}, in connector configs: the providers file, env and
// directory of Kafka's FileConfigProvider, EnvVarConfigProvider and
// DirectoryConfigProvider, and the ConfigTransformer that puts their values
// in place.
//
//	stored config (placeholders) ─► Transform, where the plugin code runs,
//	     just before it runs ─► Start / task Start see the values
//	task configs from the plugin ─► ReverseTransform ─► config topic
//	     (each key whose raw value holds a placeholder gets the raw value back)
//
// As in Kafka, a placeholder naming a provider that is not configured, or a
// key the provider has no value for, is left as it is; a provider that
// cannot read what the placeholder names fails the transform.
package configprovider

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
)

// pattern is Kafka's ConfigTransformer.DEFAULT_PATTERN: ${provider:key} or
// ${provider:path:key}. Its groups are lazy, as in Java: the provider ends
// at the first colon and the path at the next, and the key is the rest up
// to the closing brace (so a key may hold colons, a path may not).
var pattern = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// Provider is one config provider (Kafka's ConfigProvider.get): the values
// of keys found at path. A key it has no value for is absent from the
// result; an error means path could not be read at all.
type Provider interface {
	Get(path string, keys []string) (map[string]string, error)
}

// Transformer resolves placeholders with a set of named providers. A nil
// *Transformer has no providers and leaves every placeholder as it is.
type Transformer struct {
	providers map[string]Provider
	// scopeOf, when set, is the scope of a config Transform resolves
	// (WithScopes).
	scopeOf func(config map[string]string) *Scope
}

// WithScopes returns a transformer over t's providers whose Transform
// confines each config to scopeOf(config) (nil: no scope), as
// TransformScoped does: where connector code runs for many teams, every
// config is resolved within its own team's secrets.
func (t *Transformer) WithScopes(scopeOf func(config map[string]string) *Scope) *Transformer {
	if t == nil {
		return nil
	}
	return &Transformer{providers: t.providers, scopeOf: scopeOf}
}

// NewTransformer returns a transformer over providers, by the name that
// placeholders use.
func NewTransformer(providers map[string]Provider) *Transformer {
	return &Transformer{providers: maps.Clone(providers)}
}

// Names lists the configured providers' names, sorted.
func (t *Transformer) Names() []string {
	if t == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(t.providers))
}

// variable is one placeholder's parts.
type variable struct{ provider, path, key string }

func variableOf(m []string) variable {
	return variable{provider: m[1], path: m[3], key: m[4]}
}

// HasVariables reports whether value holds a placeholder.
func HasVariables(value string) bool { return pattern.MatchString(value) }

// OnlyVariables reports whether value is made of placeholders alone, with
// at least one and nothing else around them (${vault:db:password}): it
// names a secret without holding any of it.
func OnlyVariables(value string) bool {
	return HasVariables(value) && pattern.ReplaceAllString(value, "") == ""
}

// Transform returns config with its placeholders resolved (Kafka's
// ConfigTransformer.transform): every provider is asked once per path, for
// all the keys of that path. config itself is not changed.
func (t *Transformer) Transform(config map[string]string) (map[string]string, error) {
	var s *Scope
	if t != nil && t.scopeOf != nil {
		s = t.scopeOf(config)
	}
	return t.TransformScoped(config, s)
}

// TransformScoped is Transform with every placeholder of a configured
// provider checked against s first (nil: no scope): one outside it fails
// the whole transform with a *ScopeError, and no provider reads anything.
func (t *Transformer) TransformScoped(config map[string]string, s *Scope) (map[string]string, error) {
	out := maps.Clone(config)
	if t == nil || len(t.providers) == 0 || config == nil {
		return out, nil
	}
	// provider → path → keys wanted
	wanted := map[string]map[string][]string{}
	for _, k := range slices.Sorted(maps.Keys(config)) {
		for _, m := range pattern.FindAllStringSubmatch(config[k], -1) {
			v := variableOf(m)
			if _, ok := t.providers[v.provider]; !ok {
				continue
			}
			if s != nil {
				if err := s.check(v); err != nil {
					return nil, fmt.Errorf("config %s: %w", k, err)
				}
			}
			byPath := wanted[v.provider]
			if byPath == nil {
				byPath = map[string][]string{}
				wanted[v.provider] = byPath
			}
			if !slices.Contains(byPath[v.path], v.key) {
				byPath[v.path] = append(byPath[v.path], v.key)
			}
		}
	}
	if len(wanted) == 0 {
		return out, nil
	}
	found := map[string]map[string]map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(wanted)) {
		found[name] = map[string]map[string]string{}
		for _, path := range slices.Sorted(maps.Keys(wanted[name])) {
			data, err := t.providers[name].Get(path, wanted[name][path])
			if err != nil {
				return nil, fmt.Errorf("config provider %s: %w", name, err)
			}
			found[name][path] = data
		}
	}
	for k, v := range config {
		out[k] = replace(v, found)
	}
	return out, nil
}

// replace puts the values found in place of value's placeholders, leaving
// a placeholder whose provider or key has none.
func replace(value string, found map[string]map[string]map[string]string) string {
	return pattern.ReplaceAllStringFunc(value, func(s string) string {
		v := variableOf(pattern.FindStringSubmatch(s))
		if r, ok := found[v.provider][v.path][v.key]; ok {
			return r
		}
		return s
	})
}

// ReverseTransform puts placeholders back into task configs computed from a
// transformed config (Kafka's AbstractHerder.reverseTransform): for every
// key of the raw connector config whose value holds a placeholder, a task
// config that has the key gets the raw value. So the config topic, GET
// …/tasks and the assignments sent to agents hold placeholders, never what
// they resolve to. The task configs given are not changed.
func ReverseTransform(raw map[string]string, tasks []map[string]string) []map[string]string {
	var keys []string
	for k, v := range raw {
		if HasVariables(v) {
			keys = append(keys, k)
		}
	}
	out := make([]map[string]string, len(tasks))
	for i, tc := range tasks {
		m := maps.Clone(tc)
		for _, k := range keys {
			if _, ok := m[k]; ok {
				m[k] = raw[k]
			}
		}
		out[i] = m
	}
	return out
}
