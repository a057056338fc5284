package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/cmd/sluice/internal/clidoc"
	goldenfile "github.com/sluice-io/sluice/cmd/sluice/internal/golden"
)

// cliDoc is the CLI's guide and reference.
var cliDoc = filepath.Join("..", "..", "docs", "cli.md")

// TestCLIReference: docs/cli.md's reference section is the one the
// command tree generates (go test -run TestCLIReference -update rewrites
// it).
func TestCLIReference(t *testing.T) {
	var ref strings.Builder
	clidoc.Reference(&ref, newApp())
	doc, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := clidoc.Splice(string(doc), ref.String())
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.File(t, cliDoc, want)
}
