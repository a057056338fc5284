package lifecycle

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/store"
)

type rec struct{ state string }

func (r rec) Final() bool { return r.state == "aborted" }

// cmd is a command the fake store applies by setting record id's state.
type cmd struct {
	store.Command
	id, state string
}

type env struct {
	mu      sync.Mutex
	recs    map[string]rec
	applied []string
	fail    error
}

func (e *env) kind() *Kind[rec] {
	to := func(state string) func(string, time.Time) store.Command {
		return func(id string, _ time.Time) store.Command { return cmd{id: id, state: state} }
	}
	return &Kind[rec]{
		Noun: "Roll", Mu: &e.mu, Running: "running", Paused: "paused",
		Get:   func(id string) (rec, bool) { r, ok := e.recs[id]; return r, ok },
		State: func(r rec) string { return r.state },
		Clock: time.Now,
		Apply: func(_ context.Context, cmds ...store.Command) error {
			if e.fail != nil {
				return e.fail
			}
			for _, c := range cmds {
				c := c.(cmd)
				e.applied = append(e.applied, c.id+" "+c.state)
				e.recs[c.id] = rec{state: c.state}
			}
			return nil
		},
		WriteFailed: func(err error, what string, args ...any) error { return errors.New("write failed") },
		PauseCmd:    to("paused"), ResumeCmd: to("running"), AbortCmd: to("aborted"),
	}
}

func TestChanges(t *testing.T) {
	ctx := context.Background()
	e := &env{recs: map[string]rec{"r1": {state: "running"}}}
	k := e.kind()
	if _, err := k.Resume(ctx, "r1"); err == nil || err.Error() != "Roll r1 is running: only a paused roll can be resumed" {
		t.Fatalf("resume running: %v", err)
	}
	if r, err := k.Pause(ctx, "r1"); err != nil || r.state != "paused" {
		t.Fatalf("pause: %v %v", r, err)
	}
	if _, err := k.Pause(ctx, "r1"); err == nil || err.Error() != "Roll r1 is paused: only a running roll can be paused" {
		t.Fatalf("pause paused: %v", err)
	}
	if r, err := k.Resume(ctx, "r1"); err != nil || r.state != "running" {
		t.Fatalf("resume: %v %v", r, err)
	}
	if r, err := k.Abort(ctx, "r1"); err != nil || r.state != "aborted" {
		t.Fatalf("abort: %v %v", r, err)
	}
	if _, err := k.Abort(ctx, "r1"); err == nil || err.Error() != "Roll r1 is aborted already" {
		t.Fatalf("abort aborted: %v", err)
	}
	if _, err := k.Pause(ctx, "nope"); err == nil || err.Error() != "Roll nope not found" {
		t.Fatalf("pause unknown: %v", err)
	}
	if want := []string{"r1 paused", "r1 running", "r1 aborted"}; !slices.Equal(e.applied, want) {
		t.Fatalf("applied %v, want the pause, the resume and the abort", e.applied)
	}
	e.recs["r2"] = rec{state: "running"}
	e.fail = errors.New("down")
	if _, err := k.Pause(ctx, "r2"); err == nil || err.Error() != "write failed" {
		t.Fatalf("pause with the store down: %v", err)
	}
}

func TestSteps(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	if err := Steps(ctx, 5, func() (bool, error) { n++; return true, nil }); err != nil || n != 5 {
		t.Fatalf("took %d steps (%v), want 5", n, err)
	}
	n = 0
	if err := Steps(ctx, 5, func() (bool, error) { n++; return n < 2, nil }); err != nil || n != 2 {
		t.Fatalf("took %d steps (%v), want 2", n, err)
	}
	boom := errors.New("boom")
	if err := Steps(ctx, 5, func() (bool, error) { return true, boom }); err != boom {
		t.Fatalf("err %v, want boom", err)
	}
	cancel()
	if err := Steps(ctx, 5, func() (bool, error) { return true, boom }); err != nil {
		t.Fatalf("err %v once ctx ended, want none", err)
	}
}
