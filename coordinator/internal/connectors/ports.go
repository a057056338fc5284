package connectors

import (
	"context"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/offsets"
	"github.com/sluice-io/sluice/coordinator/internal/offsetval"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// The ports: what the service needs from the rest of the coordinator, each
// as narrow as its use. The herder satisfies them from its stores, the
// reconciler and the offsets service; the tests, with fakes.

// Configs is the config topic's state as this coordinator follows it
// (store.ConfigState).
type Configs interface {
	Get(name string) (store.Connector, bool)
	Names() []string
	All() []store.Connector
	// PluginPin is the plugin version a connector's config recorded when
	// written (store.ConfigState.PluginPin).
	PluginPin(name string) *records.PluginPin
}

// Writer is the write path of connectors' configs (store.ConfigStore):
// Apply writes commands in one transaction, and they are applied to
// Configs when it returns; Check refuses, before anything is written, the
// commands whose records the config topic would refuse.
type Writer interface {
	Apply(ctx context.Context, cmds ...store.Command) error
	Check(ctx context.Context, cmds ...store.Command) error
}

// Locks serialise the changes of each connector (connlock.Table).
type Locks interface {
	Lock(name string) (unlock func())
	LockBoth(a, b string) (unlock func())
}

// Agents is what the leader knows of its agents (reconciler.Table): their
// registrations, and the plugins they and their connector hosts have.
type Agents interface {
	Agents() []registry.Agent
	Plugins() map[string]api.PluginInfo
	HostPlugins() map[registry.PluginKey]api.PluginInfo
	KnownHostPlugins() map[registry.PluginKey]api.PluginInfo
}

// HostRPC sends a connector operation to an agent's connector host
// (agentrpc.Client).
type HostRPC interface {
	Connector(ctx context.Context, agent string, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error)
}

// Statuses are connectors' and tasks' statuses: Connector and Task as the
// leader last decided them (reconciler.StatusWriter), which may be ahead
// of the status topic; TaskIDs, Stored and Topics as the status topic has
// them (store.StatusState). Write queues records on the leader's status
// queue and waits until they are written.
type Statuses interface {
	Connector(name string) (store.InstanceStatus, bool)
	Task(name string, task int) (store.InstanceStatus, bool)
	TaskIDs(name string) []int
	Stored(name string, task int) (store.InstanceStatus, bool)
	Topics(name string) []string
	Write(ctx context.Context, recs ...records.Record) error
}

// Runner is the leader's running of connectors: Trigger asks the reconcile
// loop for a pass, RestartTasks gives tasks a new generation so their
// agents restart them, RestartInstance restarts a connector's instance
// (which computes its task configs again).
type Runner interface {
	Trigger()
	RestartTasks(ids []api.TaskID)
	RestartInstance(name string)
}

// Offsets is the offsets service as a connector's lifecycle uses it
// (offsets.Service): a delete that resets the offsets first, and
// connectors' own offsets topics.
type Offsets interface {
	// ResetThen resets name's offsets, then runs then, under name's lock.
	ResetThen(ctx context.Context, name string, then func(ctx context.Context) error) error
	// OwnTopic is a source connector's own offsets topic, "" for none.
	OwnTopic(config map[string]string) string
	// ForgetTopic stops following a connector's own offsets topic.
	ForgetTopic(ctx context.Context, topic string)
}

// OffsetSteps is the offsets service as a create with initial offsets
// (create.go) and a move (move.go) use it, step by step.
type OffsetSteps interface {
	AlterOffsetsHook(ctx context.Context, plugin *connect.Plugin, config map[string]string, offsets []connect.Offset) (definite bool, err error)
	CheckSinkPartitions(ctx context.Context, name string, offsets []offsetval.SinkOffset) error
	Observe(kind string) (done func(err *error))
	FenceIDs(name string, c store.Connector) []string
	Positions(ctx context.Context, name string, kind connect.Kind, group, topic string) (offsets.Positions, error)
	SinkOffsets(ctx context.Context, name, group string) (api.ConnectorOffsets, error)
	SourceView(ctx context.Context, name, topic, failure string) (offsetstore.View, func(), error)
	Apply(ctx context.Context, name string, c store.Connector, ch offsets.Change) error
	// SendSource, SendSink, SendReplace and AwaitTasksStopped are
	// offsets.Calls'.
	SendSource(ctx context.Context, req wire.SourceOffsetsRequest) error
	SendSink(ctx context.Context, req wire.SinkOffsetsRequest) error
	SendReplace(ctx context.Context, req wire.OffsetsReplaceRequest) error
	AwaitTasksStopped(ctx context.Context, name string, c store.Connector) bool
	// BeginHistory, FinishHistory and SettleHistory are offsets.Recorder's.
	BeginHistory(ctx context.Context, name, typ, group, topic string, meta offsets.Meta, changes []api.OffsetChange) (api.OffsetsHistoryEntry, error)
	FinishHistory(ctx context.Context, e api.OffsetsHistoryEntry, cause error)
	SettleHistory(ctx context.Context, e api.OffsetsHistoryEntry, kind connect.Kind, cause error)
}

// rollbackTimeout bounds a create's rollback and a move's undo: removing
// the config and restoring the snapshot (each agent tried gets up to 60 s:
// offsets.CallTimeout).
const rollbackTimeout = 3 * time.Minute
