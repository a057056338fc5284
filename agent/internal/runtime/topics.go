package runtime

import (
	"fmt"
	"maps"
	"strings"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/shared/topicguard"
)

// A task never produces to or consumes from a reserved topic, whatever its
// config, its transformations or its plugin choose: the leader refuses a
// config that names one, and the agent checks again here, per record, since
// a RegexRouter, a TimestampRouter, a Java SMT or a plugin (Debezium's
// <prefix>.<schema>.<table>) picks each record's topic as it runs.

// reservedTopics is a task's guard: the topics its assignment names, the
// worker's offsets topic, and Kafka's internal topics.
func reservedTopics(cfg Config, a v1.TaskAssignment) topicguard.Guard {
	own := maps.Clone(a.ReservedTopics)
	if own == nil {
		own = map[string]string{}
	}
	if _, ok := own[cfg.OffsetsTopic]; !ok && cfg.OffsetsTopic != "" {
		own[cfg.OffsetsTopic] = "Sluice's offsets topic"
	}
	return topicguard.New(own)
}

// stageProduce is Kafka Connect's name of the stage that hands a source
// record to the producer, where a record for a reserved topic is refused.
const stageProduce = "KAFKA_PRODUCE"

// producerClass is the class a refused record's error names, as Kafka
// Connect's names the producer.
const producerClass = "org.apache.kafka.clients.producer.KafkaProducer"

// refuseReserved checks a source record's topic. A record for a reserved
// topic is handled as a failed record under the connector's
// errors.tolerance: with all it is skipped (its position kept, so it is not
// polled again) and reported; with none the task fails with a trace naming
// the topic.
func (r *sourceRunner) refuseReserved(topic string) (skip bool, err error) {
	cause := r.t.guard.Check(topic)
	if cause == nil {
		return false, nil
	}
	cause = fmt.Errorf("the record was routed to a topic no connector may use: %w", cause)
	tol := parseTolerance(r.t.conn)
	if !r.warnedReserved[topic] {
		// Logged once per topic, whatever errors.log.enable says: an
		// operator must see that a connector tried.
		r.warnedReserved[topic] = true
		r.t.log.Warn("a record for a reserved topic was refused", "topic", topic, "errors_tolerance", map[bool]string{true: "all", false: "none"}[tol.all])
	}
	tol.report(r.t, stageProduce, producerClass, func() string { return "topic = " + topic }, cause)
	if err := tol.verdict(stageProduce, producerClass, cause); err != nil {
		return false, err
	}
	return true, nil
}

// checkSinkTopics refuses a sink's listed topics and dead letter queue
// when one is reserved; a topics.regex subscription excludes every
// reserved topic instead (consumeExcludes).
func (t *task) checkSinkTopics(topics []string, dlqTopic string) error {
	for _, topic := range topics {
		if err := t.guard.Check(topic); err != nil {
			return fmt.Errorf("topics: %w", err)
		}
	}
	if dlqTopic = strings.TrimSpace(dlqTopic); dlqTopic != "" {
		if err := t.guard.Check(dlqTopic); err != nil {
			return fmt.Errorf("errors.deadletterqueue.topic.name: %w", err)
		}
	}
	return nil
}
