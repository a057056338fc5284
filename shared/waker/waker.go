// Package waker lets one goroutine cut another's wait short: a loop that
// sleeps between rounds (renewing a lease, heartbeating) wakes at once when
// something it waits for may have changed — the NATS connection came back —
// rather than at its next tick.
package waker

import (
	"context"
	"time"
)

// Waker wakes one waiting loop. Its zero value is not usable: use New.
type Waker struct{ ch chan struct{} }

// New makes a waker.
func New() *Waker { return &Waker{ch: make(chan struct{}, 1)} }

// Poke wakes the loop now, or at its next wait if it is not waiting; pokes
// before a wait count once.
func (w *Waker) Poke() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// C is the channel a poke arrives on, for a loop that selects on more.
func (w *Waker) C() <-chan struct{} { return w.ch }

// Wait sleeps for d, or until poked or ctx ends.
func (w *Waker) Wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-w.ch:
	case <-t.C:
	}
}
