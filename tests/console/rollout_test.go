package console

import (
	"fmt"
	"path/filepath"
	"testing"
)

// fileSink is the config of a FileStreamSink writing topic's records to
// file.
func fileSink(file, topic string) map[string]string {
	return map[string]string{"connector.class": "FileStreamSink", "file": file, "topics": topic, "tasks.max": "1"}
}

// TestRolloutPausesOnFailingBatch: an operator rolls a config patch out to
// three connectors, one a batch; the patch points a file into a directory
// that does not exist, which the file sink of batch 2 cannot write: the
// page previews the batches, then shows batch 1 pass its health gate,
// batch 2 fail, the rollout paused saying why, batch 3 untouched — live,
// without a reload.
func TestRolloutPausesOnFailingBatch(t *testing.T) {
	c := startCluster(t, 1)
	c.writeLines(t, "in.txt", "a")
	in := c.Name("sink-in")
	c.Produce(in, "one")
	dir := t.TempDir()
	first, sink, last := c.Name("ro-1"), c.Name("ro-2"), c.Name("ro-3")
	c.create(t, first, fileSource("in.txt", c.Name("t")), "")
	c.create(t, sink, fileSink(filepath.Join(dir, "out.txt"), in), "")
	c.create(t, last, fileSource("in.txt", c.Name("t")), "")
	for _, n := range []string{first, sink, last} {
		c.WaitState(n, "RUNNING", 1, "RUNNING")
	}
	missing := filepath.Join(dir, "missing", "out.txt")

	p := openTab(t, c.URL)
	p.signIn(operator)
	p.open("/ui/rollouts")
	p.click("#rollout-new")
	p.waitJS("the rollout form", `document.querySelector('form#rollout-form')`)
	p.typeInto("#rollout-match", c.Name("ro-*"))
	p.typeInto("#rollout-patch", fmt.Sprintf(`{"file": %s}`, js(missing)))
	p.typeInto("#rollout-batches", "1, 1, rest")
	p.typeInto("#rollout-running-for", "1s")
	p.click("#rollout-preview")
	p.waitText("#rollout-preview-result h2", "3 connectors in 3 batches")
	// Batch 1's diff is open: the file changes to the missing one.
	p.waitText("#rollout-preview-result", first)
	p.waitText("#rollout-preview-result", missing)
	for i := 1; i <= 3; i++ {
		p.waitText("#rollout-preview-result summary", fmt.Sprintf("Batch %d: 1 connector", i))
	}
	p.click("#rollout-create")
	p.waitText("dialog.modal h2", "Roll the patch out to 3 connectors?")
	p.clickButton("dialog.modal", "Start: 3 connectors")

	p.waitJS("the rollout's page", `/^\/ui\/rollouts\/[^/]+$/.test(location.pathname) && location.pathname !== '/ui/rollouts/new'`)
	p.waitText("[data-test=rollout-state]", "paused")
	p.waitText("#rollout-why", "batch 2 of 3 failed its health gate")
	states := evalJS[[]string](p, `[...document.querySelectorAll('section.fk-batch [data-test=batch-state]')].map(e => e.textContent.trim())`)
	if fmt.Sprint(states) != "[done failed pending]" {
		p.failf("the batches show %v, want [done failed pending]", states)
	}
	if evalJS[bool](p, `!document.querySelector('[data-test=rollout-resume]') || !document.querySelector('[data-test=rollout-abort]')`) {
		p.failf("a paused rollout offers no Resume and Abort to its operator")
	}
	p.accessible("a paused rollout's page")
	var cfg map[string]string
	c.Do("GET", "/connectors/"+last+"/config", nil).JSON(t, &cfg)
	if cfg["file"] != "in.txt" {
		t.Fatalf("batch 3's %s has file %q, want it untouched", last, cfg["file"])
	}
}
