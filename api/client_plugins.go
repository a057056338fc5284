package api

import (
	"context"
	"net/http"
	"net/url"
)

// Plugins is /connector-plugins: the plugins the agents run, their config
// keys, and the validation of a config. Get one from Client.Plugins.
type Plugins struct{ c *Client }

// List is GET /connector-plugins: the connector plugins (sources and
// sinks).
func (g *Plugins) List(ctx context.Context) ([]PluginInfo, error) {
	return g.list(ctx, nil)
}

// ListAll is GET /connector-plugins?connectorsOnly=false: the connector
// plugins and the transformations, predicates and converters.
func (g *Plugins) ListAll(ctx context.Context) ([]PluginInfo, error) {
	return g.list(ctx, url.Values{"connectorsOnly": {"false"}})
}

func (g *Plugins) list(ctx context.Context, q url.Values) ([]PluginInfo, error) {
	var out []PluginInfo
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: "/connector-plugins", query: q, safe: true}, &out)
	return out, err
}

// Config is GET /connector-plugins/{plugin}/config: the plugin's config
// keys.
func (g *Plugins) Config(ctx context.Context, plugin string) ([]ConfigKeyInfo, error) {
	var out []ConfigKeyInfo
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/connector-plugins/%s/config", plugin), safe: true}, &out)
	return out, err
}

// ConfigOfVersion is GET /connector-plugins/{plugin}/config?version=: the
// config keys of a version of the plugin (KIP-891: a version, a Maven
// version range or latest).
func (g *Plugins) ConfigOfVersion(ctx context.Context, plugin, version string) ([]ConfigKeyInfo, error) {
	var out []ConfigKeyInfo
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/connector-plugins/%s/config", plugin),
		query: url.Values{"version": {version}}, safe: true}, &out)
	return out, err
}

// Validate is PUT /connector-plugins/{plugin}/config/validate: config
// checked against the plugin, each key's errors in the answer (a config
// with errors is still a 200; see ConfigInfos.ErrorCount).
func (g *Plugins) Validate(ctx context.Context, plugin string, config map[string]string) (ConfigInfos, error) {
	var out ConfigInfos
	_, err := g.c.do(ctx, call{method: http.MethodPut, path: pathf("/connector-plugins/%s/config/validate", plugin), body: nonNilConfig(config), safe: true}, &out)
	return out, err
}
