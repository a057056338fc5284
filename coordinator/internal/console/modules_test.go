package console

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"
)

// The console has no build step: a module that imports a file or a name
// that does not exist breaks only in the browser, at the page that loads
// it. These tests read the embedded modules as the browser would resolve
// them.

var (
	// importRe matches a static import: its names (if any) and its path.
	importRe = regexp.MustCompile(`(?m)^import\s+(?:\{([^}]*)\}\s+from\s+|\*\s+as\s+\w+\s+from\s+|\w+\s+from\s+)?'([^']+)';`)
	exportRe = regexp.MustCompile(`(?m)^export\s+(?:async\s+)?(?:function\*?|const|let|class)\s+([A-Za-z_$][\w$]*)`)
)

// modules is every embedded JavaScript module by its path under web/.
func modules(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := fs.WalkDir(files, "web", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") {
			return err
		}
		b, err := fs.ReadFile(files, p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatalf("reading the embedded modules: %v", err)
	}
	if len(out) == 0 {
		t.Fatal("no module is embedded")
	}
	return out
}

func TestModulesImportWhatExists(t *testing.T) {
	mods := modules(t)
	exports := map[string]map[string]bool{}
	for p, src := range mods {
		exports[p] = map[string]bool{}
		for _, m := range exportRe.FindAllStringSubmatch(src, -1) {
			exports[p][m[1]] = true
		}
	}
	for p, src := range mods {
		for _, m := range importRe.FindAllStringSubmatch(src, -1) {
			target := path.Join(path.Dir(p), m[2])
			ex, ok := exports[target]
			if !ok {
				t.Errorf("%s imports %s: no such module is embedded", p, m[2])
				continue
			}
			for _, name := range strings.Split(m[1], ",") {
				name = strings.TrimSpace(name)
				if before, _, found := strings.Cut(name, " as "); found {
					name = strings.TrimSpace(before)
				}
				if name != "" && !ex[name] {
					t.Errorf("%s imports %s from %s, which does not export it", p, name, m[2])
				}
			}
		}
	}
}

// TestModulesNeverParseHTML holds the console to its rules: data lands in
// the page as text only (a connector's name or config may hold anything),
// and nothing needs 'unsafe-eval' or 'unsafe-inline' under the
// Content-Security-Policy.
func TestModulesNeverParseHTML(t *testing.T) {
	banned := []struct{ re, why string }{
		{`\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write`, "parses HTML: build the DOM with h() from dom.js"},
		{`\beval\s*\(|new\s+Function\s*\(`, "evaluates code, which the Content-Security-Policy forbids"},
		{`setAttribute\(\s*'style'|\bstyle:\s*['"\x60]`, "sets an inline style attribute, which the Content-Security-Policy forbids: use a class"},
		{`\bon[a-z]+:\s*['"\x60]|setAttribute\(\s*'on[a-z]+'`, "sets an inline event handler, which the Content-Security-Policy forbids"},
	}
	for p, src := range modules(t) {
		for _, b := range banned {
			if loc := regexp.MustCompile(b.re).FindStringIndex(src); loc != nil {
				line := strings.Count(src[:loc[0]], "\n") + 1
				t.Errorf("%s:%d %s", p, line, b.why)
			}
		}
	}
}
