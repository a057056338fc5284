// Package lifecycle is what the fleet's long-running operations share —
// rollouts (fleet/rollout) and agent rolls (fleet/agentroll): the REST
// pause, resume and abort of a record, each read, decided and written
// under its controller's mutex, and the loop that drives them.
package lifecycle

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// Record is an operation's stored record (store.Rollout, store.AgentRoll).
type Record interface {
	// Final reports whether nothing more happens to it.
	Final() bool
}

// Kind is one kind of operation: how its records are named in a message,
// found, and changed.
type Kind[R Record] struct {
	// Noun names the kind at the start of a message: "Rollout", "Roll".
	Noun string
	// Mu serialises every change of a record (the controller's mutex).
	Mu *sync.Mutex
	// Get is record id as the fleet topic holds it.
	Get func(id string) (R, bool)
	// State is a record's state; Running and Paused are the states a
	// record can be paused and resumed in.
	State           func(R) string
	Running, Paused string
	// Clock is the time a change is made at.
	Clock func() time.Time
	// Apply writes commands in one transaction (store.Stores).
	Apply func(ctx context.Context, cmds ...store.Command) error
	// WriteFailed turns a failed write into the REST error answered.
	WriteFailed func(err error, what string, args ...any) error
	// PauseCmd, ResumeCmd and AbortCmd are the commands that change record
	// id at a time.
	PauseCmd, ResumeCmd, AbortCmd func(id string, at time.Time) store.Command
}

// NotFound is the 404 of an unknown record of the kind named noun.
func NotFound(noun, id string) error {
	return api.Errorf(api.CodeNotFound, "%s %s not found", noun, id)
}

// Pause stops a running record before its next step.
func (k *Kind[R]) Pause(ctx context.Context, id string) (R, error) {
	return k.change(ctx, id, func(r R) (func(string, time.Time) store.Command, error) {
		if k.State(r) != k.Running {
			return nil, api.Errorf(api.CodeConflict, "%s %s is %s: only a running %s can be paused", k.Noun, id, k.State(r), strings.ToLower(k.Noun))
		}
		return k.PauseCmd, nil
	})
}

// Resume goes on with a paused record where it stopped.
func (k *Kind[R]) Resume(ctx context.Context, id string) (R, error) {
	return k.change(ctx, id, func(r R) (func(string, time.Time) store.Command, error) {
		if k.State(r) != k.Paused {
			return nil, api.Errorf(api.CodeConflict, "%s %s is %s: only a paused %s can be resumed", k.Noun, id, k.State(r), strings.ToLower(k.Noun))
		}
		return k.ResumeCmd, nil
	})
}

// Abort stops a record at once and for good.
func (k *Kind[R]) Abort(ctx context.Context, id string) (R, error) {
	return k.change(ctx, id, func(r R) (func(string, time.Time) store.Command, error) {
		if r.Final() {
			return nil, api.Errorf(api.CodeConflict, "%s %s is %s already", k.Noun, id, k.State(r))
		}
		return k.AbortCmd, nil
	})
}

// change decides a REST change of record id under k.Mu and writes it;
// decide's error is returned as it is, nothing written.
func (k *Kind[R]) change(ctx context.Context, id string, decide func(R) (func(string, time.Time) store.Command, error)) (R, error) {
	var zero R
	k.Mu.Lock()
	defer k.Mu.Unlock()
	r, ok := k.Get(id)
	if !ok {
		return zero, NotFound(k.Noun, id)
	}
	cmd, err := decide(r)
	if err != nil {
		return zero, err
	}
	if err := k.Apply(ctx, cmd(id, k.Clock())); err != nil {
		return zero, k.WriteFailed(err, "Failed to record %s %s", strings.ToLower(k.Noun), id)
	}
	if r, ok = k.Get(id); !ok {
		return zero, NotFound(k.Noun, id)
	}
	return r, nil
}

// Run calls pass until ctx ends: at once, on each change (changed is
// taken anew before each pass), and every tick.
func Run(ctx context.Context, tick time.Duration, changed func() <-chan struct{}, pass func(context.Context)) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for ctx.Err() == nil {
		ch := changed()
		pass(ctx)
		select {
		case <-ctx.Done():
		case <-ch:
		case <-t.C:
		}
	}
}

// Steps calls step up to most times, until it takes no step or fails, and
// returns its failure (none once ctx ended).
func Steps(ctx context.Context, most int, step func() (took bool, err error)) error {
	for range most {
		took, err := step()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if !took {
			return nil
		}
	}
	return nil
}
