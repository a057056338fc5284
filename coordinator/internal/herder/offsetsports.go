package herder

import (
	"context"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/internaltopics"
	"github.com/sluice-io/sluice/coordinator/internal/offsets"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/wire"
)

// The offsets service (coordinator/internal/offsets) wired to the herder:
// its ports satisfied from the herder's parts, and the REST operations
// forwarded to it.

// History is where the herder records every change of a connector's
// positions (offsets.History).
type History = offsets.History

// offsetsConfig is what the offsets service works with, once the stores
// it reads are open (Start).
func (h *Herder) offsetsConfig() offsets.Config {
	ports := offsetsPorts{h}
	return offsets.Config{
		GroupID:             h.cfg.GroupID,
		OffsetsTopic:        h.cfg.OffsetsTopic,
		ClusterID:           h.clusterID,
		AgentLease:          h.cfg.AgentLease,
		TaskShutdownTimeout: h.cfg.TaskShutdownTimeout,
		Term:                h.term.Load,
		Connectors:          h.configs.State,
		Locks:               h.locks,
		Plugins:             h.plugins,
		Hosts:               h.plugins,
		Agents:              ports,
		RPC:                 h.rpc,
		Reader:              offsets.KafkaReader{Admin: h.admin, Stores: h.stores},
		History:             h.cfg.History,
		Marks:               ports,
		Admin:               h.admin,
		TopicClient:         h.adminCl,
		Stores:              h.stores,
		Reserved:            func() map[string]string { return h.admit.ReservedTopics(h.configs.State.All()) },
		MayCreate:           func(topic string) error { return h.topics.MayCreate(h.connectorTopic(topic)) },
		Providers:           h.cfg.Providers,
		Metrics:             h.cfg.Metrics,
		Principal:           principalOf,
		Faults:              h.faults,
		Logger:              h.log,
	}
}

// connectorTopic is a connector's own offsets topic, as the offsets
// service creates it.
func (h *Herder) connectorTopic(topic string) internaltopics.Topic {
	return internaltopics.Topic{Spec: kafkautil.TopicSpec{Name: topic, Partitions: h.cfg.OffsetsPartitions, Compacted: true},
		Setting: "offsets.storage.topic", Loss: "restart the connector's source tasks from the worker offsets topic's positions, or from scratch"}
}

// Offsets is the offsets service (offsets); it works once Start has run.
func (h *Herder) Offsets() *offsets.Service { return h.offs }

// ownOffsetsTopic is a source connector's own offsets topic, "" for none
// (offsets.Topics.Own).
func (h *Herder) ownOffsetsTopic(config map[string]string) string {
	return h.offs.Topics().Own(config)
}

// offsetsPorts is the herder as the offsets service's ports see it; its
// Plugins and Hosts are the connectors service's plugin chooser.
type offsetsPorts struct{ h *Herder }

var (
	_ offsets.Agents     = offsetsPorts{}
	_ offsets.TopicMarks = offsetsPorts{}
)

// Holders implements offsets.Agents: the registry and the placements at
// one instant (reconciler.Holders).
func (p offsetsPorts) Holders(connector string) ([]string, []api.TaskID) {
	return p.h.agents.Holders(connector)
}

// Revoke implements offsets.Agents.
func (p offsetsPorts) Revoke(ctx context.Context, agent string, ids []api.TaskID) (wire.RevokeReply, error) {
	return p.h.rec.RevokeTasks(ctx, agent, ids)
}

// ForgetReported implements offsets.Agents.
func (p offsetsPorts) ForgetReported(agent string, ids []api.TaskID) {
	p.h.agents.ForgetReported(agent, ids)
}

// Registered implements offsets.Agents.
func (p offsetsPorts) Registered() []string {
	return p.h.agents.Registered()
}

// LastSeen implements offsets.Agents.
func (p offsetsPorts) LastSeen(agent string) (time.Time, bool) {
	return p.h.agents.LastSeen(agent)
}

// Marked implements offsets.TopicMarks.
func (p offsetsPorts) Marked(topic string) bool {
	_, ok := p.h.fleet.State.Topic(topic)
	return ok
}

// Mark implements offsets.TopicMarks.
func (p offsetsPorts) Mark(ctx context.Context, topic string, mark store.TopicMark) error {
	return p.h.fleet.Apply(ctx, store.MarkTopic{Name: topic, Mark: mark})
}

// Forget implements offsets.TopicMarks.
func (p offsetsPorts) Forget(ctx context.Context, topic string) error {
	return p.h.fleet.Apply(ctx, store.ForgetTopic{Name: topic})
}
