package instances

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/configprovider"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/connect/validate"
)

// Host is where connector instances run, one per connector name. The
// Manager calls it from the connector's own worker, so for one name the
// calls never overlap and always come in lifecycle order (Start, then any
// number of TaskConfigs, then Stop); for different names they may run at
// once. LocalHost runs the plugins in this process; a host that drives
// them on an agent over NATS implements the same three calls.
type Host interface {
	// Start starts an instance of connector name with its config. cc is
	// handed to the plugin's Start; what the plugin calls on it reaches the
	// Manager. A failed Start leaves no instance behind.
	Start(ctx context.Context, name string, props map[string]string, cc connect.ConnectorContext) (Plugin, error)
	// TaskConfigs asks the started instance for at most maxTasks task
	// configs, as the plugin returns them (the Manager adds what the
	// framework adds).
	TaskConfigs(ctx context.Context, name string, maxTasks int) ([]map[string]string, error)
	// Stop stops the instance and forgets it. Stopping a name with no
	// instance does nothing.
	Stop(ctx context.Context, name string) error
}

// Plugin is what the Manager needs to know about a started instance's
// plugin to finish its task configs.
type Plugin struct {
	// Class is the plugin's full class name, whatever alias the config used.
	Class string
	// Kind is connect.KindSource or connect.KindSink.
	Kind connect.Kind
	// Remote says a Java plugin's connector, on an agent's host, computed
	// the task configs: its own task.class (Connector.taskClass, which
	// only the host knows) stays as it gave it.
	Remote bool
}

// LocalHost runs connector instances in this process, from the plugin
// registry. It is safe for concurrent use.
type LocalHost struct {
	reg       *plugins.Registry
	providers *configprovider.Transformer

	mu        sync.Mutex
	instances map[string]localInstance
}

// localInstance is a started plugin and the config it was started from:
// raw, placeholders unresolved, which its task configs get back, and
// resolved, as the plugin saw it.
type localInstance struct {
	conn          connect.Connector
	raw, resolved map[string]string
}

var _ Host = (*LocalHost)(nil)

// NewLocalHost returns a host that makes its instances from reg. Its
// plugins are started with the config providers' placeholders resolved
// (providers may be nil: none are), and their task configs are returned
// with the placeholders put back, so that no resolved secret reaches the
// config topic.
func NewLocalHost(reg *plugins.Registry, providers *configprovider.Transformer) *LocalHost {
	return &LocalHost{reg: reg, providers: providers, instances: map[string]localInstance{}}
}

// Start implements Host.
func (h *LocalHost) Start(_ context.Context, name string, props map[string]string, cc connect.ConnectorContext) (Plugin, error) {
	h.mu.Lock()
	_, running := h.instances[name]
	h.mu.Unlock()
	if running {
		return Plugin{}, fmt.Errorf("connector %s is already started", name)
	}
	conn, p, resolved, err := startLocal(h.reg, h.providers, props, cc)
	if err != nil {
		return Plugin{}, err
	}
	h.mu.Lock()
	h.instances[name] = localInstance{conn: conn, raw: maps.Clone(props), resolved: resolved}
	h.mu.Unlock()
	return p, nil
}

// TaskConfigs implements Host.
func (h *LocalHost) TaskConfigs(_ context.Context, name string, maxTasks int) ([]map[string]string, error) {
	in, err := h.instance(name)
	if err != nil {
		return nil, err
	}
	tasks, err := in.conn.TaskConfigs(resolvedMaxTasks(in.raw, in.resolved, maxTasks))
	if err != nil {
		return nil, fmt.Errorf("computing the task configs of connector %s: %w", name, err)
	}
	return configprovider.ReverseTransform(in.raw, tasks), nil
}

// Stop implements Host.
func (h *LocalHost) Stop(_ context.Context, name string) error {
	h.mu.Lock()
	in, ok := h.instances[name]
	delete(h.instances, name)
	h.mu.Unlock()
	if !ok {
		return nil
	}
	if err := in.conn.Stop(); err != nil {
		return fmt.Errorf("stopping connector %s: %w", name, err)
	}
	return nil
}

func (h *LocalHost) instance(name string) (localInstance, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	in, ok := h.instances[name]
	if !ok {
		return localInstance{}, fmt.Errorf("connector %s is not started", name)
	}
	return in, nil
}

// startLocal makes a fresh instance of the config's connector class and
// starts it with the config's placeholders resolved, just before it runs:
// the one place a plugin is started in the coordinator, for LocalHost and
// for Generate alike.
func startLocal(reg *plugins.Registry, providers *configprovider.Transformer, props map[string]string, cc connect.ConnectorContext) (connect.Connector, Plugin, map[string]string, error) {
	class := props["connector.class"]
	p, ok := reg.LookupConnector(class)
	if !ok {
		return nil, Plugin{}, nil, &api.Error{Code: api.CodeBadRequest, Message: reg.UnknownConnectorMessage(class)}
	}
	resolved, err := providers.Transform(props)
	if err != nil {
		return nil, Plugin{}, nil, fmt.Errorf("resolving the config of %s: %w", p.Class, err)
	}
	conn := p.NewConnector()
	if err := conn.Start(cc, maps.Clone(resolved)); err != nil {
		return nil, Plugin{}, nil, fmt.Errorf("starting %s: %w", p.Class, err)
	}
	return conn, Plugin{Class: p.Class, Kind: p.Kind}, resolved, nil
}

// resolvedMaxTasks is maxTasks, which the Manager reckons from the stored
// config, unless the stored tasks.max is a placeholder: only the resolved
// config, which the Manager never sees, says what it is then (validation
// checked the resolved value).
func resolvedMaxTasks(raw, resolved map[string]string, maxTasks int) int {
	if configprovider.HasVariables(raw[validate.TasksMaxConfig]) {
		return MaxTasks(resolved)
	}
	return maxTasks
}
