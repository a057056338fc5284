package kafkautil

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreationFlag is the coordinator flag that mirrors Kafka Connect's
// internal.topics.automatic.creation.enable (KIP-1209).
const CreationFlag = "--internal-topics-automatic-creation"

// TopicExists reports whether topic exists, asking the broker without
// letting it create the topic (a broker's auto.create.topics.enable
// applies only to requests that allow it). It sends one broker a metadata
// request of this topic directly: through the client's metadata cache a
// topic created a moment ago, by this process or another, could be missing
// for seconds, and the client's own requests retry an unknown topic for
// seconds before they answer. A broker that fails is followed by the next.
func TopicExists(ctx context.Context, cl *kgo.Client, topic string) (bool, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	brokers := cl.DiscoveredBrokers()
	if len(brokers) == 0 {
		brokers = cl.SeedBrokers()
	}
	var lastErr error
	for _, b := range brokers {
		raw, err := b.Request(ctx, req)
		if err != nil {
			lastErr = err
			continue
		}
		resp := raw.(*kmsg.MetadataResponse)
		for _, t := range resp.Topics {
			if t.Topic == nil || *t.Topic != topic {
				continue
			}
			switch err := kerr.ErrorForCode(t.ErrorCode); {
			case err == nil:
				return true, nil
			case errors.Is(err, kerr.UnknownTopicOrPartition):
				return false, nil
			default:
				return false, fmt.Errorf("look up topic %s: %w", topic, err)
			}
		}
		return false, nil
	}
	if lastErr == nil {
		lastErr = errors.New("no broker known")
	}
	return false, fmt.Errorf("look up topic %s: %w", topic, lastErr)
}

// MissingTopicError is a topic Sluice needs that does not exist, while it
// may not create it: automatic creation of internal topics is off
// (CreationFlag=false, Kafka Connect's
// internal.topics.automatic.creation.enable=false).
type MissingTopicError struct {
	// Topic is the missing topic, Setting what names it (a flag such as
	// --offsets-topic, or a connector's offsets.storage.topic).
	Topic, Setting string
	// Create is how to create it by hand, as Sluice would.
	Create string
}

// Error says how to create the topic, as Kafka Connect says it.
func (e *MissingTopicError) Error() string {
	return fmt.Sprintf("Topic '%s' specified via the '%s' setting is missing, and automatic creation of internal topics is disabled (%s=false, Kafka Connect's internal.topics.automatic.creation.enable=false): create it before starting, e.g. %s",
		e.Topic, e.Setting, CreationFlag, e.Create)
}

// VanishedTopicError is a topic Sluice created (or found) before and that
// is gone now: it was deleted, or the cluster lost it. Sluice never
// creates such a topic again by itself, whatever CreationFlag says: an
// empty topic in its place would silently throw away what the old one
// held (an offsets topic: every source connector would start over).
type VanishedTopicError struct {
	// Topic is the missing topic, Setting what names it.
	Topic, Setting string
	// Evidence says how Sluice knows the topic existed.
	Evidence string
	// Loss says what an empty topic in its place would lose.
	Loss string
	// Create is how to create it by hand, as Sluice would.
	Create string
}

// Error says the topic was deleted and how to restore it or start over.
func (e *VanishedTopicError) Error() string {
	return fmt.Sprintf("Topic '%s' specified via the '%s' setting is missing, but it existed before (%s): it has been deleted. Sluice does not create it again by itself: an empty topic in its place would %s. Restore the topic (from a backup or a mirror), or, to start over on purpose, create it yourself: %s",
		e.Topic, e.Setting, e.Evidence, e.Loss, e.Create)
}

// CreateCommand is the kafka-topics.sh command that creates spec as
// EnsureTopics would (partitions -1: the broker's default).
func CreateCommand(spec TopicSpec) string {
	cmd := "kafka-topics.sh --bootstrap-server <brokers> --create --topic " + spec.Name
	if spec.Partitions > 0 {
		cmd += fmt.Sprintf(" --partitions %d", spec.Partitions)
	}
	if spec.Compacted {
		cmd += " --config cleanup.policy=compact"
	}
	for _, k := range slices.Sorted(maps.Keys(spec.Configs)) {
		cmd += " --config " + k + "=" + spec.Configs[k]
	}
	return cmd
}
