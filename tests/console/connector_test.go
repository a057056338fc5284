package console

import (
	"fmt"
	"testing"

	"github.com/sluice-io/sluice/sluicetest/wait"
)

// fileSourceClass is the built-in file source's class, as the create
// form's plugin list offers it.
const fileSourceClass = "org.apache.kafka.connect.file.FileStreamSourceConnector"

// choose picks value in the select matching css, as a user's choice does:
// the value, then the change event.
func (p *tab) choose(css, value string) {
	p.t.Helper()
	p.waitJS("the select "+css, fmt.Sprintf(`[...(document.querySelector(%s) || {options: []}).options].some(o => o.value === %s)`, js(css), js(value)))
	evalJS[bool](p, fmt.Sprintf(`(() => { const s = document.querySelector(%s); s.focus(); s.value = %s;
		s.dispatchEvent(new Event('input', {bubbles: true})); s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`, js(css), js(value)))
}

// TestCreateFileSourceThroughForm: an operator opens New connector, picks
// the file source, names it and gives its file but no topic: Create shows
// the validate endpoint's error on the topic's field and creates nothing;
// with a topic it is created, the connector's page opens and shows it
// RUNNING as its task starts, without a reload; Stop stops it.
func TestCreateFileSourceThroughForm(t *testing.T) {
	c := startCluster(t, 1)
	c.writeLines(t, "in.txt", "alpha", "beta", "gamma")
	name, topic := c.Name("from-form"), c.Name("lines")

	p := openTab(t, c.URL)
	p.signIn(operator)
	p.open("/ui/")
	p.clickButton("main", "New connector")
	p.waitJS("the create page", `location.pathname === '/ui/new' && document.querySelector('#new-plugin')`)
	p.choose("#new-plugin", fileSourceClass)
	p.waitJS("the file source's settings", `document.querySelector('#new-file') && document.querySelector('#new-topic')`)
	p.typeInto("#new-name", name)
	p.typeInto("#new-file", "in.txt")
	p.clickButton("form.create", "Create connector")
	p.waitText("#new-error", "nothing was created")
	p.waitText("#new-topic-err", "topic")
	if !evalJS[bool](p, `document.querySelector('#new-topic').getAttribute('aria-invalid') === 'true'`) {
		p.failf("the topic's field is not marked invalid (aria-invalid)")
	}
	p.accessible("the create form with its errors shown")
	if r := c.Do("GET", "/connectors/"+name, nil); r.Status != 404 {
		t.Fatalf("a create the form refused made %s: GET answered %s", name, r)
	}

	p.typeInto("#new-topic", topic)
	p.waitJS("the topic's error to clear", `document.querySelector('#new-topic-err').hidden`)
	p.clickButton("form.create", "Create connector")
	p.waitJS("the connector's page", fmt.Sprintf(`location.pathname === %s`, js("/ui/connectors/"+name)))
	p.waitText("#conn-name", name)
	p.waitText("#conn-state", "running")
	c.WaitState(name, "RUNNING", 1, "RUNNING")
	wait.Eventually(p, stepTimeout, func() (bool, string) {
		n := len(c.ReadTopic(topic))
		return n == 3, fmt.Sprintf("the created source wrote %d records to %s, want the file's 3", n, topic)
	})

	p.click(`#conn-actions button[data-action=stop]`)
	p.waitText("#conn-state", "stopped")
	c.WaitState(name, "STOPPED", 0, "")
}
