package httpapi

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the route table of docs/security.md from the code")

const (
	docsPath    = "../../../docs/security.md"
	tableBegin  = "<!-- route roles: generated from coordinator/internal/httpapi/routes.go; go test ./coordinator/internal/httpapi -run TestSecurityDocsTable -update-docs -->"
	tableEnd    = "<!-- end of route roles -->"
	tableHeader = "| route | least role | connector patterns apply | open with `--rest-auth-open-probes` |\n|---|---|---|---|\n"
)

// routeTable is the docs' table of every route and its least role.
func routeTable() string {
	var b strings.Builder
	b.WriteString(tableHeader)
	yes := func(v bool) string {
		if v {
			return "yes"
		}
		return "no"
	}
	for _, rt := range routes() {
		pattern := strings.Replace(rt.pattern, "{$}", "", 1)
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", pattern, rt.role, yes(rt.connectorScoped()), yes(probeOps[rt.op]))
	}
	return b.String()
}

// TestSecurityDocsTable checks docs/security.md lists every route
// with the role the code gives it.
func TestSecurityDocsTable(t *testing.T) {
	data, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	before, rest, ok1 := strings.Cut(doc, tableBegin+"\n")
	_, after, ok2 := strings.Cut(rest, tableEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s has no generated route table (markers %q … %q)", docsPath, tableBegin, tableEnd)
	}
	want := before + tableBegin + "\n" + routeTable() + tableEnd + after
	if want == doc {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(docsPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the route table of %s differs from the code; run with -update-docs. Want:\n%s", docsPath, routeTable())
}
