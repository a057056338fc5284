package console

import (
	"cmp"
	_ "embed"
	"fmt"
	"strings"
	"testing"
)

// axeSource is axe-core (testdata/axe: the version is in its first line,
// its licence beside it), vendored for these tests only: the console's
// binary does not embed it.
//
//go:embed testdata/axe/axe.min.js
var axeSource string

// violation is one rule axe-core found broken, with the elements that
// break it.
type violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	URL    string `json:"helpUrl"`
	Nodes  []struct {
		Target  []any  `json:"target"`
		Summary string `json:"failureSummary"`
	} `json:"nodes"`
}

// axe runs axe-core on the page as it is now and returns its serious and
// critical violations.
func (p *tab) axe() []violation {
	p.t.Helper()
	// The page's CSP forbids inline script; the DevTools protocol's
	// evaluation is not the page's script, and axe needs no eval.
	if evalJS[bool](p, `typeof window.axe === 'undefined'`) {
		evalJS[bool](p, axeSource+"\n;true")
	}
	all := evalJS[[]violation](p, `axe.run(document, {resultTypes: ['violations']}).then(r => r.violations)`)
	var bad []violation
	for _, v := range all {
		if v.Impact == "serious" || v.Impact == "critical" {
			bad = append(bad, v)
		}
	}
	return bad
}

// accessible fails the test when axe-core finds a serious or critical
// violation on the page as it is now; what names the page's state.
func (p *tab) accessible(what string) {
	p.t.Helper()
	if vs := p.axe(); len(vs) > 0 {
		p.failf("axe-core: %s has %d serious or critical violations:%s", what, len(vs), describe(vs))
	}
}

// describe prints violations for a failure message.
func describe(vs []violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "\n  [%s] %s: %s (%s)", v.Impact, v.ID, v.Help, v.URL)
		for _, n := range v.Nodes {
			fmt.Fprintf(&b, "\n    at %v: %s", n.Target, strings.ReplaceAll(n.Summary, "\n", " "))
		}
	}
	return b.String()
}

// consolePages are the console's pages by address, with the module that
// draws each (web/js/pages/<module>.js). A page whose module this build
// does not have yet is reported skipped, so that a page added to the
// console is checked as soon as it lands.
var consolePages = []struct{ path, module string }{
	{"/ui/", "home"},
	{"/ui/new", "create"},
	{"/ui/connectors/%s", "connector"},
	{"/ui/connectors/%s/config", "connector"},
	{"/ui/connectors/%s/offsets", "connector"},
	{"/ui/connectors/%s/topics", "connector"},
	{"/ui/connectors/%s/audit", "connector"},
	{"/ui/agents", "agents"},
	{"/ui/agents/agent-1", "agents"},
	{"/ui/rollouts", "rollouts"},
	{"/ui/rollouts/new", "rollouts"},
	{"/ui/maintenance", "maintenance"},
	{"/ui/audit", "audit"},
	{"/ui/migrate", "migrate"},
}

// TestAccessibility runs axe-core on the sign-in page and on every page of
// the console, signed in as the admin (who sees every button) over a
// fleet with a connector, and fails on any serious or critical violation.
func TestAccessibility(t *testing.T) {
	c := startCluster(t, 1)
	name := c.Name("src")
	c.writeLines(t, "in.txt", "a", "b")
	c.create(t, name, fileSource("in.txt", c.Name("t")), "")
	c.WaitState(name, "RUNNING", 1, "RUNNING")

	p := openTab(t, c.URL)
	p.open("/ui/signin")
	p.waitJS("the sign-in form", `document.querySelector('form.signin')`)
	// The check can fail: a control without a label, planted and removed,
	// is reported.
	evalJS[bool](p, `(() => { const i = document.createElement('input'); i.id = 'planted'; document.body.append(i); return true; })()`)
	if vs := p.axe(); !strings.Contains(describe(vs), "#planted") {
		p.failf("axe-core did not report an input without a label; it reported:%s", describe(vs))
	}
	evalJS[bool](p, `(document.getElementById('planted').remove(), true)`)
	p.accessible("the sign-in page")
	// The sign-in error, shown.
	p.typeInto("input[name=user]", admin.name)
	p.typeInto("input[name=password]", "wrong")
	p.clickButton("form", "Sign in")
	p.waitText("#signin-error", "refused")
	p.accessible("the sign-in page with its error")

	p.signIn(admin)
	for _, pg := range consolePages {
		path := pg.path
		if strings.Contains(path, "%s") {
			path = fmt.Sprintf(path, name)
		}
		t.Run(cmp.Or(strings.TrimPrefix(path, "/ui/"), "home"), func(t *testing.T) {
			p := p.in(t)
			if !p.hasModule(pg.module) {
				t.Skipf("this console has no page module %s.js yet", pg.module)
			}
			p.open(path)
			p.settle()
			p.accessible(path)
		})
	}
	// The home page with a selection, its bulk toolbar and a
	// confirmation open: the modal dialog is a page of its own to a
	// screen reader.
	t.Run("home/confirmation", func(t *testing.T) {
		p := p.in(t)
		p.open("/ui/")
		p.waitText("table.fleet tbody", name)
		p.click(`table.fleet thead input[type=checkbox]`)
		p.waitText(".bulk", "1 selected")
		p.accessible("the home page with a selection")
		p.clickButton(".bulk", "Delete")
		p.waitText("dialog.modal h2", "Delete 1 connector?")
		p.accessible("the delete confirmation")
		p.clickButton("dialog.modal", "Cancel")
		p.waitJS("the dialog to close", `!document.querySelector('dialog.modal')`)
		if r := c.Do("GET", "/connectors/"+name, nil); r.Status != 200 {
			t.Fatalf("after Cancel %s answers %s: the cancelled delete went through", name, r)
		}
	})
}

// hasModule reports whether the console serves the page module name.
func (p *tab) hasModule(name string) bool {
	p.t.Helper()
	return evalJS[int](p, fmt.Sprintf(`fetch('/ui/js/pages/%s.js', {method: 'HEAD'}).then(r => r.status)`, name)) == 200
}

// settle waits until the page has drawn its heading and nothing on it
// says "Loading…".
func (p *tab) settle() {
	p.t.Helper()
	p.waitJS("the page to finish loading", `document.querySelector('#main h1') && !/Loading…/.test(document.querySelector('#main').innerText)`)
}
