package tenancy

import (
	"testing"

	"github.com/sluice-io/sluice/shared/wire"
)

func TestPolicyChecks(t *testing.T) {
	p := &wire.TenantPolicy{Tenant: "team-a", Topics: []string{"team-a.*", "shared"}, Groups: []string{"connect-team-a-*"}}
	for topic, ok := range map[string]bool{"team-a.orders": true, "shared": true, "team-b.orders": false, "team-a": false} {
		if err := CheckTopic(p, topic); (err == nil) != ok {
			t.Errorf("topic %s: %v", topic, err)
		}
	}
	if err := CheckGroup(p, "connect-team-b-1"); err == nil || err.Error() != "consumer group 'connect-team-b-1' is not one of tenant team-a's groups (connect-team-a-*)" {
		t.Errorf("group: %v", err)
	}
	none := &wire.TenantPolicy{Topics: []string{}}
	if err := CheckTopic(none, "x"); err == nil || err.Error() != "topic 'x' may not be used: the connector's name matches no tenant, and tenancy is strict" {
		t.Errorf("strict, no tenant: %v", err)
	}
	if CheckTopic(nil, "anything") != nil || CheckGroup(nil, "anything") != nil {
		t.Error("no policy must allow everything")
	}
	if Fingerprint(nil) != "" || Fingerprint(p) == Fingerprint(none) || Fingerprint(p) != Fingerprint(&wire.TenantPolicy{Tenant: "team-a", Topics: []string{"team-a.*", "shared"}, Groups: []string{"connect-team-a-*"}}) {
		t.Error("fingerprints must follow the rules")
	}
}

func TestCheckPrincipal(t *testing.T) {
	p := &wire.TenantPolicy{Tenant: "team-a", KafkaPrincipal: "team-a"}
	if CheckPrincipal(p, "team-a") != nil || CheckPrincipal(&wire.TenantPolicy{Tenant: "x"}, "anyone") != nil || CheckPrincipal(nil, "anyone") != nil {
		t.Error("a principal the policy allows was refused")
	}
	if err := CheckPrincipal(p, "team-b"); err == nil || err.Error() != "SASL user 'team-b' is not tenant team-a's Kafka principal (team-a)" {
		t.Errorf("team-b: %v", err)
	}
}
