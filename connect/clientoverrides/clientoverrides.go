// Package clientoverrides is Kafka Connect's client config overrides for
// Sluice's Go clients: a connector's producer.override.*,
// consumer.override.* and admin.override.* keys, judged by the cluster's
// override policy (connector.client.config.override.policy, with KIP-1188's
// Allowlist) when a config is written, and applied to the task's own
// clients as it runs.
//
// On top of any policy, the keys the framework owns are never
// overridable: a transactional.id, group.instance.id or client.id a
// connector chose could fence another team's task or the leader, or pass
// for them. And a key Sluice's clients cannot apply is refused rather than
// silently ignored.
package clientoverrides

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Client is one of a task's Kafka clients, by the prefix of its overrides.
type Client string

// The clients and their prefixes.
const (
	Producer Client = "producer.override."
	Consumer Client = "consumer.override."
	Admin    Client = "admin.override."
)

// Clients are every client, in their order in messages.
var Clients = []Client{Producer, Consumer, Admin}

// name is how messages name a client: "producer".
func (c Client) name() string { return strings.TrimSuffix(string(c), ".override.") }

// The policies, as Kafka Connect names them.
const (
	PolicyNone      = "None"
	PolicyAll       = "All"
	PolicyAllowlist = "Allowlist"
	// PolicyPrincipal is the deprecated policy Kafka 4.2 keeps: an
	// Allowlist of the three keys that choose the client's principal.
	PolicyPrincipal = "Principal"
)

// principalKeys are what the Principal policy allows.
var principalKeys = []string{"sasl.jaas.config", "sasl.mechanism", "security.protocol"}

// DefaultAllowlist is the allowlist of Sluice's default policy (Allowlist):
// the consumer settings Sluice applied before it had a policy, so a
// connector that used them keeps working unchanged, and nothing more.
var DefaultAllowlist = []string{"group.id", "auto.offset.reset", "session.timeout.ms", "heartbeat.interval.ms"}

// Policy judges a connector's overrides.
type Policy struct {
	name      string
	allowlist []string
}

// ParsePolicy reads --connector-client-config-override-policy (any case)
// and, for Allowlist, its allowlist of client config names (group.id,
// not consumer.override.group.id), as KIP-1188 defines them. Another
// policy ignores the allowlist, as Kafka Connect's do (its flag has a
// default).
func ParsePolicy(name string, allowlist []string) (Policy, error) {
	for _, p := range []string{PolicyNone, PolicyAll, PolicyAllowlist, PolicyPrincipal} {
		if strings.EqualFold(name, p) {
			pol := Policy{name: p}
			switch p {
			case PolicyAllowlist:
				pol.allowlist = slices.Clone(allowlist)
			case PolicyPrincipal:
				pol.allowlist = principalKeys
			}
			return pol, nil
		}
	}
	return Policy{}, fmt.Errorf("unknown client config override policy %q: use None, All, Allowlist or Principal", name)
}

// Name is the policy's name, as Kafka Connect's messages give it.
func (p Policy) Name() string { return p.name }

// allows reports whether the policy lets a connector override name.
func (p Policy) allows(name string) bool {
	switch p.name {
	case PolicyAll:
		return true
	case PolicyAllowlist, PolicyPrincipal:
		return slices.Contains(p.allowlist, name)
	}
	return false
}

// Overrides returns a config's overrides of client c, by the client
// config's own name.
func Overrides(config map[string]string, c Client) map[string]string {
	out := map[string]string{}
	for k, v := range config {
		if name, ok := strings.CutPrefix(k, string(c)); ok && name != "" {
			out[name] = v
		}
	}
	return out
}

// Check returns, for each override key of config (with its prefix) that
// may not be used, why: the policy does not allow it (Kafka Connect's
// message), the framework owns it, or Sluice's clients cannot apply it.
// exactlyOnce says whether the cluster runs sources exactly once.
func (p Policy) Check(config map[string]string, exactlyOnce bool) map[string]string {
	out := map[string]string{}
	for _, c := range Clients {
		ov := Overrides(config, c)
		for _, name := range slices.Sorted(maps.Keys(ov)) {
			key := string(c) + name
			switch {
			case !p.allows(name):
				out[key] = fmt.Sprintf("The '%s' policy does not allow '%s' to be overridden in the connector configuration.", p.name, name)
			case owned(c, name, exactlyOnce) != "" && !isFrameworks(name, ov[name]):
				out[key] = fmt.Sprintf("%s cannot be overridden, under any policy: %s", key, owned(c, name, exactlyOnce))
			case !supported(c, name) && !isFrameworks(name, ov[name]):
				out[key] = fmt.Sprintf("%s is not a setting Sluice's %s client applies; it applies %s", key, c.name(), strings.Join(supportedNames(c), ", "))
			}
		}
	}
	return out
}

// owned says why the framework owns a client setting ("" when it does
// not).
func owned(c Client, name string, exactlyOnce bool) string {
	switch name {
	case "transactional.id", "transaction.timeout.ms", "enable.idempotence":
		return "Sluice sets " + name + " itself; a transactional id a connector chose could fence another connector's task or the leader"
	case "group.instance.id":
		return "Sluice gives each sink task its static member id; one a connector chose could fence another connector's task"
	case "client.id":
		return "Sluice names each client after its connector and task, which its logs, metrics and quotas rely on"
	case "enable.auto.commit", "key.deserializer", "value.deserializer", "key.serializer", "value.serializer":
		return "the framework commits offsets and converts records itself"
	case "isolation.level":
		if exactlyOnce || c == Consumer {
			return "sinks read committed records only, so that an aborted exactly-once transaction is never delivered"
		}
	}
	return ""
}

// frameworkValues are the values the framework sets itself of keys it
// owns: an override that asks for the same changes nothing, and is taken.
var frameworkValues = map[string]string{"isolation.level": "read_committed", "enable.auto.commit": "false", "enable.idempotence": "true"}

// isFrameworks reports whether value is what the framework sets name to.
func isFrameworks(name, value string) bool {
	v, ok := frameworkValues[name]
	return ok && strings.EqualFold(strings.TrimSpace(value), v)
}
