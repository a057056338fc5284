package console

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// stepTimeout bounds one step: a page shown, a button found, a text
// appearing. Live pages poll every 2 s; a loaded machine is slower.
const stepTimeout = 20 * time.Second

// tab is a browser tab on a cluster's console, in a browser context of its
// own (a user of their own: cookies are not shared between tabs). Each
// helper is a step: when one fails, the tab's screenshot and DOM are saved
// and the failure names where.
type tab struct {
	t    testing.TB
	ctx  context.Context
	base string
	// saved is the artifacts folder of this tab's failure, once saved.
	saved string
}

// openTab opens a tab on the console of the coordinator at base (its REST
// URL), at 1280×800.
func openTab(t testing.TB, base string) *tab {
	t.Helper()
	bctx := needBrowser(t)
	ctx, cancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
	p := &tab{t: t, ctx: ctx, base: strings.TrimSuffix(base, "/")}
	// Cleanups run last first: the artifacts are saved before the tab
	// closes, and the tab closes before the cluster stops.
	t.Cleanup(cancel)
	t.Cleanup(func() {
		if t.Failed() && p.saved == "" {
			if dir := p.saveArtifacts("at the end of the failed test"); dir != "" {
				t.Logf("console artifacts of the failed test: %s", dir)
			}
		}
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return p
}

// in is the tab as seen by the subtest t: its failures end t.
func (p *tab) in(t testing.TB) *tab {
	q := *p
	q.t, q.saved = t, ""
	return &q
}

// failf saves the tab's screenshot and DOM and ends the test with what
// failed and where they are.
func (p *tab) failf(format string, args ...any) {
	p.t.Helper()
	msg := fmt.Sprintf(format, args...)
	if dir := p.saveArtifacts(msg); dir != "" {
		msg += "\n\tscreenshot and DOM: " + dir
	}
	p.t.Fatalf("%s", msg)
}

// Fatalf lets a tab stand for the test in wait.Eventually: a wait that
// runs out saves the page too.
func (p *tab) Fatalf(format string, args ...any) {
	p.t.Helper()
	p.failf(format, args...)
}

// Helper marks the tab's callers as helpers (wait.T).
func (p *tab) Helper() { p.t.Helper() }

// saveArtifacts writes the page's screenshot (screenshot.png), its DOM
// (dom.html), its address and why (failure.txt) in a folder named after
// the test, and returns the folder ("" when nothing could be saved).
func (p *tab) saveArtifacts(why string) string {
	dir := filepath.Join(artifactsDir(), safeName(p.t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Logf("saving the console artifacts: %v", err)
		return ""
	}
	p.saved = dir
	// The step's own context may have run out: the saving gets its own.
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	if png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "screenshot.png"), png, 0o644) // best effort: the failure is reported either way
	} else {
		p.t.Logf("no screenshot: %v", err)
	}
	if dom, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`)); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "dom.html"), []byte(dom), 0o644) // best effort
	}
	where, _ := chromedp.Run(ctx, chromedp.Location())
	_ = os.WriteFile(filepath.Join(dir, "failure.txt"), []byte(fmt.Sprintf("%s\nat %s\n", why, where)), 0o644) // best effort
	return dir
}

// step runs actions within stepTimeout; what names the step in a failure.
func (p *tab) step(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.failf("%s: %v", what, err)
	}
}

// open shows the console page at path (e.g. "/ui/") and waits until its
// script replaced the "Loading…" placeholder.
func (p *tab) open(path string) {
	p.t.Helper()
	p.step("open "+path, chromedp.Navigate(p.base+path))
	p.waitJS("the page "+path+" to render", `document.querySelector('#main') && !document.querySelector('#main > p.muted:only-child')`)
}

// waitJS waits until the JavaScript expression cond is true.
func (p *tab) waitJS(what, cond string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(stepTimeout)))
	if err != nil {
		p.failf("waiting for %s: %v", what, err)
	}
}

// js is a Go string as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// visibleText is a JavaScript expression: the first element matching css
// whose visible text contains text (null until there is one).
func visibleText(css, text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll(%s)].find(e => e.getClientRects().length && e.innerText.includes(%s)) || null`, js(css), js(text))
}

// waitText waits until an element matching css shows text.
func (p *tab) waitText(css, text string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf("%q in %s", text, css), visibleText(css, text))
}

// text is the visible text of the first element matching css.
func (p *tab) text(css string) string {
	p.t.Helper()
	return evalJS[string](p, fmt.Sprintf(`(document.querySelector(%s) || {innerText: ''}).innerText`, js(css)))
}

// button is a JavaScript expression: the visible, enabled button (or link
// styled as one) whose text is label, within the first element matching
// scope (null until there is one).
func button(scope, label string) string {
	return fmt.Sprintf(`(() => { const s = document.querySelector(%s); if (!s) return null;
		return [...s.querySelectorAll('button, a.button')].find(b => b.getClientRects().length && !b.disabled && b.textContent.trim() === %s) || null; })()`,
		js(scope), js(label))
}

// clickButton clicks, with the mouse, the button labelled label within
// scope (a CSS selector: "body" for anywhere).
func (p *tab) clickButton(scope, label string) {
	p.t.Helper()
	p.step(fmt.Sprintf("click the button %q in %s", label, scope), chromedp.Click(chromedp.JSPath(button(scope, label))))
}

// click clicks the first visible element matching css.
func (p *tab) click(css string) {
	p.t.Helper()
	p.step("click "+css, chromedp.Click(chromedp.CSS(css)))
}

// typeInto types text into the control matching css, key by key, after
// clearing what it holds.
func (p *tab) typeInto(css, text string) {
	p.t.Helper()
	p.step("type into "+css,
		chromedp.WaitVisible(chromedp.CSS(css)),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%s).value = ''`, js(css))),
		chromedp.SendKeys(chromedp.CSS(css), text))
}

// keys sends keys to whatever has the focus, as a keyboard would.
func (p *tab) keys(keys string) {
	p.t.Helper()
	p.step(fmt.Sprintf("press %q", keys), chromedp.KeyEvent(keys))
}

// evalJS evaluates expr in the page (awaiting a promise) and decodes its
// value.
func evalJS[T any](p *tab, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.failf("evaluating %s: %v", firstLine(expr), err)
	}
	return v
}

// location is the tab's address, without the coordinator's origin.
func (p *tab) location() string {
	p.t.Helper()
	return strings.TrimPrefix(evalJS[string](p, `location.href`), p.base)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + "…"
	}
	return s
}
