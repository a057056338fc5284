// Package leadership switches the coordinator's leader-only components on
// when it is elected and off when it is deposed, Nomad-style, and does
// nothing else: what each component does, and in which order they must
// start, is the caller's (coordinator/internal/herder names them).
//
//	Establish(term) ─► start components in order ─► (a start fails: stop the
//	  started ones in reverse, retry with backoff) ─► run until the term ends
//	Revoke(term)    ─► end the term ─► stop every component in reverse order
//	                   ─► return once all stopped
//
// A component that runs a loop starts it in a goroutine and returns; its
// stop ends the loop and waits for it.
package leadership

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Component is one part of the coordinator that works only while it leads.
type Component struct {
	// Name names the component in errors and logs.
	Name string
	// Start switches the component on for term and returns what switches it
	// off (nil: nothing to do). ctx ends with the term. An error stops the
	// attempt: the components started before are stopped, in reverse order,
	// and the attempt is retried.
	Start func(ctx context.Context, term int64) (stop func(), err error)
}

// Leadership runs the components of the current term; the zero value is
// not usable, use New.
type Leadership struct {
	components []Component
	log        *slog.Logger
	// backoff bounds the waits between failed attempts at taking up a term.
	minBackoff, maxBackoff time.Duration

	mu      sync.Mutex
	current *running
}

// running is one term's leadership.
type running struct {
	term   int64
	cancel context.CancelFunc
	done   chan struct{}
}

// New makes a Leadership that starts components in the order given.
func New(log *slog.Logger, components ...Component) *Leadership {
	if log == nil {
		log = slog.Default()
	}
	return &Leadership{components: components, log: log, minBackoff: 100 * time.Millisecond, maxBackoff: 5 * time.Second}
}

// Establish starts the components for term and returns at once (the
// elector renews the lease meanwhile). A failed start is retried, with a
// backoff from 100 ms to 5 s, until it succeeds or the term ends: ctx ends
// or Revoke is called.
func (l *Leadership) Establish(ctx context.Context, term int64) {
	tctx, cancel := context.WithCancel(ctx)
	r := &running{term: term, cancel: cancel, done: make(chan struct{})}
	l.mu.Lock()
	prev := l.current
	l.current = r
	l.mu.Unlock()
	if prev != nil {
		// The elector revokes before it establishes again; a term left
		// running would share the components with this one.
		prev.cancel()
		<-prev.done
	}
	go func() {
		defer close(r.done)
		backoff := l.minBackoff
		for tctx.Err() == nil {
			err := l.run(tctx, term)
			if err == nil || tctx.Err() != nil {
				return // started and ended, or ended while starting
			}
			l.log.Error("taking up leadership failed; retrying", "term", term, "err", err)
			select {
			case <-tctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, l.maxBackoff)
		}
	}()
}

// run starts every component, waits for the term to end, and stops them
// in reverse order.
func (l *Leadership) run(ctx context.Context, term int64) error {
	// Each attempt has its own context, ended before its components are
	// stopped: a component's loop ends with it, so its stop returns even
	// when a later component failed to start and the term goes on.
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stops []func()
	stopAll := func() {
		cancel()
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	for _, c := range l.components {
		if ctx.Err() != nil {
			stopAll()
			return nil
		}
		stop, err := c.Start(actx, term)
		if err != nil {
			stopAll()
			return fmt.Errorf("start %s: %w", c.Name, err)
		}
		if stop != nil {
			stops = append(stops, stop)
		}
	}
	l.log.Info("leading", "term", term)
	<-ctx.Done()
	stopAll()
	return nil
}

// Revoke ends term's leadership and returns once every component stopped;
// a term other than the running one (already revoked, or never
// established) is left alone.
func (l *Leadership) Revoke(term int64) {
	l.mu.Lock()
	r := l.current
	if r == nil || r.term != term {
		l.mu.Unlock()
		return
	}
	l.current = nil
	l.mu.Unlock()
	r.cancel()
	<-r.done
	l.log.Info("no longer leading", "term", term)
}

// Term is the term whose components run or are starting; 0 while
// following.
func (l *Leadership) Term() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.current == nil {
		return 0
	}
	return l.current.term
}
