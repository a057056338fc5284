package console

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/sluicetest/wait"
)

// sourcePosition is a file source's one position, as GET …/offsets has it
// (-1 when it has none).
func (c *consoleCluster) sourcePosition(t testing.TB, name string) int {
	t.Helper()
	var o struct {
		Offsets []struct {
			Offset struct {
				Position int `json:"position"`
			} `json:"offset"`
		} `json:"offsets"`
	}
	c.Do("GET", "/connectors/"+name+"/offsets", nil).JSON(t, &o)
	if len(o.Offsets) != 1 {
		return -1
	}
	return o.Offsets[0].Offset.Position
}

// TestOffsetEditDryRunApplyUndo: an admin opens a stopped file source's
// Offsets tab, edits its position, sees the dry run's diff — the partition
// changed from the position it read to the new one — applies it with a
// reason, and the REST API has the new position; then undoes it from the
// offsets history, again through a dry run and its diff, and the position
// is back.
func TestOffsetEditDryRunApplyUndo(t *testing.T) {
	c := startCluster(t, 1)
	c.writeLines(t, "in.txt", "alpha", "beta", "gamma") // 17 bytes: the position once read
	name := c.Name("src")
	c.create(t, name, fileSource("in.txt", c.Name("t")), "")
	wait.Eventually(t, stepTimeout, func() (bool, string) {
		pos := c.sourcePosition(t, name)
		return pos == 17, fmt.Sprintf("the source's position is %d, want 17", pos)
	})
	if r := c.Do("PUT", "/connectors/"+name+"/stop", nil); r.Status != 204 {
		t.Fatalf("stopping %s: %s", name, r)
	}
	c.WaitState(name, "STOPPED", 0, "")

	p := openTab(t, c.URL)
	p.signIn(admin)
	p.open("/ui/connectors/" + name + "/offsets")
	p.waitText("table[data-test=positions] tbody", `"position":17`)
	p.click("table[data-test=positions] tbody tr input[data-test=pick]")
	p.click("button[data-test=offsets-edit]")
	p.typeInto("textarea[data-test=edit-offset]", `{"position": 6}`)
	p.click("button[data-test=offsets-dry-run]")

	p.waitJS("the dry run's diff", `document.querySelector('dialog[data-test=flow] table[data-test=offsets-diff] tr[data-change=changed]')`)
	diff := p.text("dialog[data-test=flow] table[data-test=offsets-diff] tr[data-change=changed]")
	if !strings.Contains(diff, "17") || !strings.Contains(diff, "6") {
		p.failf("the dry run's changed row reads %q, want the position 17 → 6", diff)
	}
	if pos := c.sourcePosition(t, name); pos != 17 {
		t.Fatalf("the dry run moved the position to %d", pos)
	}
	p.accessible("the offsets change's review, its diff shown")
	p.typeInto("input[data-test=change-reason]", "skip alpha")
	p.click("button[data-test=change-apply]")
	p.waitJS("the change's result", `document.querySelector('[data-test=change-result]')`)
	p.click("button[data-test=change-close]")
	p.waitJS("the dialog to close", `!document.querySelector('dialog[data-test=flow]')`)
	if pos := c.sourcePosition(t, name); pos != 6 {
		t.Fatalf("after Apply the position is %d, want 6", pos)
	}
	p.waitText("table[data-test=positions] tbody", `"position":6`)

	p.waitText("table[data-test=history] tbody", "skip alpha")
	p.click("table[data-test=history] tbody tr[data-entry] button[data-test=history-undo]")
	p.waitJS("the undo's diff", `document.querySelector('dialog[data-test=flow] table[data-test=offsets-diff] tr[data-change=changed]')`)
	undo := p.text("dialog[data-test=flow] table[data-test=offsets-diff] tr[data-change=changed]")
	if !strings.Contains(undo, "17") {
		p.failf("the undo's dry run reads %q, want the position back to 17", undo)
	}
	p.click("button[data-test=change-apply]")
	p.waitJS("the undo's result", `document.querySelector('[data-test=change-result]')`)
	p.click("button[data-test=change-close]")
	if pos := c.sourcePosition(t, name); pos != 17 {
		t.Fatalf("after the undo the position is %d, want 17", pos)
	}
	p.waitText("table[data-test=positions] tbody", `"position":17`)
}
