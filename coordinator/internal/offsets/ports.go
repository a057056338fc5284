package offsets

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/wire"
)

// The ports: what the service needs from the rest of the coordinator, each
// as narrow as its use. The herder satisfies them from its own parts while
// it wires the coordinator together.

// Connectors are the connectors' configs and target states as the config
// topic has them (store.ConfigState).
type Connectors interface {
	// Get is a connector's config and state.
	Get(name string) (store.Connector, bool)
	// TaskIDBound is one past the highest task id the name ever had.
	TaskIDBound(name string) int
	// All is every connector.
	All() []store.Connector
}

// Locks serialise the changes of each connector (connlock.Table): the
// service takes a connector's lock for each change, so that no other
// change of it — an offsets operation, a config write, a delete — runs
// between the checks and the write.
type Locks interface {
	// Lock takes name's lock; the caller calls unlock when done.
	Lock(name string) (unlock func())
}

// Plugin is the connector plugin a config uses, as the service reads it.
type Plugin struct {
	// Plugin is the built-in Go plugin, or for a Java plugin its class,
	// kind and version only (its code runs on agents' hosts).
	Plugin *connect.Plugin
	// Java reports that the plugin's code runs on agents' connector hosts.
	Java bool
	// Pinned is the Java plugin version the connector resolved to (its
	// connector.plugin.version read when the config was written), "" for
	// none.
	Pinned string
}

// Plugins choose a connector config's plugin (the herder's plugin choice).
type Plugins interface {
	// Choose is the plugin config uses; false when nobody has its class.
	Choose(config map[string]string) (Plugin, bool)
	// Type is config's REST type: api.TypeSource, api.TypeSink or
	// api.TypeUnknown.
	Type(config map[string]string) string
	// UnknownConnectorMessage is the answer to a class nobody has.
	UnknownConnectorMessage(class string) string
}

// Hosts are the agents' connector hosts, where a Java connector's
// alterOffsets runs.
type Hosts interface {
	// HostAgents are the live agents whose hosts have the Java plugin
	// class (at version pinned, "" any), sorted by id; none names why
	// when there are none.
	HostAgents(class, pinned string) (agents []string, none string)
	// CallAnyHost sends req to the first of agents that answers.
	CallAnyHost(ctx context.Context, agents []string, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error)
}

// Agents are the agents as the reconciler knows them: the service asks
// them to stop a connector's tasks, and has one of them make a change.
type Agents interface {
	// Holders are every known agent and every task of connector an agent
	// reported or a placement holds, read at one instant.
	Holders(connector string) (agents []string, tasks []api.TaskID)
	// Revoke stops ids on agent, waiting up to the task shutdown timeout.
	Revoke(ctx context.Context, agent string, ids []api.TaskID) (wire.RevokeReply, error)
	// ForgetReported drops ids from what agent last reported (it is gone).
	ForgetReported(agent string, ids []api.TaskID)
	// Registered are the registered agents, in the order to try them.
	Registered() []string
	// LastSeen is when agent was last heard from; false once it is lost.
	LastSeen(agent string) (time.Time, bool)
}

// RPC sends offsets operations to an agent (agentrpc.Client).
type RPC interface {
	// SourceOffsets has agent make req, answering what it wrote when it
	// left the wait for readers to the caller.
	SourceOffsets(ctx context.Context, agent string, req wire.SourceOffsetsRequest) ([]wire.WrittenOffset, error)
	// SinkOffsets has agent make req.
	SinkOffsets(ctx context.Context, agent string, req wire.SinkOffsetsRequest) error
	// ReplaceOffsets has agent replace a source connector's offsets, as
	// SourceOffsets answering what it wrote.
	ReplaceOffsets(ctx context.Context, agent string, req wire.OffsetsReplaceRequest) ([]wire.WrittenOffset, error)
}

// Reader reads the positions Kafka holds (KafkaReader).
type Reader interface {
	// GroupOffsets are a consumer group's committed offsets; a group that
	// does not exist has none.
	GroupOffsets(ctx context.Context, group string) (kadm.OffsetResponses, error)
	// SourceEntries are a source connector's offsets entries in the
	// worker's offsets topic and in topic (its own, "" for none), both
	// read to their end, with the connector topic the entries name.
	SourceEntries(ctx context.Context, name, topic string) ([]offsetstore.Entry, string, error)
}

// History is where every change of a connector's positions is recorded
// (offsethistory.Log): a pending entry before the change, then a marker
// saying whether it was applied. Entries outlive their connector.
type History interface {
	// Begin writes e as pending, giving it its id and time; an error means
	// the entry may not exist, and the change must not be made.
	Begin(ctx context.Context, e api.OffsetsHistoryEntry) (api.OffsetsHistoryEntry, error)
	// Finish marks e applied (cause nil) or failed.
	Finish(ctx context.Context, e api.OffsetsHistoryEntry, cause error) error
	// List is a connector's applied entries, newest first, older than the
	// entry before when it is set.
	List(ctx context.Context, connector string, limit int, before string) (api.OffsetsHistory, error)
	// Get is one applied entry of a connector.
	Get(ctx context.Context, connector, id string) (api.OffsetsHistoryEntry, bool, error)
	// Newest is a connector's newest applied entry.
	Newest(ctx context.Context, connector string) (api.OffsetsHistoryEntry, bool, error)
	// Pending is every entry that has no marker, oldest first.
	Pending(ctx context.Context) ([]api.OffsetsHistoryEntry, error)
}

// TopicMarks are the fleet topic's marks of the topics Sluice relies on:
// a marked topic that vanished is never created again.
type TopicMarks interface {
	// Marked reports whether topic is marked.
	Marked(topic string) bool
	// Mark marks topic.
	Mark(ctx context.Context, topic string, mark store.TopicMark) error
	// Forget removes topic's mark.
	Forget(ctx context.Context, topic string) error
}

// Clock is where the service reads the time: never inside a decision
// without it, so that tests can set it.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// After sends the time once d has passed.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }

// After implements Clock.
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
