package connectors

import (
	"slices"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/pluginversion"
	"github.com/sluice-io/sluice/connect/validate"
	"github.com/sluice-io/sluice/shared/records"
)

// A connector's plugin version (KIP-891) is resolved once, when its config
// is written: Resolve picks, among the versions the live agents have, the
// one its connector.plugin.version asks for, and the write records it with
// the config (records.PluginPin). Choice then answers with that version for
// as long as the config names the same class and version spec, so that
// every task of the connector runs the same version on whichever agent it
// lands, whatever versions agents bring or take away later. A write that
// changes the class or the version spec resolves again (PinFor); a
// rollback writes back the version recorded before the patch.

// Choice decides which plugin a stored connector config runs: the version
// recorded when the config was written, else (a config written before
// versions were recorded, or by Kafka Connect) what Resolve says now. ok
// is false for a class nobody has.
func (p *Plugins) Choice(props map[string]string) (Choice, bool) {
	if pin := p.pinOf(props); pin != nil {
		if c, ok := p.pinned(*pin); ok {
			return c, true
		}
	}
	c, ok := p.Resolve(props)
	if ok && c.Java() && p.unrecorded(props) {
		// A config no write of this Sluice recorded a version for (an
		// older Sluice's, Kafka Connect's) runs as it ran before versions
		// were recorded: on any agent whose host has the class, at that
		// host's version, unless it names one exact version — so that a
		// new version appearing on one agent neither restarts its tasks
		// nor gathers them there. Its next write records a version.
		if _, exact := exactVersion(props); !exact {
			c.Pinned = ""
		}
	}
	return c, ok
}

// unrecorded reports whether the stored connector of props has no plugin
// version recorded at all.
func (p *Plugins) unrecorded(props map[string]string) bool {
	return p.configs == nil || p.configs.PluginPin(props["name"]) == nil
}

// exactVersion is the one version connector.plugin.version names, when it
// names exactly one.
func exactVersion(props map[string]string) (string, bool) {
	req, has, err := pluginversion.Requirement(props[validate.ConnectorVersionConfig])
	if err != nil || !has {
		return "", false
	}
	return req.Exact()
}

// PinFor is what a write of config for connector name records: the
// version recorded with the connector's config today while config still
// names the same class and version spec and that plugin is still known,
// so that changing another key (tasks.max, a rollout of batch.size) never
// moves a connector to a version that appeared since; else what Resolve
// chooses now (Pin). Changing connector.plugin.version, or a rollout
// doing it, is how a connector moves to another version.
func (p *Plugins) PinFor(name string, config map[string]string) *records.PluginPin {
	if p.configs != nil {
		if pin := p.configs.PluginPin(name); pin != nil &&
			pin.Class == connect.JavaTrim(config[validate.ConnectorClassConfig]) && pin.Spec == config[validate.ConnectorVersionConfig] {
			if _, ok := p.pinned(*pin); ok {
				return pin
			}
		}
	}
	return p.Pin(config)
}

// Pin is what a write of config records with it: the plugin and version
// Resolve chooses now, the class as the config names it; nil for a class
// nobody has or a version spec nothing satisfies (validation refuses
// those).
func (p *Plugins) Pin(config map[string]string) *records.PluginPin {
	c, ok := p.Resolve(config)
	if !ok || c.Unmet != "" || c.Version == "" {
		return nil
	}
	return &records.PluginPin{Class: connect.JavaTrim(config[validate.ConnectorClassConfig]),
		Spec: config[validate.ConnectorVersionConfig], Version: c.Version, Java: c.Java()}
}

// pinOf is the recorded version of the stored connector props name, when
// it was recorded for props' class and version spec.
func (p *Plugins) pinOf(props map[string]string) *records.PluginPin {
	if p.configs == nil {
		return nil
	}
	pin := p.configs.PluginPin(props["name"])
	if pin == nil || pin.Class != connect.JavaTrim(props[validate.ConnectorClassConfig]) ||
		pin.Spec != props[validate.ConnectorVersionConfig] {
		return nil
	}
	return pin
}

// pinned is the choice a recorded version makes: the built-in, or the
// Java plugin of that version, which runs only where that version is (and
// nowhere when no live agent has it any more). ok is false when the
// plugin is not known at all now (a built-in this build lacks, a Java
// class no agent announced since the coordinator started).
func (p *Plugins) pinned(pin records.PluginPin) (Choice, bool) {
	if !pin.Java {
		g, ok := p.reg.LookupConnector(pin.Class)
		if !ok {
			return Choice{}, false
		}
		// A built-in's version is the build's: a pin of an older build's
		// version runs this one.
		return Choice{Go: g, Class: g.Class, Kind: g.Kind, Version: g.Version}, true
	}
	// The class as the config names it: in full, or by an alias.
	var c Choice
	for k, info := range p.agents.KnownHostPlugins() {
		if !hostPluginNamed(k.Class, pin.Class) {
			continue
		}
		if c.Class != "" && c.Class != k.Class {
			return Choice{}, false // an ambiguous alias
		}
		c = Choice{Class: k.Class, Kind: connect.Kind(info.Type), Version: pin.Version, Pinned: pin.Version}
	}
	return c, c.Class != ""
}

// Resolve decides which plugin a connector config would run if written
// now: the one place that decides it. connector.plugin.version is read as
// Kafka Connect reads it (a bare version is exactly that version, a range
// Maven's, "latest" or nothing no requirement).
//
// A class with a built-in Go plugin is the built-in when no version is
// asked for; otherwise the highest version satisfying the requirement,
// among the built-in's and those the live agents' hosts have, the built-in
// on a tie. A class only agents' hosts have (live ones, or ones seen this
// process's lifetime, so that a connector whose agents are all down is
// still known as Java) is Java, at the highest live version satisfying the
// requirement. ok is false for a class nobody has.
func (p *Plugins) Resolve(props map[string]string) (Choice, bool) {
	cls := connect.JavaTrim(props[validate.ConnectorClassConfig])
	req, has, err := pluginversion.Requirement(props[validate.ConnectorVersionConfig])
	if err != nil {
		has = false // validation reports the spec Maven cannot read
	}
	if g, ok := p.reg.LookupConnector(cls); ok {
		return p.resolveBuiltin(g, req, has), true
	}
	known := p.agents.KnownHostPlugins()
	var match []api.PluginInfo
	for _, info := range known {
		if hostPluginNamed(info.Class, cls) && !slices.ContainsFunc(match, func(m api.PluginInfo) bool { return m.Class == info.Class }) {
			match = append(match, info)
		}
	}
	if len(match) != 1 {
		return Choice{}, false // unknown, or an ambiguous alias
	}
	c := Choice{Class: match[0].Class, Kind: connect.Kind(match[0].Type)}
	live := p.liveVersions(c.Class)
	switch v, ok := highest(req, has, live); {
	case ok:
		c.Version, c.Pinned = v, v
	case len(live) > 0:
		c.Unmet = validate.VersionNotFound(c.Class, req, live)
	case has:
		// No live host: an exact version is still where the connector
		// must run, and what "No live agent has …" names.
		if v, exact := req.Exact(); exact {
			c.Version, c.Pinned = v, v
		}
	}
	return c, true
}

// resolveBuiltin resolves a class that has a built-in Go plugin.
func (p *Plugins) resolveBuiltin(g *connect.Plugin, req pluginversion.Range, has bool) Choice {
	builtin := Choice{Go: g, Class: g.Class, Kind: g.Kind, Version: g.Version}
	if !has {
		return builtin
	}
	live := p.liveVersions(g.Class)
	v, ok := highest(req, true, live)
	switch {
	case ok && (!req.Contains(g.Version) || pluginversion.Compare(v, g.Version) > 0):
		kind := g.Kind
		for k, info := range p.agents.HostPlugins() {
			if k.Class == g.Class && k.Version == v {
				kind = connect.Kind(info.Type)
			}
		}
		return Choice{Class: g.Class, Kind: kind, Version: v, Pinned: v}
	case !ok && !req.Contains(g.Version):
		builtin.Unmet = validate.VersionNotFound(g.Class, req, append(live, g.Version))
	}
	return builtin
}

// liveVersions are the versions of class the live agents' hosts have.
func (p *Plugins) liveVersions(class string) []string {
	var out []string
	for k := range p.agents.HostPlugins() {
		if k.Class == class && !slices.Contains(out, k.Version) {
			out = append(out, k.Version)
		}
	}
	return out
}

// highest is the highest of versions satisfying the requirement (any,
// without one).
func highest(req pluginversion.Range, has bool, versions []string) (string, bool) {
	if !has {
		req = pluginversion.Range{Bounds: []pluginversion.Bound{{}}}
	}
	return pluginversion.Highest(req, versions)
}
