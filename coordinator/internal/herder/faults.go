package herder

import "github.com/sluice-io/sluice/shared/faults"

// Option configures New beyond its Config.
type Option func(*Herder)

// WithFaults has inj inject a test's faults at the herder's fault points
// (the connectors service's steps, and faults.StatusWrite). Production code passes none.
func WithFaults(inj faults.Injector) Option {
	return func(h *Herder) { h.faults = inj }
}
