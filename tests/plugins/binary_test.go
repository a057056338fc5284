package plugins

import (
	"os"
	"sync"
	"testing"

	"github.com/sluice-io/sluice/sluicetest/procs"
)

// The sluice binary the tests that start sluice processes or run the CLI
// use, built once per run into a directory that lives until the run ends:
// a test's own TempDir would go with that test while procs.Binary() (and
// the leader keys pinned beside the binary) kept pointing into it.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// sluiceBinary is that binary, built at the first call.
func sluiceBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "sluice-plugins-"); binErr == nil {
			binPath, binErr = procs.BuildBinary(binDir)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// TestMain removes the binary's directory after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir) // a temp dir: nothing to do if it fails
	}
	os.Exit(code)
}
