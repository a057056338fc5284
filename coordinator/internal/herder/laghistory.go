package herder

import (
	"context"

	"github.com/sluice-io/sluice/coordinator/internal/laghistory"
)

// newLagHistory makes the sampler of sinks' lag, which runs while this
// coordinator leads (leaderComponents). Its ports read the herder's parts
// when called: the config topic's state exists once Start has run.
func (h *Herder) newLagHistory() *laghistory.Sampler {
	return laghistory.New(laghistory.Config{
		Interval: h.cfg.LagHistoryInterval,
		Source:   h.lag,
		Connectors: func(name string) (string, bool) {
			c, ok := h.configs.State.Get(name)
			if !ok {
				return "", false
			}
			return h.plugins.Type(c.Config), true
		},
		Logger: h.log,
	})
}

// LagHistory is the sinks' lag over the last hour, as this coordinator
// sampled it while leading (laghistory).
func (h *Herder) LagHistory() *laghistory.Sampler { return h.lagHistory }

// runLagHistory samples until the term ends.
func (h *Herder) runLagHistory(ctx context.Context, _ int64) { h.lagHistory.Run(ctx) }
