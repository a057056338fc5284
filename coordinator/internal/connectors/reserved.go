package connectors

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect/clientoverrides"
	"github.com/sluice-io/sluice/connect/dlq"
	"github.com/sluice-io/sluice/connect/validate"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/javaregex"
	"github.com/sluice-io/sluice/shared/topicguard"
)

// The config keys that name the topics a connector produces to or
// consumes from, which a config write checks against the reserved topics.
// The agent checks every record's topic again at run time: a
// transformation or a plugin may choose another one per record.
const (
	topicKey      = "topic"
	topicsKey     = "topics"
	topicsRegex   = "topics.regex"
	ownOffsetsKey = validate.OffsetsStorageTopicConfig
)

// ReservedTopics returns the topics no connector may use, each with what
// it is: the cluster's own (Config.ReservedTopics) and every source
// connector's own offsets topic in conns. The worker's offsets topic is
// among the cluster's own.
func (a *Admission) ReservedTopics(conns []store.Connector) map[string]string {
	out := make(map[string]string, len(a.cfg.ReservedTopics)+4)
	for name, what := range a.cfg.ReservedTopics {
		out[name] = what
	}
	for _, c := range conns {
		if t := a.cfg.Offsets.OwnTopic(c.Config); t != "" {
			if _, ok := out[t]; !ok {
				out[t] = "the offsets topic of connector " + c.Name
			}
		}
	}
	return out
}

// checkReservedTopics adds an error to each key of props that names a
// reserved topic: topic, topics, a topics.regex matching one now, the dead
// letter queue; and an offsets.storage.topic that is one of the cluster's
// own topics other than the worker's offsets topic. A connector's own
// offsets topic is its own to write offsets to, and shared offsets topics
// stay possible (KIP-618), but no connector's data goes through one.
func (a *Admission) checkReservedTopics(infos *api.ConfigInfos, props map[string]string) {
	guard := topicguard.New(a.ReservedTopics(a.cfg.Configs.All()))
	for _, kt := range namedTopics(props) {
		if err := guard.Check(kt.topic); err != nil {
			addKeyError(infos, kt.key, fmt.Sprintf("Invalid value %s for configuration %s: the %s", kt.topic, kt.key, err))
		}
	}
	if rx := strings.TrimSpace(props[topicsRegex]); rx != "" {
		if re, err := regexp.Compile(rx); err == nil { // a bad regex is validation's error already
			for _, t := range guard.MatchedBy(re) {
				what, _ := guard.Reserved(t)
				addKeyError(infos, topicsRegex, fmt.Sprintf("Invalid value %s for configuration %s: it matches the reserved topic '%s' (%s), which no connector may consume from; exclude it from the pattern", rx, topicsRegex, t, what))
			}
		}
	}
	if t := strings.TrimSpace(props[ownOffsetsKey]); t != "" && t != a.cfg.OffsetsTopic {
		// Only the cluster's own and Kafka's topics: another connector's
		// offsets topic may be shared.
		if err := topicguard.New(a.cfg.ReservedTopics).Check(t); err != nil {
			addKeyError(infos, ownOffsetsKey, fmt.Sprintf("Invalid value %s for configuration %s: the %s; a connector's offsets go to the worker's offsets topic or a topic of its own", t, ownOffsetsKey, err))
		} else if user, key, ok := a.dataTopicUser(props["name"], t); ok {
			addKeyError(infos, ownOffsetsKey, fmt.Sprintf("Invalid value %s for configuration %s: connector %s uses the topic for its data (%s); an offsets topic must be no connector's data topic", t, ownOffsetsKey, user, key))
		}
	}
}

// keyedTopic is a topic a config names, with the key that names it.
type keyedTopic struct{ key, topic string }

// namedTopics are the topics props names for its data, by key: topic, each
// of topics, and the dead letter queue (empty values left out).
func namedTopics(props map[string]string) []keyedTopic {
	var out []keyedTopic
	add := func(key, topic string) {
		if topic = strings.TrimSpace(topic); topic != "" {
			out = append(out, keyedTopic{key, topic})
		}
	}
	add(topicKey, props[topicKey])
	for _, t := range strings.Split(props[topicsKey], ",") {
		add(topicsKey, t)
	}
	add(dlq.TopicConfig, props[dlq.TopicConfig])
	return out
}

// dataTopicUser returns a connector other than name whose data goes
// through topic — its topic, one of its topics, or its topics.regex
// matching it — and the key that says so. A topic that becomes a
// connector's offsets topic is reserved from then on, but a task already
// running keeps the reserved topics of its assignment: so an offsets topic
// is refused while another connector's data goes through it.
func (a *Admission) dataTopicUser(name, topic string) (connector, key string, ok bool) {
	for _, c := range a.cfg.Configs.All() {
		if c.Name == name {
			continue
		}
		for _, kt := range namedTopics(c.Config) {
			if kt.topic == topic {
				return c.Name, kt.key, true
			}
		}
		if rx := strings.TrimSpace(c.Config[topicsRegex]); rx != "" {
			if re, err := javaregex.Compile(rx); err == nil && re.MatchString(topic) {
				return c.Name, topicsRegex, true
			}
		}
	}
	return "", "", false
}

// addKeyError adds msg to key's errors, adding the key to infos when the
// plugin's definition does not list it (a Java plugin's own topic key, an
// override).
func addKeyError(infos *api.ConfigInfos, key, msg string) {
	for i := range infos.Configs {
		if infos.Configs[i].Value.Name == key {
			infos.Configs[i].Value.Errors = append(infos.Configs[i].Value.Errors, msg)
			infos.ErrorCount++
			return
		}
	}
	// No value: props are resolved, and a key no definition types may hold
	// a secret (a sasl.jaas.config override) that must not be echoed.
	infos.Configs = append(infos.Configs, api.ConfigInfo{
		Definition: api.ConfigKeyInfo{Name: key, Type: "STRING", Importance: "HIGH", Order: -1, Width: "NONE", DisplayName: key, Dependents: []string{}},
		Value:      api.ConfigValueInfo{Name: key, RecommendedValues: []string{}, Errors: []string{msg}, Visible: true},
	})
	infos.ErrorCount++
}

// checkOverrides adds an error to each client config override of props
// that the policy does not allow, that the framework owns (under any
// policy), that Sluice's clients do not apply, or whose value does not
// parse.
func (a *Admission) checkOverrides(infos *api.ConfigInfos, props map[string]string) {
	// In key order: the errors of keys no definition lists are added as
	// new entries, whose order the 400's message shows.
	for _, errs := range []map[string]string{a.cfg.Overrides.Check(props, a.cfg.ExactlyOnce), clientoverrides.CheckValues(props)} {
		for _, key := range slices.Sorted(maps.Keys(errs)) {
			addKeyError(infos, key, errs[key])
		}
	}
	// A source that authenticates as its own principal writes its offsets
	// as that principal: into a topic of its own, never the worker's,
	// which holds every team's positions.
	if cr, _ := clientoverrides.ClientCredentials(props, clientoverrides.Producer); cr != nil && a.plugins.Type(props) == api.TypeSource {
		if t := strings.TrimSpace(props[ownOffsetsKey]); t == "" || t == a.cfg.OffsetsTopic {
			addKeyError(infos, ownOffsetsKey, fmt.Sprintf("A source that authenticates as its own principal (producer.override.sasl.jaas.config, user %s) needs an offsets.storage.topic of its own: its principal must not need write access to the worker's offsets topic, which holds every connector's positions", cr.User))
		}
	}
}
