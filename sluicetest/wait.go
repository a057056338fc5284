package sluicetest

import (
	"github.com/sluice-io/sluice/sluicetest/wait"
)

// PollInterval is how often Eventually and Consistently ask their
// condition again (wait.PollInterval).
const PollInterval = wait.PollInterval

// T is what the kit's helpers need of a test (wait.T).
type T = wait.T

// The kit's ways to wait, from package wait (which any package's tests can
// import without the kit's dependencies).
var (
	// Eventually polls cond until it holds or timeout passes, then fails
	// the test with cond's last explanation (wait.Eventually).
	Eventually = wait.Eventually
	// Consistently checks cond for the whole of a window and fails the
	// test the first time it does not hold (wait.Consistently).
	Consistently = wait.Consistently
	// Hold keeps a fault in place for a given time (wait.Hold): the only
	// sleep a test may have.
	Hold = wait.Hold
)
