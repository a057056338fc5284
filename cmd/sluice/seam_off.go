//go:build !sluicetest

package main

import (
	"context"
	"log/slog"

	v1 "github.com/sluice-io/sluice/api/v1"
)

// offsetsTestSeam is the agent's offsets hook. The shipped binary has none,
// whatever its environment says: a test switch must not be one variable away
// in production. Builds with -tags sluicetest get seam_on.go's instead.
func offsetsTestSeam(*slog.Logger) func(context.Context, v1.OffsetsRequest) error { return nil }
