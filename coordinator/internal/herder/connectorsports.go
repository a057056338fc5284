package herder

import (
	"context"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/connectors"
	"github.com/sluice-io/sluice/coordinator/internal/offsets"
	"github.com/sluice-io/sluice/coordinator/internal/offsetval"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// The connectors service (coordinator/internal/connectors) wired to the
// herder. It is made in New, before Start opens the stores and the offsets
// service: its ports below read the herder's parts when they are called,
// and no request reaches them before Start returns.

// newConnectors builds the connectors service of h; the reconciler (h.agents),
// the RPC client and the locks exist already.
func (h *Herder) newConnectors() {
	h.conns = connectors.New(connectors.Config{
		WorkerID: h.cfg.WorkerID, GroupID: h.cfg.GroupID, OffsetsTopic: h.cfg.OffsetsTopic,
		ReservedTopics: h.cfg.ReservedTopics, Tenants: h.cfg.Tenants, Overrides: h.cfg.Overrides,
		Providers: h.cfg.Providers, ExactlyOnce: h.cfg.ExactlyOnce, Term: h.term.Load,
		Registry: h.reg, Configs: configsPort{h}, Writer: configsPort{h}, Locks: h.locks, Agents: h.agents, RPC: h.rpc,
		Statuses: statusesPort{h}, Runner: runnerPort{h}, Offsets: offsetsPort{h}, OffsetSteps: offsetsPort{h},
		Faults: h.faults, Logger: h.log,
	})
	h.plugins, h.admit = h.conns.Plugins(), h.conns.Admission()
}

// Connectors is the connectors service, which the REST layer calls.
func (h *Herder) Connectors() *connectors.Service { return h.conns }

// configsPort is the config topic (connectors.Configs, connectors.Writer).
type configsPort struct{ h *Herder }

func (p configsPort) Get(name string) (store.Connector, bool) { return p.h.configs.State.Get(name) }
func (p configsPort) Names() []string                         { return p.h.configs.State.Names() }
func (p configsPort) All() []store.Connector                  { return p.h.configs.State.All() }

// PluginPin implements connectors.Configs: the version recorded with a
// connector's config.
func (p configsPort) PluginPin(name string) *records.PluginPin {
	return p.h.configs.State.PluginPin(name)
}
func (p configsPort) Apply(ctx context.Context, cmds ...store.Command) error {
	return p.h.recordConfigs(ctx, func(ctx context.Context, cmds ...store.Command) error {
		return p.h.configs.Apply(ctx, p.h.withPluginPins(cmds)...)
	}, cmds...)
}
func (p configsPort) Check(ctx context.Context, cmds ...store.Command) error {
	return p.h.configs.Check(ctx, p.h.withPluginPins(cmds)...)
}

// statusesPort is the statuses (connectors.Statuses): the leader's last
// decisions, and the status topic.
type statusesPort struct{ h *Herder }

func (p statusesPort) Connector(name string) (store.InstanceStatus, bool) {
	return p.h.rec.Status().Connector(name)
}
func (p statusesPort) Task(name string, task int) (store.InstanceStatus, bool) {
	return p.h.rec.Status().Task(name, task)
}
func (p statusesPort) TaskIDs(name string) []int { return p.h.statuses.State.TaskIDs(name) }
func (p statusesPort) Stored(name string, task int) (store.InstanceStatus, bool) {
	return p.h.statuses.State.Task(name, task)
}
func (p statusesPort) Topics(name string) []string { return p.h.statuses.State.Topics(name) }
func (p statusesPort) Write(ctx context.Context, recs ...records.Record) error {
	return p.h.rec.Status().Write(ctx, recs...)
}

// runnerPort is the leader's running of connectors (connectors.Runner).
type runnerPort struct{ h *Herder }

func (p runnerPort) Trigger()                      { p.h.trigger() }
func (p runnerPort) RestartTasks(ids []api.TaskID) { p.h.rec.RestartTasks(ids) }

// RestartInstance restarts the connector's instance, when this
// coordinator leads (Sluice runs the Connector part in the leader).
func (p runnerPort) RestartInstance(name string) {
	if m := p.h.instances.Load(); m != nil {
		m.Restart(name)
	}
}

// offsetsPort is the offsets service (connectors.Offsets,
// connectors.OffsetSteps), built by Start.
type offsetsPort struct{ h *Herder }

func (p offsetsPort) ResetThen(ctx context.Context, name string, then func(ctx context.Context) error) error {
	return p.h.offs.ResetThen(ctx, name, then)
}
func (p offsetsPort) OwnTopic(config map[string]string) string { return p.h.ownOffsetsTopic(config) }
func (p offsetsPort) ForgetTopic(ctx context.Context, topic string) {
	p.h.offs.Topics().Forget(ctx, topic)
}
func (p offsetsPort) AlterOffsetsHook(ctx context.Context, plugin *connect.Plugin, config map[string]string, o []connect.Offset) (bool, error) {
	return p.h.offs.AlterOffsetsHook(ctx, plugin, config, o)
}
func (p offsetsPort) CheckSinkPartitions(ctx context.Context, name string, o []offsetval.SinkOffset) error {
	return p.h.offs.CheckSinkPartitions(ctx, name, o)
}
func (p offsetsPort) Observe(kind string) func(err *error) { return p.h.offs.Observe(kind) }
func (p offsetsPort) FenceIDs(name string, c store.Connector) []string {
	return p.h.offs.FenceIDs(name, c)
}
func (p offsetsPort) Positions(ctx context.Context, name string, kind connect.Kind, group, topic string) (offsets.Positions, error) {
	return p.h.offs.Positions(ctx, name, kind, group, topic)
}
func (p offsetsPort) SinkOffsets(ctx context.Context, name, group string) (api.ConnectorOffsets, error) {
	return p.h.offs.SinkOffsets(ctx, name, group)
}
func (p offsetsPort) SourceView(ctx context.Context, name, topic, failure string) (offsetstore.View, func(), error) {
	return p.h.offs.SourceView(ctx, name, topic, failure)
}
func (p offsetsPort) Apply(ctx context.Context, name string, c store.Connector, ch offsets.Change) error {
	return p.h.offs.Apply(ctx, name, c, ch)
}
func (p offsetsPort) SendSource(ctx context.Context, req wire.SourceOffsetsRequest) error {
	return p.h.offs.Calls().SendSource(ctx, req)
}
func (p offsetsPort) SendSink(ctx context.Context, req wire.SinkOffsetsRequest) error {
	return p.h.offs.Calls().SendSink(ctx, req)
}
func (p offsetsPort) SendReplace(ctx context.Context, req wire.OffsetsReplaceRequest) error {
	return p.h.offs.Calls().SendReplace(ctx, req)
}
func (p offsetsPort) AwaitTasksStopped(ctx context.Context, name string, c store.Connector) bool {
	return p.h.offs.Calls().AwaitTasksStopped(ctx, name, c)
}
func (p offsetsPort) BeginHistory(ctx context.Context, name, typ, group, topic string, meta offsets.Meta, changes []api.OffsetChange) (api.OffsetsHistoryEntry, error) {
	return p.h.offs.History().Begin(ctx, name, typ, group, topic, meta, changes)
}
func (p offsetsPort) FinishHistory(ctx context.Context, e api.OffsetsHistoryEntry, cause error) {
	p.h.offs.History().Finish(ctx, e, cause)
}
func (p offsetsPort) SettleHistory(ctx context.Context, e api.OffsetsHistoryEntry, kind connect.Kind, cause error) {
	p.h.offs.History().Settle(ctx, e, kind, cause)
}
