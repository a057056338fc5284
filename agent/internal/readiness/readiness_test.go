package readiness

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest/wait"
)

// eventually polls cond (the kit's Eventually) until it holds or 5 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	wait.Eventually(t, 5*time.Second, func() (bool, string) { return cond(), "waiting for " + what })
}

func TestCached(t *testing.T) {
	var fail atomic.Bool
	var calls atomic.Int64
	c := NewCached("kafka", 10*time.Millisecond, time.Second, func(context.Context) error {
		calls.Add(1)
		if fail.Load() {
			return errors.New("no broker answered")
		}
		return nil
	})
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "not checked yet") {
		t.Fatalf("before the first check: %v", err)
	}
	c.Start()
	defer c.Stop()
	eventually(t, "the first check to pass", func() bool { return c.Err() == nil })
	fail.Store(true)
	eventually(t, "a failed check to show", func() bool {
		err := c.Err()
		return err != nil && err.Error() == "kafka: no broker answered"
	})
	fail.Store(false)
	eventually(t, "the check to pass again", func() bool { return c.Err() == nil })
	if calls.Load() < 3 {
		t.Fatalf("%d checks, want one per interval", calls.Load())
	}
}

// TestCachedTimeoutAndStale checks that a check is cut off at its timeout,
// and that a check stuck beyond it (ignoring its context) turns the result
// stale rather than leaving the last good one in place.
func TestCachedTimeoutAndStale(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		c := NewCached("kafka", 10*time.Millisecond, 20*time.Millisecond, func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		})
		c.Start()
		defer c.Stop()
		eventually(t, "the timeout to show", func() bool {
			return errors.Is(c.Err(), context.DeadlineExceeded)
		})
	})
	t.Run("stale", func(t *testing.T) {
		var stuck atomic.Bool
		release := make(chan struct{})
		c := NewCached("kafka", 10*time.Millisecond, 10*time.Millisecond, func(context.Context) error {
			if stuck.Load() {
				<-release
			}
			return nil
		})
		c.Start()
		defer c.Stop()
		defer close(release)
		eventually(t, "the first check to pass", func() bool { return c.Err() == nil })
		stuck.Store(true)
		eventually(t, "the result to go stale", func() bool {
			err := c.Err()
			return err != nil && strings.Contains(err.Error(), "last checked")
		})
	})
}
