package auth

import (
	"os"
	"path"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/coordinator/internal/tenants"
)

// yamlBlocks are the yaml code blocks of a Markdown page.
func yamlBlocks(page string) []string {
	var out []string
	for rest, ok := page, true; ok; {
		var block string
		if _, rest, ok = strings.Cut(rest, "```yaml\n"); ok {
			block, rest, _ = strings.Cut(rest, "```")
			out = append(out, block)
		}
	}
	return out
}

// TestDocsExampleParses checks the auth file example of
// docs/security.md is one the coordinator takes.
func TestDocsExampleParses(t *testing.T) {
	data, err := os.ReadFile("../../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	// The page has other YAML (Kubernetes manifests, the tenants file):
	// the auth file examples are the blocks with its one field. Every one
	// must parse, its grants over tenants those of the tenants example;
	// the one of alice is the roles example.
	blocks := yamlBlocks(string(data))
	var examples []string
	var tenantsExample string
	for _, block := range blocks {
		switch {
		case strings.HasPrefix(strings.TrimLeft(block, "# \n"), "principals:") || strings.Contains(block, "\nprincipals:"):
			examples = append(examples, block)
		case strings.Contains(block, "\ntenants:"):
			tenantsExample = block
		}
	}
	if len(examples) < 2 || tenantsExample == "" {
		t.Fatalf("%d auth file examples, tenants example %v, in docs/security.md", len(examples), tenantsExample != "")
	}
	ts, err := tenants.Parse([]byte(tenantsExample))
	if err != nil {
		t.Fatalf("the tenants example does not parse: %v", err)
	}
	roles := ""
	for _, example := range examples {
		if strings.Contains(example, "name: alice") {
			roles = example
		}
		f, err := ParseFile([]byte(example))
		if err == nil {
			err = f.ExpandTenants(ts.ConnectorPatterns)
		}
		if err != nil {
			t.Errorf("an auth file example does not parse: %v\n%s", err, example)
		}
	}
	f, err := ParseFile([]byte(roles))
	if err != nil {
		t.Fatalf("the example does not parse: %v", err)
	}
	if len(f.Entries) != 3 || !f.Entries[2].ClientCertificate || len(f.Entries[1].Grants) != 2 {
		t.Errorf("entries %+v", f.Entries)
	}
	p := f.Entries[1].principal(ViaToken)
	if !p.Allows(RoleOperator, "team-a-orders") || p.Allows(RoleOperator, "team-b-orders") || !p.Allows(RoleViewer, "team-b-orders") {
		t.Errorf("grants of %s: %+v", p.Name, p.Grants)
	}
}

// TestGrantsOverTenants: a grant over tenants holds for their connectors,
// as the tenants file names them; an unknown tenant stops start-up naming
// the principal; a JWT's "role:@tenant" grants the same, and one naming an
// unknown tenant, or mixing tenants and patterns, grants nothing.
func TestGrantsOverTenants(t *testing.T) {
	tenants := func(name string) ([]string, bool) {
		if name == "team-a" {
			return []string{"team-a-*", "legacy-a"}, true
		}
		return nil, false
	}
	f, err := ParseFile([]byte("principals:\n  - {name: tom, token_sha256: \"" + strings.Repeat("ab", 32) + "\", grants: [{role: operator, tenants: [team-a]}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ExpandTenants(tenants); err != nil {
		t.Fatal(err)
	}
	// The tenant of a connector is the first whose patterns match: team-a-eu-x
	// is tenant team-a-eu's, though team-a's pattern matches it too.
	tenantOf := func(name string) (string, bool) {
		for _, tn := range []struct{ name, pattern string }{{"team-a-eu", "team-a-eu-*"}, {"team-a", "team-a-*"}, {"team-a", "legacy-a"}} {
			if ok, _ := path.Match(tn.pattern, name); ok {
				return tn.name, true
			}
		}
		return "", false
	}
	p := f.Entries[0].principal(ViaToken).WithTenancy(tenantOf)
	if !p.Allows(RoleOperator, "team-a-x") || !p.Allows(RoleOperator, "legacy-a") || p.Allows(RoleOperator, "team-b-x") ||
		p.Allows(RoleOperator, "team-a-eu-x") || p.Unrestricted(RoleViewer) || !p.HasRole(RoleOperator) {
		t.Errorf("grants %+v", p.Grants)
	}
	if f.Entries[0].principal(ViaToken).Allows(RoleOperator, "team-a-x") {
		t.Error("a grant over tenants covered a connector where no tenants are known")
	}
	if got := p.Grants[0].String(); got != "operator for tenants team-a" {
		t.Errorf("shown as %q", got)
	}
	f, _ = ParseFile([]byte("principals:\n  - {name: tom, token_sha256: \"" + strings.Repeat("ab", 32) + "\", grants: [{role: operator, tenants: [team-z]}]}\n"))
	if err := f.ExpandTenants(tenants); err == nil || !strings.Contains(err.Error(), `principal "tom": no tenant "team-z" in the tenants file`) {
		t.Errorf("unknown tenant: %v", err)
	}
	if _, err := ParseFile([]byte("principals:\n  - {name: tom, token_sha256: \"" + strings.Repeat("ab", 32) + "\", grants: [{role: operator, tenants: [a], connectors: [b]}]}\n")); err == nil ||
		!strings.Contains(err.Error(), "a grant is over connectors or over tenants, not both") {
		t.Errorf("mixed grant: %v", err)
	}
	grants := rolesFromClaim([]any{"operator:@team-a", "admin:@team-z", "admin:@team-a,b-*", "viewer"}, tenants)
	want := []string{"operator for tenants team-a", "viewer"}
	if len(grants) != len(want) {
		t.Fatalf("JWT grants %+v, want %v", grants, want)
	}
	for i, g := range grants {
		if g.String() != want[i] {
			t.Errorf("JWT grant %d: %s, want %s", i, g, want[i])
		}
	}
	if rolesFromClaim([]any{"admin:@team-a"}, nil) != nil {
		t.Error("a grant over a tenant without a tenants file granted something")
	}
}
