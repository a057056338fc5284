package sinkreset

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/javaregex"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

// selected is one topic a reset applies to, with the partitions it
// applies to there, ascending.
type selected struct {
	topic      string
	partitions []int32
}

// subscription is what a sink's config consumes: a topics list, or a
// topics.regex matched against a whole topic name.
type subscription struct {
	list  []string
	regex *regexp.Regexp
	expr  string
}

// readSubscription reads the sink's topics.regex or topics. The regex wins
// when both are set, as it does in the agent's consumer, so that a reset
// covers what the running sink reads.
func readSubscription(config map[string]string) (subscription, error) {
	if expr := strings.TrimSpace(config["topics.regex"]); expr != "" {
		// Java's Matcher.matches must match the whole name; RE2 is close
		// enough to java.util.regex for topic patterns.
		re, err := javaregex.Compile(expr)
		if err != nil {
			return subscription{}, badRequest("The connector's topics.regex %q is not a valid regular expression: %v", expr, err)
		}
		return subscription{regex: re, expr: expr}, nil
	}
	var s subscription
	for _, t := range strings.Split(config["topics"], ",") {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(s.list, t) {
			s.list = append(s.list, t)
		}
	}
	if len(s.list) == 0 {
		return subscription{}, badRequest("The connector's config has neither topics nor topics.regex: it consumes no topics to reset")
	}
	return s, nil
}

// internal reports a topic the sink never consumes through topics.regex:
// Kafka's own (__consumer_offsets, __transaction_state), which a pattern
// subscription leaves out.
func internal(topic string) bool { return strings.HasPrefix(topic, "__") }

// refuse says why a topic named in "topics" is not one the connector
// consumes, or "" if it is one.
func (s subscription) refuse(topic string) string {
	switch {
	case s.regex == nil && !slices.Contains(s.list, topic):
		return "it is not one of the connector's topics (" + strings.Join(s.list, ",") + ")"
	case s.regex != nil && internal(topic):
		return "it is an internal topic, which topics.regex never selects"
	case s.regex != nil && !s.regex.MatchString(topic):
		return "it does not match the connector's topics.regex " + quote(s.expr)
	}
	return ""
}

// selectPartitions is the topics and partitions rule applies to, sorted:
// the connector's topics that exist on the broker (or the narrowed ones,
// each of which must be the connector's and exist), and in each, every
// partition (or the narrowed ones, each of which must exist).
func selectPartitions(ctx context.Context, adm *kadm.Client, rule Rule, config map[string]string) ([]selected, error) {
	sub, err := readSubscription(config)
	if err != nil {
		return nil, err
	}
	for _, t := range rule.topics {
		if why := sub.refuse(t); why != "" {
			return nil, badRequest("Cannot reset the offsets of topic %s: %s", quote(t), why)
		}
	}
	// A list (or the narrowed topics) is looked up by name; a regex
	// needs every topic. A topic that does not exist comes back with
	// UNKNOWN_TOPIC_OR_PARTITION and is left out.
	lookup := sub.list
	if len(rule.topics) > 0 {
		lookup = rule.topics
	} else if sub.regex != nil {
		lookup = nil
	}
	details, err := listTopics(ctx, adm, lookup)
	if err != nil {
		return nil, err
	}
	var names []string
	if len(rule.topics) > 0 {
		for _, t := range rule.topics {
			if !details.Has(t) {
				return nil, badRequest("Cannot reset the offsets of topic %s: the topic does not exist on the Kafka cluster", quote(t))
			}
		}
		names = rule.topics
	} else {
		for t := range details {
			if details.Has(t) && (sub.regex == nil || !internal(t) && sub.regex.MatchString(t)) {
				names = append(names, t)
			}
		}
	}
	slices.Sort(names)

	out := make([]selected, 0, len(names))
	for _, t := range names {
		have := make([]int32, 0, len(details[t].Partitions))
		for p := range details[t].Partitions {
			have = append(have, p)
		}
		slices.Sort(have)
		want := have
		if len(rule.partitions) > 0 {
			want = slices.Sorted(slices.Values(rule.partitions))
			for _, p := range want {
				if !slices.Contains(have, p) {
					return nil, badRequest("Cannot reset the offset of partition %d of topic %s: the topic has %d partition(s)", p, quote(t), len(have))
				}
			}
		}
		out = append(out, selected{topic: t, partitions: want})
	}
	return out, nil
}

// listTopics reads the metadata of topics (every topic when none is
// named), retrying what Kafka says is transient. A topic that does not
// exist is in the answer with UNKNOWN_TOPIC_OR_PARTITION; any other topic
// error fails the reset.
func listTopics(ctx context.Context, adm *kadm.Client, topics []string) (kadm.TopicDetails, error) {
	var details kadm.TopicDetails
	err := kafkautil.Retry(ctx, func() error {
		var err error
		if details, err = adm.ListTopics(ctx, topics...); err != nil {
			return err
		}
		for _, d := range details {
			if d.Err != nil && !errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
				return fmt.Errorf("topic %s: %w", d.Topic, d.Err)
			}
		}
		return nil
	})
	if err != nil {
		what := "the topics"
		if len(topics) > 0 {
			what = topicsPhrase(topics)
		}
		return nil, api.Errorf(api.CodeInternal, "Failed to read the metadata of %s: %v", what, err)
	}
	return details, nil
}

// quote is a topic name in a message, in single quotes as Kafka Connect's
// offsets messages write one.
func quote(topic string) string { return "'" + topic + "'" }

// topicsPhrase is "topic 'a'" or "topics 'a', 'b'".
func topicsPhrase(topics []string) string {
	q := make([]string, len(topics))
	for i, t := range topics {
		q[i] = quote(t)
	}
	if len(q) == 1 {
		return "topic " + q[0]
	}
	return "topics " + strings.Join(q, ", ")
}
