package herder

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

// Sluice never silently recreates a topic it lost (Kafka Connect 4.4's
// internal.topics.automatic.creation.enable, KIP-1209, and more):
//
//	creation off (DisableInternalTopicCreation): a missing topic is a
//	    *kafkautil.MissingTopicError, nothing is ever created
//	creation on: a missing topic is created only when nothing says it
//	    existed before; otherwise it is a *kafkautil.VanishedTopicError.
//	    What says so: its mark in the fleet topic (topic-<name>, written by
//	    the leader for every topic Sluice relies on), or, for the four
//	    topics every coordinator creates, records in the config, offsets
//	    or status topic (the fleet topic's own loss shows that way; its
//	    records are no evidence: clusters may share it).
//
// A connector's own offsets topic is made sure of by the leader whenever
// it starts the connector (offsets.Topics.Prepare): one that vanished fails the
// connector; agents never create one (their tasks fail instead).

// internalTopic is a topic the coordinator needs, as it would create it.
type internalTopic struct {
	spec kafkautil.TopicSpec
	// setting names the topic (a flag); loss is what an empty topic in
	// its place would lose.
	setting, loss string
}

// coreTopics are the topics every coordinator needs before it can start.
func (h *Herder) coreTopics() []internalTopic {
	return []internalTopic{
		{kafkautil.TopicSpec{Name: h.cfg.ConfigTopic, Partitions: 1, Compacted: true}, "--config-topic",
			"lose every connector's config, target state and task configs"},
		{kafkautil.TopicSpec{Name: h.cfg.OffsetsTopic, Partitions: h.cfg.OffsetsPartitions, Compacted: true}, "--offsets-topic",
			"restart every source connector from scratch"},
		{kafkautil.TopicSpec{Name: h.cfg.StatusTopic, Partitions: h.cfg.StatusPartitions, Compacted: true}, "--status-topic",
			"lose every connector's and task's status, and the generations that keep a zombie's late report out"},
		{kafkautil.TopicSpec{Name: h.cfg.FleetTopic, Partitions: 1, Compacted: true}, "--fleet-topic",
			"lose the agents' cordons and drains, the maintenance windows, the rollouts and the marks of the topics Sluice relies on"},
	}
}

// Prepare makes sure of the internal topics (creating the missing ones
// that never existed, unless creation is off) and reads the fleet topic,
// which marks the topics Sluice relies on. Start calls it when it has not
// run; a coordinator calls it first, so that the audit and offsets history
// topics are checked against the marks too (TopicGuard).
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
	meta, err := h.admin.BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("read cluster metadata: %w", err)
	}
	h.clusterID = meta.Cluster
	if err := h.ensureCoreTopics(ctx); err != nil {
		return err
	}
	h.prepared = true
	return nil
}

// ensureCoreTopics checks the core topics, creates the missing ones it
// may, and starts following the fleet topic.
func (h *Herder) ensureCoreTopics(ctx context.Context) error {
	core := h.coreTopics()
	names := make([]string, len(core))
	for i, t := range core {
		names[i] = t.spec.Name
	}
	exists := map[string]bool{}
	for _, n := range names {
		ok, err := kafkautil.TopicExists(ctx, h.adminCl, n)
		if err != nil {
			return err
		}
		exists[n] = ok
	}
	if exists[h.cfg.FleetTopic] {
		if err := h.startFleet(ctx); err != nil {
			return err
		}
	}
	var missing []internalTopic
	for _, t := range core {
		if !exists[t.spec.Name] {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		evidence, err := h.recordsIn(ctx, names, exists)
		if err != nil {
			return err
		}
		var errs []error
		var create []kafkautil.TopicSpec
		for _, t := range missing {
			if err := h.mayCreate(t, evidence); err != nil {
				errs = append(errs, err)
				continue
			}
			create = append(create, t.spec)
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		if err := kafkautil.EnsureTopics(ctx, h.admin, create...); err != nil {
			return err
		}
	}
	if err := kafkautil.WaitTopics(ctx, h.admin, names...); err != nil {
		return err
	}
	if h.fleet == nil {
		return h.startFleet(ctx)
	}
	return nil
}

// startFleet follows the fleet topic from its start to its end.
func (h *Herder) startFleet(ctx context.Context) error {
	fleet, err := store.NewFleetStore(h.cfg.FleetTopic, func(key string, err error) {
		h.log.Warn("skipping undecodable fleet record", "key", key, "err", err)
	}, h.cfg.KafkaOpts...)
	if err != nil {
		return err
	}
	fleet.SetGate(h.cfg.Signing)
	if err := fleet.Start(ctx); err != nil {
		fleet.Close()
		return fmt.Errorf("read fleet topic: %w", err)
	}
	h.fleet = fleet
	return nil
}

// recordsIn says which of the existing topics among names hold records
// ("" when none does): evidence that this cluster ran before.
func (h *Herder) recordsIn(ctx context.Context, names []string, exists map[string]bool) (string, error) {
	var present []string
	for _, n := range names {
		// The fleet topic may be shared by several clusters (its default
		// name is the same for all): its records say nothing of this one.
		// Its marks of this cluster's topics do (markedGone).
		if exists[n] && n != h.cfg.FleetTopic {
			present = append(present, n)
		}
	}
	if len(present) == 0 {
		return "", nil
	}
	ends, err := h.admin.ListEndOffsets(ctx, present...)
	if err != nil {
		return "", fmt.Errorf("list the end offsets of %v: %w", present, err)
	}
	for _, n := range present {
		var total int64
		ends.Each(func(o kadm.ListedOffset) {
			if o.Topic == n && o.Err == nil {
				total += o.Offset
			}
		})
		if total > 0 {
			return fmt.Sprintf("topic '%s' of the same cluster holds %d records", n, total), nil
		}
	}
	return "", nil
}

// mayCreate says whether t, missing, may be created: evidence, when not
// empty, says the cluster ran before, so t existed and vanished.
func (h *Herder) mayCreate(t internalTopic, evidence string) error {
	if err := h.markedGone(t); err != nil {
		return err
	}
	if evidence != "" {
		return &kafkautil.VanishedTopicError{Topic: t.spec.Name, Setting: t.setting, Evidence: evidence,
			Loss: t.loss, Create: kafkautil.CreateCommand(t.spec)}
	}
	if h.cfg.DisableInternalTopicCreation {
		return &kafkautil.MissingTopicError{Topic: t.spec.Name, Setting: t.setting, Create: kafkautil.CreateCommand(t.spec)}
	}
	return nil
}

// markedGone is the error of t, missing, when the fleet topic marks it as
// a topic Sluice relies on in this Kafka cluster; nil otherwise.
func (h *Herder) markedGone(t internalTopic) error {
	if h.fleet == nil {
		return nil
	}
	m, ok := h.fleet.State.Topic(t.spec.Name)
	if !ok || (m.Cluster != "" && m.Cluster != h.clusterID) {
		return nil
	}
	evidence := fmt.Sprintf("the fleet topic '%s' records it as %s since %s", h.cfg.FleetTopic, m.Purpose, m.Since.UTC().Format(time.RFC3339))
	return &kafkautil.VanishedTopicError{Topic: t.spec.Name, Setting: t.setting, Evidence: evidence,
		Loss: t.loss, Create: kafkautil.CreateCommand(t.spec)}
}

// TopicGuard checks a topic of the coordinator's own beyond the core ones
// (the audit and offsets history topics) before it is created: spec is
// how it would be created, setting the flag that names it and loss what
// an empty topic in its place would lose. It returns nil when the topic
// exists or may be created. Call it after Prepare.
func (h *Herder) TopicGuard(ctx context.Context, spec kafkautil.TopicSpec, setting, loss string) error {
	ok, err := kafkautil.TopicExists(ctx, h.adminCl, spec.Name)
	if err != nil || ok {
		return err
	}
	return h.mayCreate(internalTopic{spec: spec, setting: setting, loss: loss}, "")
}

// markTopics records, once per topic, that Sluice relies on each of its
// own topics that exists: from then on one that vanishes is never created
// again by itself. The leader runs it as it takes up leadership; a failure
// is logged, not fatal (the next leadership tries again).
func (h *Herder) markTopics(ctx context.Context) {
	var cmds []store.FleetCommand
	for name, purpose := range h.cfg.ReservedTopics {
		if _, ok := h.fleet.State.Topic(name); ok {
			continue
		}
		exists, err := kafkautil.TopicExists(ctx, h.adminCl, name)
		if err != nil {
			h.log.Warn("marking the topics Sluice relies on", "topic", name, "err", err)
			return
		}
		if exists {
			cmds = append(cmds, store.MarkTopic{Name: name, Mark: store.TopicMark{Purpose: purpose, Cluster: h.clusterID, Since: time.Now().UTC()}})
		}
	}
	if len(cmds) == 0 {
		return
	}
	if err := h.fleet.Apply(ctx, cmds...); err != nil {
		h.log.Warn("marking the topics Sluice relies on", "err", err)
	}
}
