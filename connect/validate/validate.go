// Package validate checks connector configs the way Kafka Connect's
// AbstractHerder.validateConnectorConfig does and renders the result as the
// REST API's ConfigInfos: the framework keys (ConnectorConfig plus the
// source or sink additions, plus Sluice's own), then the connector's keys,
// then the keys of any converter the config names. It also builds the
// create-time error message and the plugin config listing.
package validate

import (
	"slices"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/connect/pluginversion"
	"github.com/sluice-io/sluice/shared/javaregex"
	"github.com/sluice-io/sluice/shared/wire"
)

// Option adjusts validation to the worker's settings.
type Option func(*options)

type options struct {
	keyConverter, valueConverter, headerConverter string
	exactlyOnce                                   bool
	preflight                                     *wire.SourcePreflight
}

// WithExactlyOnce says whether the cluster has exactly-once source support
// on, which exactly.once.support=required needs.
func WithExactlyOnce(enabled bool) Option {
	return func(o *options) { o.exactlyOnce = enabled }
}

// WithPreflight gives Remote the connector's answers to the preflight
// checks (see PreflightAsks), from the process that runs its plugin.
func WithPreflight(p *wire.SourcePreflight) Option {
	return func(o *options) { o.preflight = p }
}

// WithWorkerConverters gives the worker-level key, value and header
// converter classes ("" for none). As in Kafka 4.1+, they become the
// defaults of key.converter, value.converter and header.converter.
func WithWorkerConverters(key, value, header string) Option {
	return func(o *options) { o.keyConverter, o.valueConverter, o.headerConverter = key, value, header }
}

// Connector validates a connector config. It returns the ConfigInfos (with
// Name set to the connector.class value) and the connector's plugin. An
// absent connector.class or one that names no connector is a *api.Error with
// code 400 and Kafka's message; config problems are not errors but entries
// ErrNoConnectorType answers a config without connector.class, with Kafka
// Connect 4.4's message (earlier versions printed the config map in it).
var ErrNoConnectorType = &api.Error{Code: api.CodeBadRequest, Message: "Connector config contains no connector type"}

// in the result (see ErrorMessage).
func Connector(reg *plugins.Registry, props map[string]string, opts ...Option) (api.ConfigInfos, *connect.Plugin, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	cls, ok := props[ConnectorClassConfig]
	if !ok {
		return api.ConfigInfos{}, nil, ErrNoConnectorType
	}
	p, ok := reg.LookupConnector(cls)
	if !ok {
		return api.ConfigInfos{}, nil, &api.Error{Code: api.CodeBadRequest, Message: reg.UnknownConnectorMessage(cls)}
	}
	conn := p.NewConnector()
	def, base := framework(reg, p, props, o, goPreflight(conn))
	own := conn.ConfigDef()
	if own == nil {
		own = connect.NewConfigDef()
	}
	ownValues := mergeValues(own.Validate(props), conn.Validate(props))

	// Kafka keeps the keys in a LinkedHashMap: a connector key that shadows
	// a framework key keeps the framework key's position.
	keys := def.Keys()
	for _, k := range own.Keys() {
		if i := slices.IndexFunc(keys, func(x connect.ConfigKey) bool { return x.Name == k.Name }); i >= 0 {
			keys[i] = k
		} else {
			keys = append(keys, k)
		}
	}
	groups := def.Groups()
	for _, g := range own.Groups() {
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	infos := generateResult(cls, keys, append(base, ownValues...), groups)
	return withConverters(reg, props, base, infos, func(string) bool { return false }), p, nil
}

// framework validates the framework keys of connector p's config: its
// definition and the values of base; ask gives a source connector's
// preflight answers.
func framework(reg *plugins.Registry, p *connect.Plugin, props map[string]string, o options, ask askFunc) (*connect.ConfigDef, []connect.ConfigValue) {
	def := enrich(reg, baseDef(defsInput{
		reg: reg, connector: p, connectorVersion: p.Version, recommend: true,
		key:   converterDefault(reg, props, KeyConverterConfig, o.keyConverter),
		value: converterDefault(reg, props, ValueConverterConfig, o.valueConverter),
		hdr:   converterDefault(reg, props, HeaderConverterConfig, o.headerConverter),
	}), props)
	base := def.Validate(props)
	checkConnectorVersion(p, props, base)
	checkConverterVersions(reg, props, base)
	if p.Kind == connect.KindSink {
		validateSink(props, base)
	} else {
		checkPreflight(props, base, o.exactlyOnce, ask)
	}
	return def, base
}

// withConverters adds the keys of the converters the config names, but for
// those whose class key validated elsewhere says.
func withConverters(reg *plugins.Registry, props map[string]string, base []connect.ConfigValue, infos api.ConfigInfos, elsewhere func(key string) bool) api.ConfigInfos {
	for _, c := range []struct{ key, versionKey, typ string }{
		{HeaderConverterConfig, HeaderConverterVersionConfig, "header"},
		{KeyConverterConfig, KeyConverterVersionConfig, "key"},
		{ValueConverterConfig, ValueConverterVersionConfig, "value"},
	} {
		if elsewhere(c.key) {
			continue
		}
		if ci := converterInfos(reg, props, base, c.key, c.versionKey, c.typ); ci != nil {
			infos = merge(infos, *ci)
		}
	}
	return infos
}

// Remote validates the config of a connector whose plugin runs in another
// process (a Java plugin on an agent's connector host): the framework keys
// here, as Connector does, and own — that process's validate entries for
// the connector's own keys — in place of what a Go ConfigDef gives. An
// entry of own that defines a framework key takes that key's place, as a
// connector's key shadows one in Kafka Connect; the error count is the sum.
// p needs only Class, Kind and Version.
func Remote(reg *plugins.Registry, p *connect.Plugin, props map[string]string, own []api.ConfigInfo, opts ...Option) api.ConfigInfos {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	def, base := framework(reg, p, props, o, answered(o.preflight))
	infos := generateResult(props[ConnectorClassConfig], def.Keys(), base, def.Groups())
	for _, c := range own {
		name := c.Definition.Name
		if name == "" {
			name = c.Value.Name
		}
		i := slices.IndexFunc(infos.Configs, func(x api.ConfigInfo) bool { return x.Definition.Name != "" && x.Definition.Name == name })
		if i >= 0 && c.Definition.Name != "" {
			infos.ErrorCount -= len(infos.Configs[i].Value.Errors)
			infos.Configs[i] = c
		} else {
			infos.Configs = append(infos.Configs, c)
		}
		infos.ErrorCount += len(c.Value.Errors)
		if g := c.Definition.Group; g != nil && *g != "" && !slices.Contains(infos.Groups, *g) {
			infos.Groups = append(infos.Groups, *g)
		}
	}
	return withConverters(reg, props, base, infos, func(key string) bool {
		return slices.ContainsFunc(own, func(c api.ConfigInfo) bool { return c.Definition.Name == key })
	})
}

// converterDefault is Kafka 4.1's converterDefaults: with a worker converter
// the key defaults to it; the version defaults to the version of the
// converter in use.
func converterDefault(reg *plugins.Registry, props map[string]string, key, worker string) converterDefaults {
	own, set := props[key]
	if !set && worker == "" {
		return converterDefaults{}
	}
	var d converterDefaults
	if worker != "" {
		if p, ok := reg.Lookup(worker); ok {
			d.class = connect.Class(p.Class)
		} else {
			d.class = connect.Class(worker)
		}
	}
	name := worker
	if set {
		name = connect.JavaTrim(own)
	}
	if p, ok := reg.Lookup(name); ok {
		d.version = p.Version
	}
	return d
}

// checkConnectorVersion checks connector.plugin.version against the
// version of p, the plugin chosen for the config, as Kafka Connect reads
// it (connect/pluginversion): a spec Maven cannot read is an error on the
// key (Maven's message), and a requirement p's version does not meet is
// Kafka's "not found" error on it and on connector.class.
func checkConnectorVersion(p *connect.Plugin, props map[string]string, values []connect.ConfigValue) {
	req, has, err := pluginversion.Requirement(props[ConnectorVersionConfig])
	switch {
	case err != nil:
		connect.FindValue(values, ConnectorVersionConfig).AddError(err.Error())
	case has && p.Version != "" && !req.Contains(p.Version):
		// (No version: a Java plugin the caller found none of, and says so.)
		msg := VersionNotFound(p.Class, req, []string{p.Version})
		connect.FindValue(values, ConnectorClassConfig).AddError(msg)
		connect.FindValue(values, ConnectorVersionConfig).AddError(msg)
	}
}

// checkConverterVersions checks each converter's *.plugin.version, when
// the config names the converter, against the version Sluice has of it.
func checkConverterVersions(reg *plugins.Registry, props map[string]string, values []connect.ConfigValue) {
	for _, c := range [][2]string{
		{KeyConverterConfig, KeyConverterVersionConfig},
		{ValueConverterConfig, ValueConverterVersionConfig},
		{HeaderConverterConfig, HeaderConverterVersionConfig},
	} {
		cls, set := props[c[0]]
		v := connect.FindValue(values, c[1])
		if !set || v == nil || len(v.Errors) > 0 {
			continue
		}
		if p, ok := reg.Lookup(connect.JavaTrim(cls)); ok {
			if msg := versionError(p, props[c[1]]); msg != "" {
				v.AddError(msg)
			}
		}
	}
}

// mergeValues folds a connector's own Validate results into its ConfigDef
// results: errors on a known key are added to it, other keys are appended.
func mergeValues(values, extra []connect.ConfigValue) []connect.ConfigValue {
	for _, e := range extra {
		if v := connect.FindValue(values, e.Name); v != nil {
			v.Errors = append(v.Errors, e.Errors...)
			if e.Value != nil {
				v.Value = e.Value
			}
			if len(e.RecommendedValues) > 0 {
				v.RecommendedValues = e.RecommendedValues
			}
			v.Visible = e.Visible
			continue
		}
		values = append(values, e)
	}
	return values
}

// validateSink is Kafka's SinkConnectorConfig.validate: exactly one of
// topics and topics.regex, and the dead letter queue topic not among them.
func validateSink(props map[string]string, values []connect.ConfigValue) {
	topics, hasTopicsKey := props[TopicsConfig]
	regex, hasRegexKey := props[TopicsRegexConfig]
	dlq := connect.JavaTrim(props[DLQTopicNameConfig])
	hasTopics := hasTopicsKey && connect.JavaTrim(topics) != ""
	hasRegex := hasRegexKey && connect.JavaTrim(regex) != ""
	add := func(name, msg string) { connect.FindValue(values, name).AddError(msg) }
	if hasTopics && hasRegex {
		msg := "topics and topics.regex are mutually exclusive options, but both are set."
		add(TopicsConfig, msg)
		add(TopicsRegexConfig, msg)
	}
	if !hasTopics && !hasRegex {
		msg := "Must configure one of topics or topics.regex"
		add(TopicsConfig, msg)
		add(TopicsRegexConfig, msg)
	}
	if dlq == "" {
		return
	}
	if hasTopics {
		var list []string
		for _, t := range connect.ParseList(topics) {
			if t != "" && !slices.Contains(list, t) {
				list = append(list, t)
			}
		}
		if slices.Contains(list, dlq) {
			add(TopicsConfig, "The DLQ topic '"+dlq+"' may not be included in the list of topics ('topics="+
				connect.JavaString(list)+"') consumed by the connector")
		}
	}
	if hasRegex {
		if re, err := javaregex.Compile(regex); err == nil && re.MatchString(dlq) {
			add(TopicsRegexConfig, "The DLQ topic '"+dlq+"' may not be matched by the regex for the topics ('topics.regex="+
				regex+"') consumed by the connector")
		}
	}
}

// converterInfos validates the props of a converter the connector config
// names, under its prefix (Kafka's validateConverterConfig), or returns nil
// when there is none or its class key already has errors.
func converterInfos(reg *plugins.Registry, props map[string]string, base []connect.ConfigValue, key, versionKey, typ string) *api.ConfigInfos {
	cls, set := props[key]
	kv, vv := connect.FindValue(base, key), connect.FindValue(base, versionKey)
	if !set || kv == nil || len(kv.Errors) > 0 || (vv != nil && len(vv.Errors) > 0) {
		return nil
	}
	p, ok := reg.Lookup(connect.JavaTrim(cls))
	if !ok {
		return nil // the class key already reported it
	}
	def := p.ConfigDef()
	prefix := key + "."
	sub := map[string]string{}
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			sub[rest] = v
		}
	}
	if _, ok := sub["converter.type"]; !ok {
		sub["converter.type"] = typ
	}
	return prefixedInfos(def, def.Validate(sub), prefix)
}

// prefixedInfos is Kafka's prefixedConfigInfos. Note that its error count
// counts values with errors, not error messages.
func prefixedInfos(def *connect.ConfigDef, values []connect.ConfigValue, prefix string) *api.ConfigInfos {
	out := &api.ConfigInfos{Groups: []string{}, Configs: []api.ConfigInfo{}}
	for _, v := range values {
		var info api.ConfigInfo
		if k, ok := def.Key(v.Name); ok {
			if k.Group != "" && !slices.Contains(out.Groups, k.Group) {
				out.Groups = append(out.Groups, k.Group)
			}
			info.Definition = keyInfo(k, prefix)
		}
		v.Name = prefix + v.Name
		if len(v.Errors) > 0 {
			out.ErrorCount++
		}
		info.Value = valueInfo(v)
		out.Configs = append(out.Configs, info)
	}
	return out
}

// generateResult is Kafka's AbstractHerder.generateResult: values of keys
// that have no definition come first, then one entry per key in order; the
// error count is the number of error messages.
func generateResult(name string, keys []connect.ConfigKey, values []connect.ConfigValue, groups []string) api.ConfigInfos {
	out := api.ConfigInfos{Name: name, Groups: groups, Configs: []api.ConfigInfo{}}
	if out.Groups == nil {
		out.Groups = []string{}
	}
	byName := map[string]connect.ConfigValue{}
	defined := map[string]bool{}
	for _, k := range keys {
		defined[k.Name] = true
	}
	for _, v := range values {
		byName[v.Name] = v // later results win, as in Kafka's HashMap
		if !defined[v.Name] {
			out.Configs = append(out.Configs, api.ConfigInfo{Value: valueInfo(v)})
			out.ErrorCount += len(v.Errors)
		}
	}
	for _, k := range keys {
		info := api.ConfigInfo{Definition: keyInfo(k, "")}
		if v, ok := byName[k.Name]; ok {
			info.Value = valueInfo(v)
			out.ErrorCount += len(v.Errors)
		}
		out.Configs = append(out.Configs, info)
	}
	return out
}

func merge(a, b api.ConfigInfos) api.ConfigInfos {
	a.ErrorCount += b.ErrorCount
	a.Configs = append(a.Configs, b.Configs...)
	for _, g := range b.Groups {
		if !slices.Contains(a.Groups, g) {
			a.Groups = append(a.Groups, g)
		}
	}
	return a
}

func keyInfo(k connect.ConfigKey, prefix string) api.ConfigKeyInfo {
	info := api.ConfigKeyInfo{
		Name: prefix + k.Name, Type: string(k.Type), Required: k.Required, DefaultValue: k.DefaultString(),
		Importance: string(k.Importance), Documentation: k.Documentation, Order: k.OrderInGroup,
		Width: string(k.Width), DisplayName: k.DisplayName, Dependents: append([]string{}, k.Dependents...),
	}
	if k.Group != "" {
		g := k.Group
		info.Group = &g
	}
	return info
}

func valueInfo(v connect.ConfigValue) api.ConfigValueInfo {
	return api.ConfigValueInfo{
		Name: v.Name, Value: v.Value, Visible: v.Visible,
		RecommendedValues: append([]string{}, v.RecommendedValues...),
		Errors:            append([]string{}, v.Errors...),
	}
}

// ErrorMessage is the create-time message for invalid configs (Kafka's
// AbstractHerder.maybeAddConfigErrors); "" when infos has no errors.
func ErrorMessage(infos api.ConfigInfos) string {
	if infos.ErrorCount == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Connector configuration is invalid and contains the following ")
	b.WriteString(connect.JavaString(infos.ErrorCount))
	b.WriteString(" error(s):")
	for _, c := range infos.Configs {
		for _, e := range c.Value.Errors {
			b.WriteString("\n" + e)
		}
	}
	b.WriteString("\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	return b.String()
}

// PluginConfig lists a plugin's config keys for GET
// /connector-plugins/{plugin}/config. As in Kafka 4.1+, a connector's own
// keys come first, then the framework keys it does not shadow (with
// connector.plugin.version defaulting to its version); other plugins list
// their own keys.
func PluginConfig(p *connect.Plugin) []api.ConfigKeyInfo {
	out := []api.ConfigKeyInfo{}
	for _, k := range p.ConfigDef().Keys() {
		out = append(out, keyInfo(k, ""))
	}
	if !p.IsConnector() {
		return out
	}
	return withFrameworkKeys(p, out)
}

// RemotePluginConfig is PluginConfig of a connector whose plugin runs in
// another process: own are its keys as that process defines them, p needs
// only Class, Kind and Version.
func RemotePluginConfig(p *connect.Plugin, own []api.ConfigKeyInfo) []api.ConfigKeyInfo {
	return withFrameworkKeys(p, append([]api.ConfigKeyInfo{}, own...))
}

// withFrameworkKeys appends to a connector's own keys the framework keys
// they do not shadow.
func withFrameworkKeys(p *connect.Plugin, own []api.ConfigKeyInfo) []api.ConfigKeyInfo {
	out := own
	// No registry is needed: it only feeds validators and recommenders.
	base := baseDef(defsInput{connector: p, connectorVersion: p.Version})
	for _, k := range base.Keys() {
		if !slices.ContainsFunc(own, func(o api.ConfigKeyInfo) bool { return o.Name == k.Name }) {
			out = append(out, keyInfo(k, ""))
		}
	}
	return out
}

// CheckPluginType is the validate endpoint's check that the body's
// connector.class matches the plugin in the path: after removing a trailing
// "Connector" from both, the class must end with the path name. The error is
// a 400 with Kafka's message.
func CheckPluginType(props map[string]string, pathPlugin string) error {
	cls, ok := props[ConnectorClassConfig]
	if !ok {
		return nil
	}
	norm := func(s string) string { return strings.TrimSuffix(s, "Connector") }
	if !strings.HasSuffix(norm(cls), norm(pathPlugin)) {
		return api.Errorf(api.CodeBadRequest, "Included connector type %s does not match request type %s", cls, pathPlugin)
	}
	return nil
}
