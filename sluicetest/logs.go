package sluicetest

import (
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sluice-io/sluice/shared/logging"
)

// LogLevel is the root level every process of a test cluster starts at
// unless Options.LogLevel says otherwise: what the test log shows unless a
// test changes it (PUT /admin/loggers).
const LogLevel = slog.LevelWarn

// loggers are the named loggers of one process of the cluster, made anew at
// each start: text lines naming the process (process=<name>), going to the
// test's log and to the cluster's capture (Logged). The handler enables
// every level, so that a level set at run time takes effect.
func (c *Cluster) loggers(process string) *logging.Loggers {
	w := testWriter{t: c.T, on: c.logOn, capture: c.logs}
	h := logging.NewHandler(w, logging.FormatText)
	return logging.New(h.WithAttrs([]slog.Attr{slog.String("process", process)}), c.opts.LogLevel.Level())
}

// Logged returns the lines the cluster's processes have logged so far that
// contain every one of parts, in the order logged: for instance
// c.Logged("process=agent-1", "level=DEBUG", `msg="assign received"`).
func (c *Cluster) Logged(parts ...string) []string {
	return c.logs.match(parts)
}

// logCapture keeps every line a cluster's processes logged.
type logCapture struct {
	mu    sync.Mutex
	lines []string
}

func (l *logCapture) add(line string) {
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
}

func (l *logCapture) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

func (l *logCapture) match(parts []string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
next:
	for _, line := range l.lines {
		for _, p := range parts {
			if !strings.Contains(line, p) {
				continue next
			}
		}
		out = append(out, line)
	}
	return out
}

// testWriter sends log lines to the test's log, shown only when a test
// fails, and to the capture. The test's log stops when the cluster has shut
// down: it must not be written after the test ended.
type testWriter struct {
	t       testing.TB
	on      *atomic.Bool
	capture *logCapture
}

// Write implements io.Writer; slog's handlers write one line per call.
func (w testWriter) Write(p []byte) (int, error) {
	line := strings.TrimRight(string(p), "\n")
	w.capture.add(line)
	if w.on.Load() {
		w.t.Log(line)
	}
	return len(p), nil
}
