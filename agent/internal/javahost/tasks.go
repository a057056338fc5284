package javahost

import (
	"errors"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/connect/pluginversion"
)

// versionKey is KIP-891's connector.plugin.version.
const versionKey = "connector.plugin.version"

// Tasks makes the tasks of the Java plugins: the runtime asks it which
// connector configs run through the host.
type Tasks struct {
	sup     *Supervisor
	plugins []api.PluginInfo
	builtin *plugins.Registry
	worker  map[string]string
}

// NewTasks makes the task factory of sup's plugins (as Scan found them);
// builtin are the Go plugins that win a class they share unless the
// config asks for the Java one's version; worker are the agent's
// converter settings (key.converter, value.converter, …) the host's tasks
// default to.
func NewTasks(sup *Supervisor, ps []api.PluginInfo, builtin *plugins.Registry, worker map[string]string) *Tasks {
	return &Tasks{sup: sup, plugins: ps, builtin: builtin, worker: worker}
}

// Plugin says whether the connector of conn runs through the host, and
// as which plugin: a class only a Java plugin has (by full or simple
// name), or one a Go plugin has too when connector.plugin.version asks
// for a Java plugin's version. The leader sends the version the
// connector's config resolved to (an exact one); a range or latest is
// read as Kafka Connect reads it, the highest version here meeting it.
func (f *Tasks) Plugin(conn map[string]string) (api.PluginInfo, bool) {
	class := strings.TrimSpace(conn["connector.class"])
	req, has, err := pluginversion.Requirement(conn[versionKey])
	if err != nil {
		return api.PluginInfo{}, false // no version meets it: the runtime says so
	}
	var best api.PluginInfo
	found := false
	for _, p := range f.plugins {
		if p.Type != string(connect.KindSource) && p.Type != string(connect.KindSink) {
			continue
		}
		simple := p.Class[strings.LastIndex(p.Class, ".")+1:]
		if p.Class != class && simple != class && simple != class+"Connector" {
			continue
		}
		if has && !req.Contains(p.Version) {
			continue
		}
		if !found || pluginversion.Compare(p.Version, best.Version) > 0 {
			best, found = p, true
		}
	}
	if !found {
		return api.PluginInfo{}, false
	}
	if f.builtin != nil && !has {
		if _, ok := f.builtin.LookupConnector(class); ok {
			return api.PluginInfo{}, false // the Go plugin, unless a Java one's version is asked for
		}
	}
	return best, true
}

// Restartable implements the runtime's host seam: a task failed with
// ErrHostLost starts again once the supervisor has a new host.
func (f *Tasks) Restartable(err error) bool { return errors.Is(err, ErrHostLost) }

// TaskKind implements the runtime's host seam: the kind of the task
// conn's connector runs through the host, if it does.
func (f *Tasks) TaskKind(conn map[string]string) (connect.Kind, bool) {
	p, ok := f.Plugin(conn)
	return connect.Kind(p.Type), ok
}
