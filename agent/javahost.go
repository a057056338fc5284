package agent

import (
	"context"
	"fmt"

	"github.com/sluice-io/sluice/agent/internal/javahost"
	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/shared/logging"
	"github.com/sluice-io/sluice/shared/wire"
)

// ConnectorHandler carries out the leader's connector operations on the
// agent's connector host (wire.SubjectAgentConnector).
type ConnectorHandler interface {
	HandleConnector(ctx context.Context, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error)
}

// HostTasks makes the tasks of connectors whose code runs in a connector
// host, as the agent's runtime drives them: Config.HostTasks, a seam for
// tests that give an agent a connector host of their own (ConnectorHost).
type HostTasks interface {
	// TaskKind says whether the connector config's tasks run in the host,
	// and whether they are sources or sinks.
	TaskKind(connectorConfig map[string]string) (connect.Kind, bool)
	// NewSourceTask and NewSinkTask make an unstarted task of such a
	// connector, of the kind TaskKind said.
	NewSourceTask(id api.TaskID, connectorConfig map[string]string) connect.SourceTask
	NewSinkTask(id api.TaskID, connectorConfig map[string]string) connect.SinkTask
	// Restartable reports whether err failed a task only because its host
	// was lost.
	Restartable(err error) bool
}

// startHost prepares the connector host of an agent with a plugin path:
// it checks that java and the built host are there, scans the plugins
// and makes their tasks and connector operations. The JVM itself starts
// on first use.
func (a *Agent) startHost(ctx context.Context, reg *plugins.Registry) error {
	sup := javahost.NewSupervisor(javahost.Config{
		Java:       a.cfg.Java,
		HostDir:    a.cfg.ConnectorHostDir,
		PluginPath: a.cfg.PluginPath,
		WorkDir:    a.cfg.WorkDir,
		Logger:     a.cfg.logger(logging.AgentTasks).With("component", "connector-host"),
		Heap:       a.cfg.ConnectorHostHeap,
	})
	if err := sup.Check(); err != nil {
		return fmt.Errorf("agent %s: --plugin-path needs the connector host: %w", a.cfg.ID, err)
	}
	ps, err := sup.Scan(ctx)
	if err != nil {
		return fmt.Errorf("agent %s: %w", a.cfg.ID, err)
	}
	a.log.Info("Java plugins found", "plugins", len(ps), "plugin_path", a.cfg.PluginPath)
	a.host = sup
	a.hostPlugins = ps
	worker := map[string]string{
		"key.converter":   a.cfg.KeyConverter,
		"value.converter": a.cfg.ValueConverter,
		// The host gives a source task a TransactionContext only with it.
		"exactly.once.source.support": exactlyOnceSetting(a.cfg.ExactlyOnce),
	}
	if a.cfg.HeaderConverter != "" {
		worker["header.converter"] = a.cfg.HeaderConverter // else the host's default, SimpleHeaderConverter
	}
	a.hostTasks = javahost.NewTasks(sup, ps, reg, worker)
	a.connectors = javahost.NewConnectors(sup, a.cfg.ID, a.log, a.connectorEvent)
	return nil
}

// exactlyOnceSetting is Kafka's exactly.once.source.support value for the
// agent's exactly-once support.
func exactlyOnceSetting(on bool) string {
	if on {
		return "enabled"
	}
	return "disabled"
}

// HostPlugins are the Java plugins the agent's connector host runs, as
// the agent registers them (wire.RegisterRequest.HostPlugins); nil without
// a plugin path. Set by Start.
func (a *Agent) HostPlugins() []api.PluginInfo { return a.hostPlugins }

// ConnectorHostPid is the process id of the agent's connector host JVM,
// 0 when none runs (no plugin path, or no Java plugin used yet).
func (a *Agent) ConnectorHostPid() int {
	if a.host == nil {
		return 0
	}
	return a.host.Pid()
}

// ConnectorOps carries out connector operations on the agent's connector
// host; nil without a plugin path. Set by Start.
func (a *Agent) ConnectorOps() ConnectorHandler {
	if a.connectors == nil {
		return nil
	}
	return a.connectors
}

// connectorEvent passes on what a connector started in the host asks for
// on its own, and the loss of its host, for the leader
// (wire.SubjectLeaderConnectorEvent).
func (a *Agent) connectorEvent(ev wire.PluginConnectorEvent) {
	a.log.Info("connector event from the connector host", "connector", ev.Name, "kind", ev.Kind, "message", ev.Message)
	a.ConnectorEvent(ev)
	if a.cfg.OnConnectorEvent != nil {
		a.cfg.OnConnectorEvent(ev)
	}
}

// connectorHost is what serves the leader's connector operations: the
// agent's own host, else one it was given (Config.ConnectorHost), else
// none (a true nil, which the transport answers for).
func (a *Agent) connectorHost() ConnectorHandler {
	if h := a.ConnectorOps(); h != nil {
		return h
	}
	return a.cfg.ConnectorHost
}

// hostPluginList is what the agent registers as its host plugins: its own
// host's, else those it was given.
func (a *Agent) hostPluginList() []api.PluginInfo {
	if a.hostPlugins != nil {
		return a.hostPlugins
	}
	return a.cfg.HostPlugins
}
