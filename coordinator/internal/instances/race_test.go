package instances

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/sluice-io/sluice/shared/records"
)

// TestConcurrentSyncAndRequests drives the manager from several goroutines
// at once — Syncs that change configs, targets and the connector set,
// restarts, reads, the connectors' own requests and errors, failing calls
// and firing retries — and then checks that it converges and that the
// plugin's lifecycle contract held throughout. Run it with -race.
func TestConcurrentSyncAndRequests(t *testing.T) {
	h := newHarness(t, nil)
	names := []string{"a", "b", "c"}
	targets := []string{records.TargetStarted, records.TargetPaused, records.TargetStopped}
	boom := errors.New("transient")
	for range 20 {
		h.plugin.failStarts(nil, nil, boom)
		h.plugin.failTasks(nil, boom)
	}
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for i := range 2000 {
				var cs []Connector
				for _, n := range names {
					if r.IntN(5) > 0 {
						cs = append(cs, conn(n, targets[r.IntN(len(targets))], "extra", strconv.Itoa(r.IntN(3))))
					}
				}
				h.Sync(cs)
				h.Restart(names[r.IntN(len(names))])
				h.TaskConfigs(names[r.IntN(len(names))])
				if i%20 == 0 {
					h.clock.fire()
				}
				runtime.Gosched() // let the workers interleave with the callers
			}
		})
	}
	wg.Go(func() {
		for i := range 3000 {
			for _, n := range names {
				if cc := h.plugin.context(n, -1); cc != nil {
					cc.RequestTaskReconfiguration()
					if i%100 == 0 {
						cc.RaiseError(boom)
					}
				}
			}
			runtime.Gosched()
		}
	})
	wg.Wait()

	final := []Connector{conn("a", records.TargetStarted, "extra", "final"), conn("b", records.TargetPaused)}
	h.Sync(final)
	h.Restart("a") // in case the last word of a was an error it raised
	eventually(t, func() bool {
		h.clock.fire()
		ts, ok := h.TaskConfigs("a")
		return ok && ts.Current && ts.Configs[0]["extra"] == "final" && h.idle()
	})
	c := h.plugin.counts()
	if c.live != 1 {
		t.Errorf("%d instances started, want only a's: %+v", c.live, c)
	}
	if c.stops == 0 {
		t.Errorf("calls %+v: the run never restarted an instance", c)
	}
	if _, ok := h.TaskConfigs("c"); ok {
		t.Error("the deleted connector still has task configs")
	}
	h.plugin.checkContract(t)
}
