package console

import (
	"strings"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestSignInWithPassword: a user opens a deep link, is sent to the sign-in
// page, types a wrong password and sees the API's own message next to the
// form; with the right one they land on the page they asked for, signed
// in; Sign out ends the session: the console asks for a sign-in again.
func TestSignInWithPassword(t *testing.T) {
	c := startCluster(t, 1)
	p := openTab(t, c.URL)

	p.open("/ui/agents")
	p.waitJS("the sign-in form", `document.querySelector('form.signin input[name=user]')`)
	if loc := p.location(); !strings.HasPrefix(loc, "/ui/signin?next=%2Fui%2Fagents") {
		t.Fatalf("an anonymous visit to /ui/agents went to %s, not to the sign-in page with next=/ui/agents", loc)
	}

	// What the REST API answers to the wrong password is what the page
	// must show.
	want := `The Basic credentials were refused: unknown user "otto" or wrong password`
	p.typeInto("input[name=user]", operator.name)
	p.typeInto("input[name=password]", "not-"+operator.password)
	p.clickButton("form", "Sign in")
	p.waitText("#signin-error", want)
	if got := p.text("#signin-error"); got != want {
		p.failf("the sign-in error reads %q, want the API's message %q", got, want)
	}
	if evalJS[bool](p, `document.querySelector('#signin-error').getAttribute('role') === 'alert'`) != true {
		p.failf("the sign-in error is not announced (role=alert)")
	}

	p.typeInto("input[name=password]", operator.password)
	p.clickButton("form", "Sign in")
	p.waitText("#who .user", "User otto")
	p.waitJS("the agents page after sign-in", `location.pathname === '/ui/agents'`)

	session := evalJS[map[string]any](p, `fetch('/ui/session').then(r => r.json())`)
	if session["signed_in"] != true {
		p.failf("after sign-in GET /ui/session says %v", session)
	}

	p.clickButton("#who", "Sign out")
	p.waitJS("the sign-in page after sign-out", `location.pathname === '/ui/signin' && document.querySelector('form.signin')`)
	session = evalJS[map[string]any](p, `fetch('/ui/session').then(r => r.json())`)
	if session["signed_in"] != false {
		p.failf("after sign-out GET /ui/session says %v", session)
	}
	// The cookie is gone: the REST API no longer takes the browser for
	// otto.
	if status := evalJS[int](p, `fetch('/connectors', {headers: {'X-Sluice-Console': '1'}}).then(r => r.status)`); status != 401 {
		p.failf("GET /connectors after sign-out answered %d, want 401", status)
	}
	p.open("/ui/")
	p.waitJS("the sign-in page for a signed-out user", `location.pathname === '/ui/signin'`)
}

// TestSignInWithToken: a bearer token of the auth file, pasted on the
// token tab, signs its principal in.
func TestSignInWithToken(t *testing.T) {
	c := startCluster(t, 1)
	p := openTab(t, c.URL)
	p.open("/ui/signin")
	p.clickButton("form", "Token or JWT")
	p.typeInto("textarea[name=token]", "sluice_not-a-token")
	p.clickButton("form", "Sign in")
	p.waitText("#signin-error", "The bearer token was refused: it is no token of the auth file")

	p.typeInto("textarea[name=token]", c.token)
	p.clickButton("form", "Sign in")
	p.waitText("#who .user", "Token ci")
	p.waitJS("the home page", `location.pathname === '/ui/'`)
	if !strings.Contains(p.text("#who .user"), "Token ci") {
		p.failf("the header names %q, not the token's principal", p.text("#who .user"))
	}
}

// TestNoSignInWithAuthOff: with REST authentication off (make run) the
// console asks for no sign-in: the fleet home opens at once, says the
// access is open, and offers every action.
func TestNoSignInWithAuthOff(t *testing.T) {
	needBrowser(t)
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	p := openTab(t, c.URL)
	p.open("/ui/signin")
	p.waitJS("the fleet home instead of the sign-in page", `location.pathname === '/ui/' && document.querySelector('table.fleet')`)
	p.waitText("#who", "open access")
	p.waitJS("the New connector button", button("main", "New connector"))
	if status := evalJS[int](p, `fetch('/ui/session', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{"user": "x", "password": "y"}'}).then(r => r.status)`); status != 409 {
		p.failf("a sign-in with authentication off answered %d, want 409", status)
	}
}
