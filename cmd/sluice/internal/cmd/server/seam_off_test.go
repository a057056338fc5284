//go:build !sluicetest

package server

import (
	"strings"
	"testing"
)

// TestShippedBinaryIgnoresTestSeam: without -tags sluicetest the agent has
// no offsets hook, and says nothing of one, even with the variable set.
func TestShippedBinaryIgnoresTestSeam(t *testing.T) {
	inj, _, logs := seamFaults(t)
	if inj != nil {
		t.Fatalf("%s set: the shipped binary installed an offsets hook", holdOffsetsEnv)
	}
	if strings.Contains(logs, "seam") {
		t.Fatalf("the shipped binary logged about a test seam: %s", logs)
	}
}
