package herder

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/coordinator/internal/internaltopics"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

// coreTopics are the topics every coordinator needs before it can start.
func (h *Herder) coreTopics() []internaltopics.Topic {
	return []internaltopics.Topic{
		{Spec: kafkautil.TopicSpec{Name: h.cfg.ConfigTopic, Partitions: 1, Compacted: true}, Setting: "--config-topic",
			Loss: "lose every connector's config, target state and task configs"},
		{Spec: kafkautil.TopicSpec{Name: h.cfg.OffsetsTopic, Partitions: h.cfg.OffsetsPartitions, Compacted: true}, Setting: "--offsets-topic",
			Loss: "restart every source connector from scratch"},
		{Spec: kafkautil.TopicSpec{Name: h.cfg.StatusTopic, Partitions: h.cfg.StatusPartitions, Compacted: true}, Setting: "--status-topic",
			Loss: "lose every connector's and task's status, and the generations that keep a zombie's late report out"},
		{Spec: kafkautil.TopicSpec{Name: h.cfg.FleetTopic, Partitions: 1, Compacted: true}, Setting: "--fleet-topic",
			Loss: "lose the agents' cordons and drains, the maintenance windows, the rollouts and the marks of the topics Sluice relies on"},
	}
}

// Prepare makes sure of the internal topics (internaltopics: creating the
// missing ones that never existed, unless creation is off) and reads the
// fleet topic, which marks the topics Sluice relies on. Start calls it
// when it has not run; a coordinator calls it first, so that the audit and
// offsets history topics are checked against the marks too (TopicGuard).
func (h *Herder) Prepare(ctx context.Context) error {
	if h.prepared {
		return nil
	}
	if h.adminCl == nil {
		cl, err := kgo.NewClient(h.cfg.KafkaOpts...)
		if err != nil {
			return fmt.Errorf("kafka admin client: %w", err)
		}
		h.adminCl, h.admin = cl, kadm.NewClient(cl)
	}
	h.topics = internaltopics.New(internaltopics.Config{Client: h.adminCl, Admin: h.admin, Core: h.coreTopics(), FleetTopic: h.cfg.FleetTopic,
		OpenFleet: h.startFleet, DisableCreation: h.cfg.DisableInternalTopicCreation, Reserved: h.cfg.ReservedTopics,
		MarkTopics: func(ctx context.Context, cmds ...store.FleetCommand) error { return h.fleet.Apply(ctx, cmds...) },
		Clock:      time.Now, Logger: h.log})
	if err := h.topics.Prepare(ctx); err != nil {
		return err
	}
	h.clusterID = h.topics.ClusterID()
	h.prepared = true
	return nil
}

// startFleet follows the fleet topic from its start to its end.
func (h *Herder) startFleet(ctx context.Context) (internaltopics.Marks, error) {
	fleet, err := store.NewFleetStore(h.cfg.FleetTopic, func(key string, err error) {
		h.log.Warn("skipping undecodable fleet record", "key", key, "err", err)
	}, h.cfg.KafkaOpts...)
	if err != nil {
		return nil, err
	}
	fleet.SetGate(h.cfg.Signing)
	if err := fleet.Start(ctx); err != nil {
		fleet.Close()
		return nil, fmt.Errorf("read fleet topic: %w", err)
	}
	h.fleet = fleet
	return fleet.State, nil
}

// TopicGuard checks a topic of the coordinator's own beyond the core ones
// (the audit and offsets history topics) before it is created: spec is
// how it would be created, setting the flag that names it and loss what
// an empty topic in its place would lose. It returns nil when the topic
// exists or may be created. Call it after Prepare.
func (h *Herder) TopicGuard(ctx context.Context, spec kafkautil.TopicSpec, setting, loss string) error {
	return h.topics.Check(ctx, internaltopics.Topic{Spec: spec, Setting: setting, Loss: loss})
}
