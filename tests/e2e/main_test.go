package e2e

import (
	"fmt"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"os"
	"testing"
)

// TestMain builds the sluice binary once for every test of the run.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sluice-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if _, err := procs.BuildBinary(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
