package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// move posts a move of name and checks the status.
func move(c *sluicetest.Cluster, name string, req map[string]any, status int) sluicetest.Response {
	c.T.Helper()
	return c.Must(status, "POST", "/sluice/connectors/"+name+"/move", req)
}

// TestMoveRunningFileSource renames a running file source after the first
// part of its file: the new connector goes on at the next line, so the
// sink's file holds every line exactly once, in order; the old name is gone
// with its positions. A second move comes right after a long stretch was
// appended to the file: wherever the source stopped (the test logs it),
// the next one goes on from there.
func TestMoveRunningFileSource(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	old, renamed, again, snk := c.Name("mv-src"), c.Name("mv-renamed"), c.Name("mv-again"), c.Name("mv-snk")
	topic := c.Name("mv")
	in, out := workPath(c, "mv-in.txt"), workPath(c, "mv-out.txt")
	first := lines(1, 200)
	writeLines(t, in, first)
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": old, "config": map[string]string{
		"connector.class": fileSourceClass, "file": "mv-in.txt", "topic": topic, "batch.size": "20"}})
	fileSink(c, snk, topic, "mv-out.txt", "")
	waitFile(t, out, first)
	r := move(c, old, map[string]any{"to": renamed}, http.StatusOK)
	for _, step := range []string{"stopping the old connector", "deleting the old connector", "starting the new connector in the old one's state"} {
		if !strings.Contains(string(r.Body), `{"step":"`+step+`","state":"done"}`) {
			t.Fatalf("move answered %s; want step %q done", r.Body, step)
		}
	}
	if want := fmt.Sprintf(`"offsets":[{"partition":{"filename":"mv-in.txt"},"offset":{"position":%d}}]`, bytesOf(first)); !strings.Contains(string(r.Body), want) {
		t.Fatalf("move answered %s; want %s", r.Body, want)
	}
	c.WaitState(renamed, "RUNNING", 1, "RUNNING")
	more := lines(201, 100)
	appendLines(t, in, more)
	waitFile(t, out, concat(first, more))
	c.Must(http.StatusNotFound, "GET", "/connectors/"+old, nil)
	coWantNameOffsets(c, old, fileSourceCfg("mv-in.txt", topic))
	h := history(c, renamed)
	if len(h) != 1 || h[0].Operation != "move" || h[0].Detail != "moved from "+old {
		t.Fatalf("history of the new connector: %+v", h)
	}
	if got := operations(history(c, old)); got != "move" {
		t.Fatalf("history of the old connector: %s", got)
	}

	long := lines(301, 20000)
	appendLines(t, in, long)
	r = move(c, renamed, map[string]any{"to": again}, http.StatusOK)
	t.Logf("second move: %s", r.Body)
	c.WaitState(again, "RUNNING", 1, "RUNNING")
	waitFile(t, out, concat(first, more, long))
	waitOffsets(c, again, []offset{filePos("mv-in.txt", bytesOf(concat(first, more, long)))})
}

// TestMoveCopyAndSink: a copy keeps the old connector, stopped, with its
// positions; a sink's group position moves into the new connector's
// group, where it resumes.
func TestMoveCopyAndSink(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	src, cp := c.Name("cp-src"), c.Name("cp-copy")
	fileSource(c, src, "cp.txt", c.Name("cp"), "STOPPED")
	patch(t, c, src, body(filePos("cp.txt", 12)), http.StatusOK, msgAlterDefinite)
	r := move(c, src, map[string]any{"to": cp, "copy": true, "config": map[string]string{"tasks.max": "1", "topic": c.Name("cp2")}}, http.StatusOK)
	if !strings.Contains(string(r.Body), `{"step":"deleting the old connector","state":"skipped"}`) {
		t.Fatalf("copy answered %s", r.Body)
	}
	wantOffsets(c, src, []offset{filePos("cp.txt", 12)})
	wantOffsets(c, cp, []offset{filePos("cp.txt", 12)})
	var cfg map[string]string
	c.Must(http.StatusOK, "GET", "/connectors/"+cp+"/config", nil).JSON(t, &cfg)
	if cfg["topic"] != c.Name("cp2") || cfg["name"] != cp || cfg["file"] != "cp.txt" {
		t.Fatalf("config of the copy: %v", cfg)
	}
	c.WaitState(src, "STOPPED", 0, "")
	c.WaitState(cp, "STOPPED", 0, "")

	topic := c.Name("mvs")
	createTopic(c, topic, 1)
	vals := values("s", 10)
	c.Produce(topic, vals...)
	snk, moved := c.Name("mvs-old"), c.Name("mvs-new")
	fileSink(c, snk, topic, "mvs.txt", "STOPPED")
	patch(t, c, snk, body(sinkPos(topic, 0, 6)), http.StatusOK, msgAlterDefinite)
	move(c, snk, map[string]any{"to": moved}, http.StatusOK)
	wantOffsets(c, moved, []offset{sinkPos(topic, 0, 6)})
	if got := groupOffsets(c, "connect-"+snk); got != "" {
		t.Fatalf("the old sink's group kept %s", got)
	}
	c.Must(http.StatusAccepted, "PUT", "/connectors/"+moved+"/resume", nil)
	waitFile(t, workPath(c, "mvs.txt"), vals[6:])

	// A sink with its own group cannot take it along: the two would share
	// it. Given a group of its own, it moves with its positions.
	grouped, regrouped := c.Name("mvg-old"), c.Name("mvg-new")
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": grouped, "initial_state": "STOPPED", "config": map[string]string{
		"connector.class": fileSinkClass, "file": "mvg.txt", "topics": topic, "consumer.override.group.id": c.Name("shared-group")}})
	patch(t, c, grouped, body(sinkPos(topic, 0, 3)), http.StatusOK, msgAlterDefinite)
	shared := c.Do("POST", "/sluice/connectors/"+grouped+"/move", map[string]any{"to": regrouped})
	if shared.Status != http.StatusBadRequest || !strings.Contains(shared.Message(), "would share the consumer group "+c.Name("shared-group")) {
		t.Fatalf("moving a sink with consumer.override.group.id: %s", shared)
	}
	move(c, grouped, map[string]any{"to": regrouped, "config": map[string]string{"consumer.override.group.id": c.Name("own-group")}}, http.StatusOK)
	wantOffsets(c, regrouped, []offset{sinkPos(topic, 0, 3)})
	if got := groupOffsets(c, c.Name("own-group")); got != topic+"-0=3" {
		t.Fatalf("the new group holds %q", got)
	}
	if got := groupOffsets(c, c.Name("shared-group")); got != "" {
		t.Fatalf("the old group kept %q", got)
	}

	// Refusals: a taken name, the own name, an unknown connector, a kind
	// change; a dry run changes nothing.
	expect(t, c, "POST", "/sluice/connectors/"+src+"/move", map[string]any{"to": cp}, http.StatusConflict, "Connector "+cp+" already exists")
	expect(t, c, "POST", "/sluice/connectors/"+src+"/move", map[string]any{"to": src}, http.StatusBadRequest, "Connector "+src+" cannot be moved to its own name")
	expect(t, c, "POST", "/sluice/connectors/nope/move", map[string]any{"to": "x"}, http.StatusNotFound, msgNotFound("nope"))
	bad := c.Do("POST", "/sluice/connectors/"+src+"/move", map[string]any{"to": "x", "config": map[string]string{"connector.class": fileSinkClass, "topics": topic, "file": "x.txt"}})
	if bad.Status != http.StatusBadRequest || !strings.Contains(bad.Message(), "a move keeps the connector's kind") {
		t.Fatalf("a move that changes the kind: %s", bad)
	}
	plan := move(c, src, map[string]any{"to": c.Name("planned"), "dry_run": true}, http.StatusOK)
	if !strings.Contains(string(plan.Body), `"dry_run":true`) || !strings.Contains(string(plan.Body), `"position":12`) {
		t.Fatalf("dry run answered %s", plan.Body)
	}
	c.Must(http.StatusNotFound, "GET", "/connectors/"+c.Name("planned"), nil)
	wantOffsets(c, src, []offset{filePos("cp.txt", 12)})
}

// TestMoveFaults fails each step of a move of a running source in turn:
// every time the old connector is as it was — config, RUNNING, positions —
// and the new one does not exist, with no positions under its name.
func TestMoveFaults(t *testing.T) {
	t.Parallel()
	faults := &coFaults{}
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, Faults: faults})
	old := c.Name("mf")
	topic := c.Name("mf")
	writeLines(t, workPath(c, "mf.txt"), lines(1, 5))
	fileSource(c, old, "mf.txt", topic, "")
	c.WaitState(old, "RUNNING", 1, "RUNNING")
	want := []offset{filePos("mf.txt", bytesOf(lines(1, 5)))}
	waitOffsets(c, old, want)
	var config map[string]string
	c.Must(http.StatusOK, "GET", "/connectors/"+old+"/config", nil).JSON(t, &config)

	steps := []string{
		"stopping the old connector",
		"reading the old connector's positions",
		"creating the new connector at those positions",
		"writing the initial offsets",
		"writing the connector config",
		"removing the old connector's positions",
		"deleting the old connector",
		"starting the new connector in the old one's state",
	}
	for i, step := range steps {
		t.Run(step, func(t *testing.T) {
			c := on(c, t)
			to := c.Name(fmt.Sprintf("mf-new%d", i))
			faults.Fail(step)
			r := c.Do("POST", "/sluice/connectors/"+old+"/move", map[string]any{"to": to})
			faults.Fail()
			if r.Status != http.StatusInternalServerError || !strings.Contains(r.Message(), "is as it was and "+to+" does not exist") {
				t.Fatalf("move failing at %q: %s", step, r)
			}
			c.WaitState(old, "RUNNING", 1, "RUNNING")
			var now map[string]string
			c.Must(http.StatusOK, "GET", "/connectors/"+old+"/config", nil).JSON(t, &now)
			if fmt.Sprint(now) != fmt.Sprint(config) {
				t.Fatalf("config after the failed move: %v, was %v", now, config)
			}
			wantOffsets(c, old, want)
			c.Must(http.StatusNotFound, "GET", "/connectors/"+to, nil)
			coWantNameOffsets(c, to, fileSourceCfg("mf.txt", topic))
		})
	}
}
