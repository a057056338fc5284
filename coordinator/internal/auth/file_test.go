package auth

import (
	"os"
	"strings"
	"testing"
)

// TestDocsExampleParses checks the auth file example of
// docs/security.md is one the coordinator takes.
func TestDocsExampleParses(t *testing.T) {
	data, err := os.ReadFile("../../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	// The page has other YAML (Kubernetes manifests): the example is the
	// block that starts with the auth file's one field.
	var example string
	for rest, ok := string(data), true; ok && example == ""; {
		var block string
		if _, rest, ok = strings.Cut(rest, "```yaml\n"); ok {
			block, rest, _ = strings.Cut(rest, "```")
			if strings.HasPrefix(strings.TrimLeft(block, "# \n"), "principals:") || strings.Contains(block, "\nprincipals:") {
				example = block
			}
		}
	}
	if example == "" {
		t.Fatal("no auth file example (a yaml block with principals:) in docs/security.md")
	}
	f, err := ParseFile([]byte(example))
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
