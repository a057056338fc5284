//go:build !sluicetest

package server

import (
	"log/slog"

	"github.com/sluice-io/sluice/shared/faults"
)

// testFaults is the process's fault injector. The shipped binary has none,
// whatever its environment says: a test switch must not be one variable
// away in production. Builds with -tags sluicetest get seam_on.go's
// instead.
func testFaults(*slog.Logger) faults.Injector { return nil }
