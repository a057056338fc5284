// Package internaltopics makes sure of the coordinator's own topics and never
// silently recreates one that was lost (Kafka Connect 4.4's
// internal.topics.automatic.creation.enable, KIP-1209, and more):
//
//	creation off (Config.DisableCreation): a missing topic is a
//	    *kafkautil.MissingTopicError, nothing is ever created
//	creation on: a missing topic is created only when nothing says it
//	    existed before; otherwise it is a *kafkautil.VanishedTopicError.
//	    What says so: its mark in the fleet topic (topic-<name>, written by
//	    the leader for every topic Sluice relies on, MarkAll), or, for the
//	    core topics every coordinator creates, records in one of the others
//	    (the fleet topic's own loss shows that way; its records are no
//	    evidence: clusters may share it).
//
// A connector's own offsets topic is made sure of by the leader whenever
// it starts the connector (offsets.Topics.Prepare, through MayCreate);
// agents never create one (their tasks fail instead).
package internaltopics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

// Topic is a topic the coordinator needs, as it would create it.
type Topic struct {
	Spec kafkautil.TopicSpec
	// Setting names the topic (a flag); Loss is what an empty topic in its
	// place would lose.
	Setting, Loss string
}

// Marks are the fleet topic's marks of the topics Sluice relies on
// (store.FleetState).
type Marks interface {
	Topic(name string) (store.TopicMark, bool)
}

// Config is what a Guard needs.
type Config struct {
	// Client and Admin talk to the Kafka cluster.
	Client *kgo.Client
	Admin  *kadm.Client
	// Core are the topics every coordinator needs before it can start; the
	// fleet topic, named FleetTopic, among them.
	Core       []Topic
	FleetTopic string
	// OpenFleet follows the fleet topic, once it exists, and returns its
	// marks.
	OpenFleet func(ctx context.Context) (Marks, error)
	// DisableCreation keeps the coordinator from creating any topic.
	DisableCreation bool
	// Reserved are the cluster's own topics with what each is: MarkAll
	// marks those that exist.
	Reserved map[string]string
	// MarkTopics writes marks through the leader's write path.
	MarkTopics func(ctx context.Context, cmds ...store.FleetCommand) error
	// Clock is when a mark is made.
	Clock  func() time.Time
	Logger *slog.Logger
}

// Guard makes sure of the coordinator's topics.
type Guard struct {
	cfg       Config
	clusterID string
	// marks are the fleet topic's, nil until it is followed.
	marks Marks
}

// New makes a Guard.
func New(cfg Config) *Guard {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	return &Guard{cfg: cfg}
}

// ClusterID is the Kafka cluster's id, known once Prepare ran.
func (g *Guard) ClusterID() string { return g.clusterID }

// Prepare reads the cluster's id, checks the core topics, creates the
// missing ones it may, and starts following the fleet topic.
func (g *Guard) Prepare(ctx context.Context) error {
	meta, err := g.cfg.Admin.BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("read cluster metadata: %w", err)
	}
	g.clusterID = meta.Cluster
	names := make([]string, len(g.cfg.Core))
	for i, t := range g.cfg.Core {
		names[i] = t.Spec.Name
	}
	exists := map[string]bool{}
	for _, n := range names {
		ok, err := kafkautil.TopicExists(ctx, g.cfg.Client, n)
		if err != nil {
			return err
		}
		exists[n] = ok
	}
	if exists[g.cfg.FleetTopic] {
		if err := g.openFleet(ctx); err != nil {
			return err
		}
	}
	var missing []Topic
	for _, t := range g.cfg.Core {
		if !exists[t.Spec.Name] {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		evidence, err := g.recordsIn(ctx, names, exists)
		if err != nil {
			return err
		}
		var errs []error
		var create []kafkautil.TopicSpec
		for _, t := range missing {
			if err := g.mayCreate(t, evidence); err != nil {
				errs = append(errs, err)
				continue
			}
			create = append(create, t.Spec)
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		if err := kafkautil.EnsureTopics(ctx, g.cfg.Admin, create...); err != nil {
			return err
		}
	}
	if err := kafkautil.WaitTopics(ctx, g.cfg.Admin, names...); err != nil {
		return err
	}
	if g.marks == nil {
		return g.openFleet(ctx)
	}
	return nil
}

func (g *Guard) openFleet(ctx context.Context) error {
	marks, err := g.cfg.OpenFleet(ctx)
	if err != nil {
		return err
	}
	g.marks = marks
	return nil
}

// recordsIn says which of the existing topics among names hold records
// ("" when none does): evidence that this cluster ran before.
func (g *Guard) recordsIn(ctx context.Context, names []string, exists map[string]bool) (string, error) {
	var present []string
	for _, n := range names {
		// The fleet topic may be shared by several clusters (its default
		// name is the same for all): its records say nothing of this one.
		// Its marks of this cluster's topics do (markedGone).
		if exists[n] && n != g.cfg.FleetTopic {
			present = append(present, n)
		}
	}
	if len(present) == 0 {
		return "", nil
	}
	ends, err := g.cfg.Admin.ListEndOffsets(ctx, present...)
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

// MayCreate says whether t, missing, may be created: nil, or why not.
func (g *Guard) MayCreate(t Topic) error { return g.mayCreate(t, "") }

// mayCreate says whether t, missing, may be created: evidence, when not
// empty, says the cluster ran before, so t existed and vanished.
func (g *Guard) mayCreate(t Topic, evidence string) error {
	if err := g.markedGone(t); err != nil {
		return err
	}
	if evidence != "" {
		return &kafkautil.VanishedTopicError{Topic: t.Spec.Name, Setting: t.Setting, Evidence: evidence,
			Loss: t.Loss, Create: kafkautil.CreateCommand(t.Spec)}
	}
	if g.cfg.DisableCreation {
		return &kafkautil.MissingTopicError{Topic: t.Spec.Name, Setting: t.Setting, Create: kafkautil.CreateCommand(t.Spec)}
	}
	return nil
}

// markedGone is the error of t, missing, when the fleet topic marks it as
// a topic Sluice relies on in this Kafka cluster; nil otherwise.
func (g *Guard) markedGone(t Topic) error {
	if g.marks == nil {
		return nil
	}
	m, ok := g.marks.Topic(t.Spec.Name)
	if !ok || (m.Cluster != "" && m.Cluster != g.clusterID) {
		return nil
	}
	evidence := fmt.Sprintf("the fleet topic '%s' records it as %s since %s", g.cfg.FleetTopic, m.Purpose, m.Since.UTC().Format(time.RFC3339))
	return &kafkautil.VanishedTopicError{Topic: t.Spec.Name, Setting: t.Setting, Evidence: evidence,
		Loss: t.Loss, Create: kafkautil.CreateCommand(t.Spec)}
}

// Check checks a topic of the coordinator's own beyond the core ones (the
// audit, offsets history and liveness topics) before it is created: nil
// when it exists or may be created. Call it after Prepare.
func (g *Guard) Check(ctx context.Context, t Topic) error {
	ok, err := kafkautil.TopicExists(ctx, g.cfg.Client, t.Spec.Name)
	if err != nil || ok {
		return err
	}
	return g.MayCreate(t)
}

// MarkAll records, once per topic, that Sluice relies on each of its
// reserved topics that exists: from then on one that vanishes is never
// created again by itself. The leader runs it as it takes up leadership; a
// failure is logged, not fatal (the next leadership tries again).
func (g *Guard) MarkAll(ctx context.Context) {
	var cmds []store.FleetCommand
	for name, purpose := range g.cfg.Reserved {
		if _, ok := g.marks.Topic(name); ok {
			continue
		}
		exists, err := kafkautil.TopicExists(ctx, g.cfg.Client, name)
		if err != nil {
			g.cfg.Logger.Warn("marking the topics Sluice relies on", "topic", name, "err", err)
			return
		}
		if exists {
			cmds = append(cmds, store.MarkTopic{Name: name, Mark: store.TopicMark{Purpose: purpose, Cluster: g.clusterID, Since: g.cfg.Clock().UTC()}})
		}
	}
	if len(cmds) == 0 {
		return
	}
	if err := g.cfg.MarkTopics(ctx, cmds...); err != nil {
		g.cfg.Logger.Warn("marking the topics Sluice relies on", "err", err)
	}
}
