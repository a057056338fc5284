// Package readiness keeps the result of a check that is too slow to run
// inside a probe — is Kafka reachable — fresh in the background, so that a
// probe reads it at once.
//
//	Start ─► check ─► sleep interval ─► check ─► …   (each check ≤ timeout)
//	Err   ─► the last result, or "stale" when none is younger than maxAge
package readiness

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Cached runs a check every interval and keeps its last result.
type Cached struct {
	name     string
	check    func(ctx context.Context) error
	interval time.Duration
	timeout  time.Duration

	mu   sync.Mutex
	err  error
	at   time.Time // when the last check finished; zero before the first
	stop context.CancelFunc
	done chan struct{}
}

// NewCached makes a check named name (it prefixes the reasons) run every
// interval, each run bounded by timeout.
func NewCached(name string, interval, timeout time.Duration, check func(ctx context.Context) error) *Cached {
	return &Cached{name: name, check: check, interval: interval, timeout: timeout}
}

// Start runs the first check now and the next ones in the background.
func (c *Cached) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	c.stop, c.done = cancel, make(chan struct{})
	go func() {
		defer close(c.done)
		for {
			c.run(ctx)
			select {
			case <-ctx.Done():
				return
			case <-time.After(c.interval):
			}
		}
	}()
}

func (c *Cached) run(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	err := c.check(cctx)
	cancel()
	if ctx.Err() != nil {
		return
	}
	c.mu.Lock()
	c.err, c.at = err, time.Now()
	c.mu.Unlock()
}

// Err is the last result. A result older than two intervals and a timeout
// counts as a failure: the check itself is stuck.
func (c *Cached) Err() error {
	c.mu.Lock()
	err, at := c.err, c.at
	c.mu.Unlock()
	switch {
	case at.IsZero():
		return fmt.Errorf("%s: not checked yet", c.name)
	case time.Since(at) > 2*c.interval+c.timeout:
		return fmt.Errorf("%s: last checked %v ago", c.name, time.Since(at).Round(time.Second))
	case err != nil:
		return fmt.Errorf("%s: %w", c.name, err)
	}
	return nil
}

// Stuck reports an error when no check finished within after (and the
// first ran): the loop itself is wedged, whatever the check found. It is a
// heartbeat for a liveness probe, which must not depend on what is checked.
func (c *Cached) Stuck(after time.Duration) error {
	c.mu.Lock()
	at := c.at
	c.mu.Unlock()
	if !at.IsZero() && time.Since(at) > after {
		return fmt.Errorf("%s check loop has not turned for %v", c.name, time.Since(at).Round(time.Second))
	}
	return nil
}

// Stop ends the background checks.
func (c *Cached) Stop() {
	if c.stop != nil {
		c.stop()
		<-c.done
	}
}
