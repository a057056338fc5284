package console

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp/kb"
)

// maxTabs bounds how far tabTo walks the focus order: a page whose control
// is further away than this is not usable by keyboard anyway.
const maxTabs = 60

// tabTo presses Tab until the focused element satisfies cond (a JavaScript
// expression over the element e), and fails naming what had the focus on
// the way when it never does.
func (p *tab) tabTo(what, cond string) {
	p.t.Helper()
	test := fmt.Sprintf(`(e => !!e && e !== document.body && (%s))(document.activeElement)`, cond)
	var path []string
	for i := 0; i < maxTabs; i++ {
		if evalJS[bool](p, test) {
			return
		}
		p.keys(kb.Tab)
		path = append(path, evalJS[string](p, `(e => e ? e.tagName.toLowerCase() + (e.getAttribute('aria-label') ? '[' + e.getAttribute('aria-label') + ']' : '') + ' ' + (e.innerText || e.value || '').trim().slice(0, 30) : 'nothing')(document.activeElement)`))
	}
	p.failf("Tab never reached %s in %d presses; the focus went through %q", what, maxTabs, path)
}

// TestKeyboardOnlyBulkPause: the whole flow by keyboard alone — sign in,
// search, select the page, pause, confirm, close the results — with Tab,
// typing, Space and Enter; the REST API then shows the connectors PAUSED.
func TestKeyboardOnlyBulkPause(t *testing.T) {
	c := startCluster(t, 1)
	c.needFleet(t)
	matching, other := bulkFleet(t, c)

	p := openTab(t, c.URL)
	p.open("/ui/")
	p.waitJS("the sign-in form", `document.querySelector('form.signin')`)
	// The form puts the focus on its first field.
	if !evalJS[bool](p, `document.activeElement === document.querySelector('input[name=user]')`) {
		p.failf("the sign-in page does not focus the user field")
	}
	p.keys(operator.name)
	p.tabTo("the password field", `e.name === 'password'`)
	p.keys(operator.password + kb.Enter)
	p.waitText("#who .user", "User otto")
	p.waitText("table.fleet tbody", other)

	p.tabTo("the search box", `e.name === 'q'`)
	p.keys("orders")
	p.waitJS("the search to leave three rows", `document.querySelectorAll('table.fleet tbody tr').length === 3`)
	p.tabTo("the select-all checkbox", `e.matches('table.fleet thead input[type=checkbox]')`)
	p.keys(" ")
	p.waitText(".bulk", "3 selected")
	p.tabTo("the bulk Pause button", `e.matches('.bulk button') && e.textContent.trim() === 'Pause'`)
	p.keys(kb.Enter)
	p.waitText("dialog.modal h2", "Pause 3 connectors?")
	// The dialog puts the focus on its action; Enter confirms.
	if got := evalJS[string](p, `document.activeElement.textContent.trim()`); got != "Pause 3" {
		p.failf("the confirmation focuses %q, not its Pause 3 button", got)
	}
	p.keys(kb.Enter)
	p.waitText("dialog.modal", "3 of 3 done.")
	p.tabTo("the Close button", `e.matches('dialog.modal button') && e.textContent.trim() === 'Close'`)
	p.keys(kb.Enter)
	p.waitJS("the dialog to close", `!document.querySelector('dialog.modal')`)
	for _, n := range matching {
		c.WaitState(n, "PAUSED", 1, "PAUSED")
	}
	if st, _ := c.Status(other); st.Connector.State != "RUNNING" {
		t.Fatalf("%s, outside the search, is %s, want RUNNING", other, st.Connector.State)
	}
}
