// Package fleet drives the fleet's leader controllers (fleet/drain,
// fleet/rebalance): one loop, while this coordinator leads, that steps each
// of them on a tick, on a change of the fleet topic, and when a move ends.
package fleet

import (
	"context"
	"time"
)

// Tick is how often the loop steps the controllers besides whenever the
// fleet topic changes or a move ends.
const Tick = 500 * time.Millisecond

// Step is one controller's step; what it returns is not read by the loop.
type Step func(ctx context.Context) int

// Run calls every step in order at once, then on every tick, whenever
// changed's channel closes (it is asked anew each round, as the fleet
// state's Changed is) and on each kick, until ctx ends.
func Run(ctx context.Context, every time.Duration, changed func() <-chan struct{}, kick <-chan struct{}, steps ...Step) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		ch := changed()
		for _, step := range steps {
			step(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-ch:
		case <-kick:
		}
	}
}
