package runtime

import (
	"fmt"
	"maps"
	"strings"

	"github.com/sluice-io/sluice/shared/tenancy"
	"github.com/sluice-io/sluice/shared/topicguard"
	"github.com/sluice-io/sluice/shared/wire"
)

// A task never produces to or consumes from a reserved topic, whatever its
// config, its transformations or its plugin choose: the leader refuses a
// config that names one, and the agent checks again here, per record, since
// a RegexRouter, a TimestampRouter, a Java SMT or a plugin (Debezium's
// <prefix>.<schema>.<table>) picks each record's topic as it runs.

// reservedTopics is a task's guard: the topics its assignment names, the
// worker's offsets topic, and Kafka's internal topics.
func reservedTopics(cfg Config, a wire.TaskAssignment) topicguard.Guard {
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

// checkTopic refuses a topic the task may not use: a reserved one, or one
// outside its tenant's topics.
func (t *task) checkTopic(topic string) error {
	if err := t.guard.Check(topic); err != nil {
		return err
	}
	return tenancy.CheckTopic(t.assignment.Tenant, topic)
}

// refuseTopic checks a source record's topic. A record for a topic the
// task may not use (checkTopic) is handled as a failed record under the
// connector's errors.tolerance: with all it is skipped (its position kept,
// so it is not polled again) and reported; with none the task fails with
// a trace naming the topic.
func (r *sourceRunner) refuseTopic(topic string) (skip bool, err error) {
	cause := r.t.checkTopic(topic)
	if cause == nil {
		return false, nil
	}
	cause = fmt.Errorf("the record was routed to a topic this connector may not use: %w", cause)
	tol := parseTolerance(r.t.conn)
	if !r.warnedReserved[topic] {
		// Logged once per topic, whatever errors.log.enable says: an
		// operator must see that a connector tried.
		r.warnedReserved[topic] = true
		r.t.log.Warn("a record for a topic the connector may not use was refused", "topic", topic, "errors_tolerance", map[bool]string{true: "all", false: "none"}[tol.all])
	}
	tol.report(r.t, stageProduce, producerClass, func() string { return "topic = " + topic }, cause)
	if err := tol.verdict(stageProduce, producerClass, cause); err != nil {
		return false, err
	}
	return true, nil
}

// checkSink refuses a sink whose listed topics, dead letter queue or
// consumer group it may not use. A topics.regex subscription excludes
// every reserved topic instead, and its records of a topic outside the
// tenant's are never delivered (sinkRunner.admits).
func (t *task) checkSink(topics []string, dlqTopic, group string) error {
	for _, topic := range topics {
		if err := t.checkTopic(topic); err != nil {
			return fmt.Errorf("topics: %w", err)
		}
	}
	if dlqTopic = strings.TrimSpace(dlqTopic); dlqTopic != "" {
		if err := t.checkTopic(dlqTopic); err != nil {
			return fmt.Errorf("errors.deadletterqueue.topic.name: %w", err)
		}
	}
	return tenancy.CheckGroup(t.assignment.Tenant, group)
}

// admits reports whether a sink delivers the records of topic: always,
// but for a pattern subscription's topic outside the tenant's topics,
// whose records are skipped (a Go task commits past them; a Java task's
// commits cover what it was handed only) and whose first record is logged. Kafka ACLs on the tenant's principal keep the
// broker from serving them at all.
func (r *sinkRunner) admits(topic string) bool {
	if r.t.assignment.Tenant == nil {
		return true
	}
	ok, seen := r.admitted[topic]
	if !seen {
		ok = tenancy.AllowsTopic(r.t.assignment.Tenant, topic)
		r.admitted[topic] = ok
		if !ok {
			r.t.log.Warn("the pattern subscription matched a topic outside the tenant's: its records are not delivered", "topic", topic, "tenant", r.t.assignment.Tenant.Tenant)
		}
	}
	return ok
}
