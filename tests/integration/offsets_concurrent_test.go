package integration

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/wire"
	"github.com/sluice-io/sluice/sluicetest"
)

// TestOffsetsStaleRequestNeverApplied: an offsets request that an agent
// takes up only after the coordinator stopped waiting for it (and handed the
// operation to another agent) is never applied. Otherwise it runs beside,
// or after, the operations that followed it: they fail with 500 "Failed to
// modify offsets" (fenced by it), or its old offsets silently replace newer
// ones that were answered 200.
//
// Agent 1 holds its first request (position 1) past the coordinator's wait,
// so every PATCH goes on to agent 2; then it lets that request go and holds
// the last (position 3). The offsets must stay as the last PATCH left them.
func TestOffsetsStaleRequestNeverApplied(t *testing.T) {
	t.Parallel()
	var once sync.Once
	release, hold := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { once.Do(func() { close(release) }); close(hold) })
	holdsPosition := func(req wire.SourceOffsetsRequest, pos string) bool {
		for _, w := range req.Writes {
			if w.Value != nil && strings.Contains(*w.Value, `"position":`+pos) {
				return true
			}
		}
		return false
	}
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, AgentFaults: func(agent int) faults.Injector {
		return faults.Func(func(ctx context.Context, at faults.Point, subject any) error {
			req, ok := subject.(wire.SourceOffsetsRequest)
			if at != faults.AgentOffsets || agent != 0 || !ok || req.Connector != "stale" {
				return nil
			}
			switch {
			case holdsPosition(req, "1"):
				<-release
			case holdsPosition(req, "3"):
				<-hold
			}
			return nil
		})
	}})
	fileSource(c, "stale", "stale.txt", c.Name("stale"), "STOPPED")
	for _, pos := range []int64{1, 2, 3} {
		patch(t, c, "stale", body(filePos("stale.txt", pos)), http.StatusOK, msgAlterDefinite)
	}
	wantOffsets(c, "stale", []offset{filePos("stale.txt", 3)})

	once.Do(func() { close(release) })
	want := canon(t, []offset{filePos("stale.txt", 3)})
	sluicetest.Consistently(t, 2*time.Second, func() (bool, string) {
		got := canon(t, getOffsets(c, "stale"))
		return got == want, "after the last PATCH answered 200, the offsets became " + got + ", want " + want
	})
}

// TestOffsetsConcurrentOperationsOnOneConnector: clients altering and
// resetting one connector's offsets at once each get a success answer: the
// coordinator applies them one at a time, so none fences another.
func TestOffsetsConcurrentOperationsOnOneConnector(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2})
	fileSource(c, "conc", "conc.txt", c.Name("conc"), "STOPPED")
	const clients = 20
	var wg sync.WaitGroup
	answers := make([]sluicetest.Response, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%3 == 2 {
				answers[i] = sluicetest.Do(t, c.URL, "DELETE", "/connectors/conc/offsets", nil)
				return
			}
			answers[i] = sluicetest.Do(t, c.URL, "PATCH", "/connectors/conc/offsets", body(filePos("conc.txt", int64(i))))
		}()
	}
	wg.Wait()
	for i, r := range answers {
		if r.Status != http.StatusOK {
			t.Errorf("client %d: %s", i, r)
		}
	}
}
