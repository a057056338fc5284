// Package steptimer records how long each step of an operation took, for a
// debug log line that shows where the operation spends its time.
package steptimer

import "time"

// Timer times consecutive steps from its creation.
type Timer struct {
	start, last time.Time
	steps       []any
}

// New starts a timer.
func New() *Timer {
	now := time.Now()
	return &Timer{start: now, last: now}
}

// Done ends the step named name: it took the time since the previous step
// ended (or since New).
func (t *Timer) Done(name string) {
	now := time.Now()
	t.steps = append(t.steps, name, now.Sub(t.last).Round(10*time.Microsecond))
	t.last = now
}

// Attrs returns the steps as slog attributes (name, duration pairs),
// followed by "total".
func (t *Timer) Attrs() []any {
	return append(append([]any(nil), t.steps...), "total", time.Since(t.start).Round(10*time.Microsecond))
}
