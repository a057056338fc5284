// Package topicguard decides whether a connector may produce to or consume
// from a topic. Some topics are reserved whatever a connector's config or
// its tenant says: Kafka's internal topics, and the topics a Sluice cluster
// keeps its own state in (configs, statuses, offsets, the audit trail, the
// offsets history, the fleet, every connector's own offsets topic). A
// connector that wrote to one could forge another connector's config or an
// audit record; one that read one could copy every team's configs.
//
// The coordinator refuses a config that names a reserved topic when it is
// written; the agent checks every record's topic again as it runs, because
// transformations and plugins choose topics per record.
package topicguard

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/sluice-io/sluice/shared/javaregex"
)

// kafkaInternal are Kafka's own internal topics. A list, not a prefix:
// Debezium's default heartbeat topic (__debezium-heartbeat.<prefix>) and
// other "__" topics of connectors must keep working.
var kafkaInternal = map[string]string{
	"__consumer_offsets":    "Kafka's consumer offsets topic",
	"__transaction_state":   "Kafka's transaction state topic",
	"__share_group_state":   "Kafka's share group state topic",
	"__remote_log_metadata": "Kafka's remote log metadata topic",
}

// brokerInternal are the topics the broker marks internal in its metadata,
// which a consumer subscribing by pattern never selects.
var brokerInternal = map[string]bool{"__consumer_offsets": true, "__transaction_state": true, "__share_group_state": true}

// KafkaInternal returns the names of Kafka's internal topics, which are
// always reserved, sorted.
func KafkaInternal() []string { return slices.Sorted(maps.Keys(kafkaInternal)) }

// Guard holds the reserved topics, each with what it is.
type Guard struct {
	reserved map[string]string
}

// New returns a guard over Kafka's internal topics and own: topic names
// mapped to what each is ("Sluice's config topic"), for the error that
// refuses it. Empty names are ignored.
func New(own map[string]string) Guard {
	g := Guard{reserved: maps.Clone(kafkaInternal)}
	for name, what := range own {
		if name != "" {
			g.reserved[name] = what
		}
	}
	return g
}

// Reserved reports whether topic is reserved, and what it is.
func (g Guard) Reserved(topic string) (what string, ok bool) {
	what, ok = g.reserved[topic]
	if !ok && g.reserved == nil {
		what, ok = kafkaInternal[topic]
	}
	return what, ok
}

// Check returns an *Error when topic is reserved, else nil.
func (g Guard) Check(topic string) error {
	if what, ok := g.Reserved(topic); ok {
		return &Error{Topic: topic, What: what}
	}
	return nil
}

// Names returns every reserved topic, sorted.
func (g Guard) Names() []string {
	if g.reserved == nil {
		return KafkaInternal()
	}
	return slices.Sorted(maps.Keys(g.reserved))
}

// MatchedBy returns the reserved topics that a sink's topics.regex would
// subscribe to, sorted. Kafka Connect matches the whole name (Java's
// Matcher.matches), and so does this. The topics the broker marks internal
// are left out: a pattern subscription never selects them.
func (g Guard) MatchedBy(rx *regexp.Regexp) []string {
	whole := regexp.MustCompile(javaregex.Whole(rx.String()))
	var out []string
	for _, name := range g.Names() {
		if !brokerInternal[name] && whole.MatchString(name) {
			out = append(out, name)
		}
	}
	return out
}

// ExcludePatterns returns one anchored regular expression per reserved
// topic, for a regex subscription's exclusions: a consumer that
// subscribes by pattern never gets a reserved topic's partitions, whatever
// its pattern matches.
func (g Guard) ExcludePatterns() []string {
	names := g.Names()
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "^" + regexp.QuoteMeta(n) + "$"
	}
	return out
}

// Error refuses a reserved topic.
type Error struct {
	Topic string
	// What the topic is: "Sluice's config topic", "the offsets topic of
	// connector x", "Kafka's consumer offsets topic".
	What string
}

// Error names the reserved topic and what reserves it.
func (e *Error) Error() string {
	return fmt.Sprintf("topic '%s' is reserved (%s): no connector may produce to it or consume from it", e.Topic, e.What)
}
