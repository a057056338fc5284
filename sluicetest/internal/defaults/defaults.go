// Package defaults holds the options both of the kit's clusters —
// sluicetest.Start's, in the test's process, and procs.Start's, as
// processes — default alike.
package defaults

import "time"

// Fill sets those of a cluster's options that are zero to their defaults:
// 2 agents, a 3s agent lease, a 5s task shutdown timeout and a 200ms
// offset flush interval.
func Fill(agents *int, lease, shutdownTimeout, flushInterval *time.Duration) {
	orDefault(agents, 2)
	orDefault(lease, 3*time.Second)
	orDefault(shutdownTimeout, 5*time.Second)
	orDefault(flushInterval, 200*time.Millisecond)
}

func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}
