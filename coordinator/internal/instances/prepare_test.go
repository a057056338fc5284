package instances

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/shared/records"
)

// preparer is a Config.Prepare that fails while told to and records the
// configs it was called with.
type preparer struct {
	mu    sync.Mutex
	fail  error
	calls []map[string]string
}

func (p *preparer) prepare(_ context.Context, _ string, config map[string]string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, maps.Clone(config))
	return p.fail
}

func (p *preparer) set(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fail = err
}

func (p *preparer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.calls)
}

// TestPrepareRetriesWithBackoffAndNewConfigsAtOnce: a failing Prepare
// fails the connector (stopped ones too) with its error, retried with a
// growing backoff; a new config is prepared at once, not after the
// backoff; a prepared config is not prepared again; and a connector
// whose config prepares is not held up by an earlier start's backoff.
func TestPrepareRetriesWithBackoffAndNewConfigsAtOnce(t *testing.T) {
	p := &preparer{}
	h := newHarness(t, func(c *Config) {
		c.InitialBackoff, c.MaxBackoff, c.Prepare = time.Second, 8*time.Second, p.prepare
	})
	boom := errors.New("Unable to create topic(s) 'x': illegal")
	p.set(boom)
	h.Sync([]Connector{conn("a", records.TargetStopped)})
	h.settle(t)
	for i, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		if got := h.clock.pending(); !reflect.DeepEqual(got, []time.Duration{wait}) {
			t.Fatalf("failure %d: retry timers %v, want [%v]", i+1, got, wait)
		}
		h.clock.fire()
		h.settle(t)
	}
	if got := p.count(); got != 4 {
		t.Fatalf("%d Prepare calls after 3 retries, want 4", got)
	}
	if st := h.status.of("a"); len(st) == 0 || st[len(st)-1] != failed(boom.Error()) {
		t.Fatalf("statuses %+v, want FAILED with the error", st)
	}

	// A new config is tried at once, though a retry is pending.
	p.set(nil)
	h.Sync([]Connector{conn("a", records.TargetStopped, "extra", "1")})
	h.settle(t)
	if got := p.count(); got != 5 {
		t.Fatalf("%d Prepare calls after a config change, want 5 (at once)", got)
	}
	if st := h.status.of("a"); st[len(st)-1] != stopped {
		t.Fatalf("statuses %+v, want STOPPED once prepared", st)
	}
	// Started with the same config: not prepared again.
	h.Sync([]Connector{conn("a", records.TargetStarted, "extra", "1")})
	h.settle(t)
	if got := p.count(); got != 5 {
		t.Fatalf("%d Prepare calls after a start with the prepared config, want 5", got)
	}
	if st := h.status.of("a"); st[len(st)-1] != running {
		t.Fatalf("statuses %+v, want RUNNING", st)
	}

	// A start that fails and backs off does not hold up the next config.
	h.plugin.failStarts(errors.New("no route to host"))
	h.Sync([]Connector{conn("a", records.TargetStarted, "extra", "2")})
	h.settle(t)
	h.Sync([]Connector{conn("a", records.TargetStarted, "extra", "3")})
	h.settle(t)
	if got := p.count(); got != 7 {
		t.Fatalf("%d Prepare calls, want 7: each new config prepared at once", got)
	}
	if st := h.status.of("a"); st[len(st)-1] != running {
		t.Fatalf("statuses %+v, want RUNNING with the newest config", st)
	}
}
