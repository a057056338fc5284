package auth

import (
	"os"
	"strings"
	"testing"
)

// TestDocsExampleParses checks the auth file example of
// docs/security-rest.md is one the coordinator takes.
func TestDocsExampleParses(t *testing.T) {
	data, err := os.ReadFile("../../../docs/security-rest.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no yaml example in docs/security-rest.md")
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
