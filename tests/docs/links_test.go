package docs

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// repoRoot is the repository's root directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// TestDocsLinksResolve: every relative link of README.md and docs/*.md
// leads to a file of the repository, and every #fragment to a heading or
// anchor of the Markdown file it names.
func TestDocsLinksResolve(t *testing.T) {
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(files) < 10 {
		t.Fatalf("docs/*.md: %d files (%v)", len(files), err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	links := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		links += len(Links(string(data)))
		broken, err := Broken(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range broken {
			t.Error(strings.TrimPrefix(b, root+string(filepath.Separator)))
		}
	}
	// The documents link to each other a lot: a parser that found none
	// would pass vacuously.
	if links < 50 {
		t.Fatalf("found %d links in %d documents: the parser misses them", links, len(files))
	}
}

// TestBrokenFindsDeadLinks: a missing file and a missing anchor are
// reported, with their line; links in code, absolute URLs, directories,
// existing anchors (repeated headings numbered as GitHub numbers them,
// explicit HTML anchors) and reference definitions are read as GitHub
// reads them.
func TestBrokenFindsDeadLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("other.md", "# Other\n\n## Set up `sluice` (the CLI)\n\n## Notes\n\n## Notes\n\n<a id=\"explicit\"></a>\n")
	write("sub/file.txt", "x")
	doc := write("doc.md", strings.Join([]string{
		"# Top",
		"[ok](other.md) [ok](other.md#set-up-sluice-the-cli) [ok](other.md#notes-1) [ok](other.md#explicit)",
		"[ok](#top) [ok](sub/) [ok](sub/file.txt) [web](https://example.com/nope.md) ![img](sub/file.txt \"title\")",
		"`[not a link](nothing.md)`",
		"```",
		"[not a link](nothing.md)",
		"```",
		"[gone](gone.md)",
		"[anchor](other.md#notes-2) [self](#nope)",
		"[ref]: missing.md",
	}, "\n"))
	broken, err := Broken(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		doc + ":8: gone.md: no such file",
		doc + `:9: other.md#notes-2: other.md has no heading or anchor "notes-2"`,
		doc + `:9: #nope: doc.md has no heading or anchor "nope"`,
		doc + ":10: missing.md: no such file",
	}
	if strings.Join(broken, "\n") != strings.Join(want, "\n") {
		t.Fatalf("broken:\n%s\nwant:\n%s", strings.Join(broken, "\n"), strings.Join(want, "\n"))
	}
}

// TestSlug: headings become GitHub's anchors.
func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Operating a fleet":                  "operating-a-fleet",
		"An agent's memory and the GC":       "an-agents-memory-and-the-gc",
		"5. Records only coordinators write": "5-records-only-coordinators-write",
		"`GET /` and [links](x.md)":          "get--and-links",
		"Health-gated config rollouts":       "health-gated-config-rollouts",
		"snake_case — and an em dash":        "snake_case--and-an-em-dash",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
