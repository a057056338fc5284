package tenants

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/shared/wire"
)

const file = `strict: true
tenants:
  - name: team-a
    connectors: ["team-a-*"]
    topics: ["team-a.*"]
    groups: ["connect-team-a-*"]
    secrets: {paths: ["/etc/sluice/secrets/team-a"], env: ["TEAM_A_*"]}
    kafka_principal: User:team-a
  - name: ops
    connectors: ["*"]
`

func TestPolicy(t *testing.T) {
	ts, err := Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	want := &wire.TenantPolicy{Tenant: "team-a", Topics: []string{"team-a.*"}, Groups: []string{"connect-team-a-*"},
		SecretPaths: []string{"/etc/sluice/secrets/team-a"}, SecretEnv: []string{"TEAM_A_*"}, KafkaPrincipal: "team-a"}
	if got := ts.Policy("team-a-orders"); !reflect.DeepEqual(got, want) {
		t.Errorf("policy of team-a-orders: %+v", got)
	}
	// The first tenant in the file's order whose patterns match: ops
	// takes what team a does not. A tenant without topics uses none.
	if got := ts.Policy("billing"); got.Tenant != "ops" || len(got.Topics) != 0 || got.Topics == nil {
		t.Errorf("policy of billing: %+v", got)
	}
	if p, ok := ts.ConnectorPatterns("team-a"); !ok || !reflect.DeepEqual(p, []string{"team-a-*"}) {
		t.Errorf("patterns of team-a: %v %v", p, ok)
	}
	if _, ok := ts.ConnectorPatterns("nope"); ok {
		t.Error("an unknown tenant has patterns")
	}
	var none *Tenants
	if none.Policy("x") != nil {
		t.Error("no tenants file, yet a policy")
	}
	strict, _ := Parse([]byte("strict: true\ntenants: [{name: a, connectors: [a-*]}]\n"))
	if p := strict.Policy("b"); p == nil || p.Tenant != "" || len(p.Topics) != 0 {
		t.Errorf("strict, no tenant: %+v, want a policy that allows nothing", p)
	}
	lax, _ := Parse([]byte("tenants: [{name: a, connectors: [a-*]}]\n"))
	if p := lax.Policy("b"); p != nil {
		t.Errorf("not strict, no tenant: %+v, want none", p)
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "the file is empty",
		"tenants: []\n":          "line 1: tenants must be a non-empty list",
		"tenants: [{name: a}]\n": `line 1: tenant "a" needs connectors`,
		"tenants: [{name: a, connectors: [a-*], topic: [x]}]\n":                          `unknown field "topic"`,
		"tenants:\n  - {name: a, connectors: [a-*]}\n  - {name: a, connectors: [b-*]}\n": `line 3: tenant "a" is listed twice (first at line 2)`,
		"tenants: [{name: a, connectors: [\"[\"]}]\n":                                    `pattern "["`,
		"tenants: [{name: a, connectors: [a], secrets: {paths: [rel]}}]\n":               "secret path rel is not absolute",
		"strict: maybe\ntenants: [{name: a, connectors: [a]}]\n":                         "line 1: strict",
	} {
		_, err := Parse([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", in, err, want)
		}
	}
}
