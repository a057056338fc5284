// Package tenancy applies a connector's tenant policy (wire.TenantPolicy):
// which topics and consumer groups its tasks may use. The coordinator
// checks a config against it when the config is written; the agent checks
// every record's topic, and the group, again as the tasks run — a
// transformation or a plugin picks topics per record, and a tenant's rules
// may change after the config was written.
package tenancy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/sluice-io/sluice/shared/wire"
)

// AllowsTopic reports whether p lets a connector use topic; a nil policy
// (no tenants) allows every topic.
func AllowsTopic(p *wire.TenantPolicy, topic string) bool {
	return p == nil || matchAny(p.Topics, topic)
}

// AllowsGroup reports whether p lets a sink use group.
func AllowsGroup(p *wire.TenantPolicy, group string) bool {
	return p == nil || matchAny(p.Groups, group)
}

// CheckTopic returns a *TopicError when p does not let a connector use
// topic.
func CheckTopic(p *wire.TenantPolicy, topic string) error {
	if AllowsTopic(p, topic) {
		return nil
	}
	return &TopicError{Tenant: p.Tenant, Topic: topic, Allowed: p.Topics}
}

// CheckGroup returns a *GroupError when p does not let a sink use group.
func CheckGroup(p *wire.TenantPolicy, group string) error {
	if AllowsGroup(p, group) {
		return nil
	}
	return &GroupError{Tenant: p.Tenant, Group: group, Allowed: p.Groups}
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// TopicError refuses a topic outside a tenant's topics.
type TopicError struct {
	Tenant, Topic string
	Allowed       []string
}

// Error names the topic and the tenant's allowed topics.
func (e *TopicError) Error() string {
	return refusal("topic", e.Topic, e.Tenant, "topics", e.Allowed)
}

// GroupError refuses a consumer group outside a tenant's groups.
type GroupError struct {
	Tenant, Group string
	Allowed       []string
}

// Error names the group and the tenant's allowed groups.
func (e *GroupError) Error() string {
	return refusal("consumer group", e.Group, e.Tenant, "groups", e.Allowed)
}

// refusal words a refused name: "topic 'x' is not one of tenant team-a's
// topics (team-a.*)"; for a connector of no tenant under strict tenancy,
// "topic 'x' may not be used: the connector's name matches no tenant, and
// tenancy is strict".
func refusal(what, name, tenant, kind string, allowed []string) string {
	if tenant == "" {
		return fmt.Sprintf("%s '%s' may not be used: the connector's name matches no tenant, and tenancy is strict", what, name)
	}
	list := strings.Join(allowed, ", ")
	if list == "" {
		list = "none"
	}
	return fmt.Sprintf("%s '%s' is not one of tenant %s's %s (%s)", what, name, tenant, kind, list)
}

// CheckPrincipal refuses a SASL user the policy's tenant does not let its
// connectors authenticate as: with a KafkaPrincipal, any other.
func CheckPrincipal(p *wire.TenantPolicy, user string) error {
	if p == nil || p.KafkaPrincipal == "" || user == p.KafkaPrincipal {
		return nil
	}
	return fmt.Errorf("SASL user '%s' is not tenant %s's Kafka principal (%s)", user, p.Tenant, p.KafkaPrincipal)
}

// Fingerprint identifies a policy's rules, for a task's config hash: a
// change of them restarts the task under the new rules. A nil policy has
// none ("").
func Fingerprint(p *wire.TenantPolicy) string {
	if p == nil {
		return ""
	}
	b, _ := json.Marshal(p) // fixed field order: the same rules give the same bytes
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
