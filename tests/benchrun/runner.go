package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// tb is the runner the program gives the test kit's process code; setup
// makes it.
var tb *runner

// runner is a sluicetest.TB for a program that is not a test: Fatal and
// Fatalf panic with a fatal, which catch turns into an error where the
// program calls the kit; cleanups (the kit's processes' kills) run at
// killAll.
type runner struct {
	tmp      string
	mu       sync.Mutex
	cleanups []func()
}

var _ sluicetest.TB = (*runner)(nil)

// fatal is the panic of runner.Fatal and Fatalf.
type fatal string

// catch, deferred by a function that calls the kit, turns the kit's failure
// (a fatal panic) into *err; other panics go on.
func catch(err *error) {
	if v := recover(); v != nil {
		f, ok := v.(fatal)
		if !ok {
			panic(v)
		}
		*err = errors.New(string(f))
	}
}

// Helper does nothing: there is no test log to point into.
func (r *runner) Helper() {}

// Name names the program.
func (r *runner) Name() string { return "benchrun" }

// Logf logs as the program does.
func (r *runner) Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s benchrun: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// Fatal panics with a fatal (see catch).
func (r *runner) Fatal(args ...any) { panic(fatal(fmt.Sprint(args...))) }

// Fatalf panics with a fatal (see catch).
func (r *runner) Fatalf(format string, args ...any) { panic(fatal(fmt.Sprintf(format, args...))) }

// Failed is false: a failure is an error of the scenario, reported in the
// results, and the processes' logs stay in the temp dir.
func (r *runner) Failed() bool { return false }

// Cleanup registers f to run at killAll.
func (r *runner) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

// TempDir makes a new directory under the run's temp dir.
func (r *runner) TempDir() string {
	d, err := os.MkdirTemp(r.tmp, "proc-")
	if err != nil {
		r.Fatal(err)
	}
	return d
}

// killAll kills every child still running (the cleanups registered so far,
// last first); it is safe to call more than once and from a signal handler
// goroutine.
func killAll() {
	if tb == nil {
		return
	}
	tb.mu.Lock()
	fs := tb.cleanups
	tb.cleanups = nil
	tb.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
