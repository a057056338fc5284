package client_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
)

// mainTB is the testing.TB the harness gets in TestMain, where there is no
// test yet: it keeps the cleanups for the end of the run, makes temporary
// directories, writes logs to stderr, and ends the goroutine that fails
// (as t.Fatal does) after recording why. Only the methods the harness calls
// are implemented; the embedded interface is nil.
type mainTB struct {
	testing.TB
	name string

	mu       sync.Mutex
	cleanups []func()
	dirs     []string
	failure  error
}

// run calls f, and returns the failure it stopped with, if any.
func (tb *mainTB) run(f func()) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.failure
}

// cleanup runs the cleanups, last first, and removes the directories.
func (tb *mainTB) cleanup() {
	tb.mu.Lock()
	fs, dirs := tb.cleanups, tb.dirs
	tb.cleanups, tb.dirs = nil, nil
	tb.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	for _, d := range dirs {
		_ = os.RemoveAll(d)
	}
}

// Name names the cluster's topics.
func (tb *mainTB) Name() string { return tb.name }

// Helper does nothing: there is no test log to attribute lines in.
func (tb *mainTB) Helper() {}

// Cleanup registers f for the end of the run.
func (tb *mainTB) Cleanup(f func()) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.cleanups = append(tb.cleanups, f)
}

// TempDir makes a directory removed at the end of the run.
func (tb *mainTB) TempDir() string {
	d, err := os.MkdirTemp("", "sluice-client-test-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.dirs = append(tb.dirs, d)
	return d
}

// Log writes to stderr (the examples' output is stdout).
func (tb *mainTB) Log(args ...any) { fmt.Fprintln(os.Stderr, args...) }

// Logf writes to stderr.
func (tb *mainTB) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

// Fatal records the failure and ends the calling goroutine.
func (tb *mainTB) Fatal(args ...any) { tb.fail(errors.New(fmt.Sprint(args...))) }

// Fatalf records the failure and ends the calling goroutine.
func (tb *mainTB) Fatalf(format string, args ...any) { tb.fail(fmt.Errorf(format, args...)) }

// Skip is a failure here: nothing the package runs may be skipped.
func (tb *mainTB) Skip(args ...any) { tb.fail(errors.New("skipped: " + fmt.Sprint(args...))) }

func (tb *mainTB) fail(err error) {
	tb.mu.Lock()
	if tb.failure == nil {
		tb.failure = err
	}
	tb.mu.Unlock()
	runtime.Goexit()
}
