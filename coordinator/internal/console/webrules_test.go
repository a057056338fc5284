package console

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// embeddedScripts is every embedded JavaScript module by its path under
// web/.
func embeddedScripts(t *testing.T) map[string]string {
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

// TestModulesNeverParseHTML holds the console to its rules: data lands in
// the page as text only (a connector's name or config may hold anything),
// and nothing needs 'unsafe-eval' or 'unsafe-inline' under the
// Content-Security-Policy.
func TestModulesNeverParseHTML(t *testing.T) {
	banned := []struct {
		re  *regexp.Regexp
		why string
	}{
		{regexp.MustCompile(`\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write`), "parses HTML: build the DOM with h() from dom.js"},
		{regexp.MustCompile(`\beval\s*\(|new\s+Function\s*\(`), "evaluates code, which the Content-Security-Policy forbids"},
		{regexp.MustCompile(`setAttribute\(\s*'style'|\bstyle:\s*['"\x60]`), "sets an inline style attribute, which the Content-Security-Policy forbids: use a class"},
		{regexp.MustCompile(`\bon(?:click|change|input|submit|load|error|focus|blur|key[a-z]+|mouse[a-z]+):\s*['"\x60]|setAttribute\(\s*'on[a-z]+'`), "sets an inline event handler, which the Content-Security-Policy forbids"},
	}
	for p, src := range embeddedScripts(t) {
		for _, b := range banned {
			if loc := b.re.FindStringIndex(src); loc != nil {
				line := strings.Count(src[:loc[0]], "\n") + 1
				t.Errorf("%s:%d %s", p, line, b.why)
			}
		}
	}
}
