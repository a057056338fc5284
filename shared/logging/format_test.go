package logging

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/shared/logging/logtest"
)

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"text": FormatText, "json": FormatJSON, " JSON ": FormatJSON, "Text": FormatText} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "logfmt", "yaml", "jsonl"} {
		if _, err := ParseFormat(in); err == nil || !strings.Contains(err.Error(), "text or json") {
			t.Errorf("ParseFormat(%q) = %v, want an error naming text and json", in, err)
		}
	}
}

// TestJSONLoggers: every record is one JSON object on its own line, with
// its time, level (log4j's name), message, logger and attributes; each
// named logger filters at its own level, and a level set at run time
// (/admin/loggers) takes effect on loggers made before.
func TestJSONLoggers(t *testing.T) {
	var out bytes.Buffer
	l := NewJSON(&out, slog.LevelInfo)
	tasks, herder := l.Logger(AgentTasks), l.Logger(Herder)

	tasks.Debug("hidden at INFO")
	tasks.Info("task started", "connector", "file-src", "task", 0)
	herder.Warn("quote \" and\nnewline", "err", "boom")
	if _, err := l.SetLevel(Agent, "TRACE"); err != nil {
		t.Fatal(err)
	}
	tasks.Log(t.Context(), LevelTrace, "polled", "records", 3)
	herder.Debug("still hidden: the herder is not under io.sluice.agent")
	if _, err := l.SetLevel(Root, "ERROR"); err != nil {
		t.Fatal(err)
	}
	herder.Warn("hidden at ERROR")
	herder.Error("failed", "connector", "file-src", "task", 1)

	recs := logtest.Records(t, out.String(), "")
	want := []struct{ level, logger, msg string }{
		{"INFO", AgentTasks, "task started"},
		{"WARN", Herder, "quote \" and\nnewline"},
		{"TRACE", AgentTasks, "polled"},
		{"ERROR", Herder, "failed"},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(recs), len(want), out.String())
	}
	for i, w := range want {
		r := recs[i]
		if r["level"] != w.level || r[LoggerKey] != w.logger || r["msg"] != w.msg {
			t.Errorf("line %d: level %v, logger %v, msg %q; want %s, %s, %q", i, r["level"], r[LoggerKey], r["msg"], w.level, w.logger, w.msg)
		}
		ts, _ := r["time"].(string)
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			t.Errorf("line %d: time %q is not RFC 3339: %v", i, r["time"], err)
		}
	}
	if recs[0]["connector"] != "file-src" || recs[0]["task"] != json.Number("0") {
		t.Errorf("attributes of %v: want connector file-src, task 0 (a number)", recs[0])
	}
	if recs[2]["records"] != json.Number("3") {
		t.Errorf("attributes of %v: want records 3", recs[2])
	}
}

// TestTextLevelNames: the text format names levels as the JSON one does,
// by log4j's names, and carries the logger.
func TestTextLevelNames(t *testing.T) {
	var out bytes.Buffer
	l := NewText(&out, LevelAll)
	l.Logger(AgentOffsets).Log(t.Context(), LevelTrace, "fenced", "partition", 3)
	l.Logger(Root).Log(t.Context(), LevelFatal, "gone")
	got := out.String()
	for _, part := range []string{"level=TRACE msg=fenced partition=3 logger=io.sluice.agent.offsets", "level=FATAL msg=gone logger=root"} {
		if !strings.Contains(got, part) {
			t.Errorf("text output lacks %q:\n%s", part, got)
		}
	}
}

// TestHandlerEnablesEveryLevel: the handlers enable every level, so that
// a logger turned down to ALL at run time logs everything.
func TestHandlerEnablesEveryLevel(t *testing.T) {
	for _, f := range []Format{FormatText, FormatJSON} {
		if lowestEnabled(NewHandler(&bytes.Buffer{}, f)) != LevelAll {
			t.Errorf("%s handler does not enable ALL", f)
		}
	}
}

// TestJSONGroups: a logger's name stays a top-level attribute of a record
// logged through a group.
func TestJSONGroups(t *testing.T) {
	var out bytes.Buffer
	l := NewJSON(&out, slog.LevelInfo)
	l.Logger(REST).With("connector", "c").WithGroup("request").Info("rest write", "status", 201)
	recs := logtest.Records(t, out.String(), "")
	if len(recs) != 1 {
		t.Fatalf("%d lines, want 1:\n%s", len(recs), out.String())
	}
	req, _ := recs[0]["request"].(map[string]any)
	if recs[0][LoggerKey] != REST || recs[0]["connector"] != "c" || req["status"] != json.Number("201") || req[LoggerKey] != nil {
		t.Fatalf("record %v: want logger and connector at the top, status in request", recs[0])
	}
}
