package console

import (
	"fmt"
	"testing"
)

// bulkFleet creates, as the admin, three running sources whose names
// share a word and one that does not, and returns their names.
func bulkFleet(t testing.TB, c *consoleCluster) (matching []string, other string) {
	t.Helper()
	c.writeLines(t, "in.txt", "a", "b")
	for i := 1; i <= 3; i++ {
		matching = append(matching, c.Name(fmt.Sprintf("orders-%d", i)))
	}
	other = c.Name("billing")
	for _, n := range append(append([]string{}, matching...), other) {
		c.create(t, n, fileSource("in.txt", c.Name("t")), "")
	}
	for _, n := range append(append([]string{}, matching...), other) {
		c.WaitState(n, "RUNNING", 1, "RUNNING")
	}
	return matching, other
}

// TestBulkPauseOverFilter: an operator filters the fleet by a search,
// selects every connector on the page, pauses them; the confirmation
// states the count, the results name each connector, and the REST API
// then shows exactly those connectors PAUSED.
func TestBulkPauseOverFilter(t *testing.T) {
	c := startCluster(t, 1)
	c.needFleet(t)
	matching, other := bulkFleet(t, c)

	p := openTab(t, c.URL)
	p.signIn(operator)
	p.open("/ui/")
	p.waitText("table.fleet tbody", other)
	p.typeInto(`input[name=q]`, "orders")
	p.waitJS("the search to leave the three orders connectors",
		fmt.Sprintf(`(() => { const rows = [...document.querySelectorAll('table.fleet tbody tr')].map(r => r.innerText);
			return rows.length === 3 && !rows.some(r => r.includes(%s)); })()`, js(other)))
	if q := evalJS[string](p, `new URLSearchParams(location.search).get('q')`); q != "orders" {
		p.failf("the address does not keep the search (q=%q): the filtered page has no deep link", q)
	}

	p.click(`table.fleet thead input[type=checkbox]`)
	p.waitText(".bulk", "3 selected")
	p.clickButton(".bulk", "Pause")
	p.waitText("dialog.modal h2", "Pause 3 connectors?")
	for _, n := range matching {
		p.waitText("dialog.modal .names", n)
	}
	p.clickButton("dialog.modal", "Pause 3")

	p.waitText("dialog.modal h2", "Pause: results")
	p.waitText("dialog.modal", "3 of 3 done.")
	for _, n := range matching {
		p.waitText("dialog.modal tbody", n)
	}
	p.clickButton("dialog.modal", "Close")
	p.waitJS("the dialog to close", `!document.querySelector('dialog.modal')`)

	for _, n := range matching {
		c.WaitState(n, "PAUSED", 1, "PAUSED")
	}
	if st, _ := c.Status(other); st.Connector.State != "RUNNING" {
		t.Fatalf("%s, outside the filter, is %s after the bulk pause, want RUNNING", other, st.Connector.State)
	}
	// Live: the page shows the new states without a reload.
	p.waitJS("the rows to show PAUSED", `[...document.querySelectorAll('table.fleet tbody tr')].every(r => r.innerText.toLowerCase().includes('paused'))`)
}
