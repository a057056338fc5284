package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// lineWriter appends numbered lines to a file at a steady pace in the
// background, as a log-producing application would, and remembers what it
// wrote.
type lineWriter struct {
	t    testing.TB
	path string

	mu      sync.Mutex
	written []string
	err     error

	cancel context.CancelFunc
	done   chan struct{}
}

// startLineWriter writes first lines at once, then one line every every
// until stop. The writer is stopped at test cleanup if still running.
func startLineWriter(t testing.TB, path string, first int, every time.Duration) *lineWriter {
	t.Helper()
	w := &lineWriter{t: t, path: path, done: make(chan struct{})}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for range first {
		w.writeLine(f)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() {
		defer close(w.done)
		defer f.Close()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				w.writeLine(f)
			}
		}
	}()
	t.Cleanup(w.stop)
	return w
}

// writeLine appends the next line with a single write, so a reader never
// sees half of it.
func (w *lineWriter) writeLine(f *os.File) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	n := len(w.written) + 1
	line := fmt.Sprintf("line %06d %s", n, strings.Repeat("x", n%23))
	if _, err := f.WriteString(line + "\n"); err != nil {
		w.err = err
		return
	}
	w.written = append(w.written, line)
}

// stop stops writing.
func (w *lineWriter) stop() {
	w.cancel()
	<-w.done
}

// Lines returns a copy of the lines written so far.
func (w *lineWriter) Lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		w.t.Fatalf("appending to %s: %v", w.path, w.err)
	}
	return append([]string(nil), w.written...)
}

// Stop stops writing and returns every line written.
func (w *lineWriter) Stop() []string {
	w.stop()
	return w.Lines()
}

// Count is how many lines were written so far.
func (w *lineWriter) Count() int { return len(w.Lines()) }

// waitWritten waits until at least n lines were written.
func (w *lineWriter) waitWritten(n int) {
	w.t.Helper()
	sluicetest.Eventually(w.t, 10*time.Second, func() (bool, string) {
		got := w.Count()
		return got >= n, fmt.Sprintf("%d of %d lines written", got, n)
	})
}

// readLines returns the complete lines of path; a last line without its
// newline yet is left out.
func readLines(path string) []string {
	data, _ := os.ReadFile(path)
	s := string(data)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	} else {
		return nil
	}
	return strings.Split(s, "\n")
}

// waitDelivered waits until the sink file holds at least the first n lines
// w wrote. At every look the file must be an exact prefix of what was
// written — a line twice, out of order or skipped fails at once, whether or
// not later lines arrive. With exact, the file must end up holding exactly
// n lines.
func waitDelivered(t testing.TB, path string, w *lineWriter, n int, exact bool) {
	t.Helper()
	var bad string
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		got := readLines(path)
		// Read after the file, so everything in the file is in written.
		written := w.Lines()
		for i, line := range got {
			if i >= len(written) || line != written[i] {
				want := "nothing (past the end of what was written)"
				if i < len(written) {
					want = fmt.Sprintf("%q", written[i])
				}
				bad = fmt.Sprintf("%s line %d is %q, want %s", path, i+1, line, want)
				return true, ""
			}
		}
		if exact && len(got) > n {
			bad = fmt.Sprintf("%s holds %d lines, want exactly %d", path, len(got), n)
			return true, ""
		}
		return len(got) >= n, fmt.Sprintf("%d of %d lines delivered", len(got), n)
	})
	if bad != "" {
		t.Fatal(bad)
	}
}
