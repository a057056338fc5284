package console

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// fetchJS is a JavaScript expression that sends a write from the page, as
// a forged script would, and resolves with {status, message}: the CSRF
// token is read from /ui/session when csrf is set.
func fetchJS(method, path string, csrf bool) string {
	return fmt.Sprintf(`(async () => {
		const headers = {'X-Sluice-Console': '1'};
		if (%t) headers['X-Sluice-CSRF'] = (await (await fetch('/ui/session')).json()).csrf;
		const r = await fetch(%s, {method: %s, headers, credentials: 'same-origin'});
		const text = await r.text();
		let message = text;
		try { message = JSON.parse(text).message; } catch (e) {}
		return {status: r.status, message: message || ''};
	})()`, csrf, js(path), js(method))
}

// answer is what fetchJS resolves with.
type answer struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// TestViewerHasNoWriteButtons: a viewer sees the fleet but no button that
// writes — no New connector, no bulk action on a selection — and a write
// forged from the viewer's page, with the session's CSRF token, is refused
// (403) and changes nothing.
func TestViewerHasNoWriteButtons(t *testing.T) {
	c := startCluster(t, 1)
	name := c.Name("src")
	c.writeLines(t, "in.txt", "a", "b")
	c.create(t, name, fileSource("in.txt", c.Name("t")), "")
	c.WaitState(name, "RUNNING", 1, "RUNNING")

	p := openTab(t, c.URL)
	c.needFleet(t)
	p.signIn(viewer)
	p.open("/ui/")
	p.waitText("table.fleet tbody", name)
	if n := evalJS[int](p, button("body", "New connector")+` ? 1 : 0`); n != 0 {
		p.failf("the viewer is shown a New connector button")
	}
	p.click(fmt.Sprintf(`table.fleet input[type=checkbox][aria-label=%s]`, js("Select "+name)))
	p.waitText(".bulk", "1 selected")
	labels := evalJS[[]string](p, `[...document.querySelectorAll('.bulk button')].map(b => b.textContent.trim())`)
	for _, l := range labels {
		switch l {
		case "Pause", "Resume", "Stop", "Restart failed tasks", "Delete":
			p.failf("the viewer is shown the bulk action %q (the bar holds %q)", l, labels)
		}
	}

	got := evalJS[answer](p, fetchJS("PUT", "/connectors/"+name+"/pause", true))
	if got.Status != 403 || !strings.Contains(got.Message, "User vera may not PUT /connectors/"+name+"/pause") {
		p.failf("a pause forged from the viewer's page answered %+v, want 403 naming vera", got)
	}
	if st, _ := c.Status(name); st.Connector.State != "RUNNING" {
		t.Fatalf("after the viewer's forged pause %s is %s, want RUNNING", name, st.Connector.State)
	}
}

// TestWriteNeedsCSRFToken: the session cookie alone does not make a
// write — another site's page can make the browser send the cookie, not
// read the token: without the X-Sluice-CSRF header, or with a wrong one,
// an operator's write is a 403 and nothing changes; with it, it goes
// through.
func TestWriteNeedsCSRFToken(t *testing.T) {
	c := startCluster(t, 1)
	name := c.Name("src")
	c.writeLines(t, "in.txt", "a", "b")
	c.create(t, name, fileSource("in.txt", c.Name("t")), "")
	c.WaitState(name, "RUNNING", 1, "RUNNING")

	p := openTab(t, c.URL)
	p.signIn(operator)
	got := evalJS[answer](p, fetchJS("PUT", "/connectors/"+name+"/pause", false))
	if got.Status != 403 || !strings.Contains(got.Message, "X-Sluice-CSRF") {
		p.failf("a pause without the CSRF token answered %+v, want 403 naming X-Sluice-CSRF", got)
	}
	wrong := evalJS[answer](p, fmt.Sprintf(`fetch(%s, {method: 'PUT', headers: {'X-Sluice-CSRF': 'forged'}}).then(async r => ({status: r.status, message: (await r.json()).message}))`,
		js("/connectors/"+name+"/pause")))
	if wrong.Status != 403 || !strings.Contains(wrong.Message, "does not match") {
		p.failf("a pause with a wrong CSRF token answered %+v, want 403", wrong)
	}
	if st, _ := c.Status(name); st.Connector.State != "RUNNING" {
		t.Fatalf("after the writes without a token %s is %s, want RUNNING", name, st.Connector.State)
	}
	ok := evalJS[answer](p, fetchJS("PUT", "/connectors/"+name+"/pause", true))
	if ok.Status != 202 {
		p.failf("the operator's pause with the CSRF token answered %+v, want 202", ok)
	}
	c.WaitState(name, "PAUSED", 1, "PAUSED")
}

// TestSessionCookieFlags: the session cookie is HttpOnly (no script of the
// page reads it) and SameSite=Strict (no other site's request carries it);
// not Secure over plain HTTP, where the browser would drop it.
func TestSessionCookieFlags(t *testing.T) {
	c := startCluster(t, 1)
	p := openTab(t, c.URL)
	p.signIn(admin)
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{c.URL + "/ui/"}})
	if err != nil {
		p.failf("reading the cookies over CDP: %v", err)
	}
	var found bool
	for _, ck := range res.Cookies {
		if ck.Name != "sluice_session" {
			continue
		}
		found = true
		if !ck.HTTPOnly {
			t.Errorf("the session cookie is not HttpOnly: %+v", ck)
		}
		if ck.SameSite != network.CookieSameSiteStrict {
			t.Errorf("the session cookie is SameSite=%q, want Strict", ck.SameSite)
		}
		if ck.Path != "/" {
			t.Errorf("the session cookie's path is %q, want / (the REST API's routes need it)", ck.Path)
		}
	}
	if !found {
		p.failf("no sluice_session cookie after sign-in; the browser has %+v", res.Cookies)
	}
	if cookies := evalJS[string](p, `document.cookie`); strings.Contains(cookies, "sluice_session") {
		t.Errorf("the page's script reads the session cookie: document.cookie = %q", cookies)
	}
}

// TestTeamSeesOnlyItsConnectors: an operator of team-a-* sees team a's
// connectors on the fleet home and none of another team's, and may act on
// its own: selecting one offers the bulk actions of an operator.
func TestTeamSeesOnlyItsConnectors(t *testing.T) {
	c := startCluster(t, 1)
	c.writeLines(t, "in.txt", "a")
	mine, theirs := "team-a-"+c.Name("src"), "team-b-"+c.Name("src")
	for _, n := range []string{mine, theirs} {
		c.create(t, n, fileSource("in.txt", c.Name("t")), "")
	}
	c.needFleet(t)

	p := openTab(t, c.URL)
	p.signIn(teamA)
	p.open("/ui/")
	p.waitText("table.fleet tbody", mine)
	if rows := evalJS[[]string](p, `[...document.querySelectorAll('table.fleet tbody tr')].map(r => r.innerText)`); len(rows) != 1 || strings.Contains(strings.Join(rows, "\n"), theirs) {
		p.failf("team a's operator sees the rows %q, want only %s", rows, mine)
	}
	p.click(fmt.Sprintf(`table.fleet input[type=checkbox][aria-label=%s]`, js("Select "+mine)))
	p.waitText(".bulk", "1 selected")
	for _, l := range []string{"Pause", "Resume", "Stop", "Restart failed tasks"} {
		p.waitJS("the bulk action "+l, button(".bulk", l))
	}
	if evalJS[bool](p, button(".bulk", "Delete")+` !== null`) {
		p.failf("an operator is offered Delete, which needs the admin role")
	}
}
