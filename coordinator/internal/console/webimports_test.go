package console

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"
)

// Static imports of the console's modules: `import { a, b as c } from
// './x.js';` (possibly over several lines) and `import * as x from …`.
var (
	importRE     = regexp.MustCompile(`(?s)\bimport\s+(\{[^}]*\}|\*\s+as\s+\w+)\s+from\s+'([^']+)'`)
	exportFuncRE = regexp.MustCompile(`(?m)^export\s+(?:async\s+)?(?:function\*?|const|let|var|class)\s+([A-Za-z_$][\w$]*)`)
	exportListRE = regexp.MustCompile(`(?m)^export\s*\{([^}]*)\}`)
)

// TestModulesImportWhatTheirModulesExport reads every embedded script and
// checks that each static import names a module the console ships and,
// for named imports, a name that module exports. A browser refuses to
// run a module with either mistake, and the console's page is then blank
// without an error anywhere a user sees it.
func TestModulesImportWhatTheirModulesExport(t *testing.T) {
	web, err := fs.Sub(files, "web")
	if err != nil {
		t.Fatal(err)
	}
	exports := map[string]map[string]bool{}
	sources := map[string]string{}
	err = fs.WalkDir(web, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") {
			return err
		}
		b, err := fs.ReadFile(web, p)
		if err != nil {
			return err
		}
		src := string(b)
		sources[p] = src
		names := map[string]bool{}
		for _, m := range exportFuncRE.FindAllStringSubmatch(src, -1) {
			names[m[1]] = true
		}
		for _, m := range exportListRE.FindAllStringSubmatch(src, -1) {
			for _, part := range strings.Split(m[1], ",") {
				if f := strings.Fields(part); len(f) > 0 {
					names[f[len(f)-1]] = true // `a` or `a as b`: b is exported
				}
			}
		}
		exports[p] = names
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sources) < 5 {
		t.Fatalf("found %d scripts in the embedded console; want its modules", len(sources))
	}
	checked := 0
	for p, src := range sources {
		for _, m := range importRE.FindAllStringSubmatch(src, -1) {
			target := path.Clean(path.Join(path.Dir(p), m[2]))
			names, ok := exports[target]
			if !ok {
				t.Errorf("%s imports %q: the console has no %s", p, m[2], target)
				continue
			}
			checked++
			if !strings.HasPrefix(m[1], "{") {
				continue
			}
			for _, part := range strings.Split(strings.Trim(m[1], "{} \n"), ",") {
				f := strings.Fields(part)
				if len(f) == 0 {
					continue
				}
				if !names[f[0]] {
					t.Errorf("%s imports %s from %s, which does not export it", p, f[0], target)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no import to check")
	}
}

// TestPagesExportRender checks that every page module exports the
// render(ctx) the router calls.
func TestPagesExportRender(t *testing.T) {
	pages, err := fs.Glob(files, "web/js/pages/*.js")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no page module embedded")
	}
	for _, p := range pages {
		b, err := fs.ReadFile(files, p)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`(?m)^export\s+async\s+function\s+render\s*\(`).Match(b) {
			t.Errorf("%s does not export async function render(ctx)", p)
		}
	}
}
