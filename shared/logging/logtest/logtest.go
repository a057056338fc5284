// Package logtest captures what a process logs, for tests that check its
// log lines: a Buffer that goroutines write to while the test reads it,
// and the JSON lines it holds, decoded.
package logtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// Buffer is an io.Writer for a logger, safe for concurrent use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Records decodes the lines written so far, each as one JSON object
// (numbers as json.Number), and returns those whose message is msg, or
// every one for "". A line that is not exactly one JSON object fails t:
// the JSON format promises one a line.
func (b *Buffer) Records(t testing.TB, msg string) []map[string]any {
	t.Helper()
	return Records(t, b.String(), msg)
}

// Records is Buffer.Records over out.
func Records(t testing.TB, out, msg string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var rec map[string]any
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.UseNumber()
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("log line %q is not a JSON object: %v", sc.Text(), err)
		}
		if dec.More() {
			t.Fatalf("log line %q holds more than one JSON value", sc.Text())
		}
		if msg == "" || rec["msg"] == msg {
			recs = append(recs, rec)
		}
	}
	return recs
}
