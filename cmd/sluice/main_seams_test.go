package main

import (
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/server"
)

// The process commands' names that cluster_test.go starts its cluster
// with, from the package that has them.
var (
	devCommand  = server.Dev
	devConfigs  = server.DevConfigs
	devApp      = server.DevApp
	loggers     = server.Loggers
	newRegistry = server.NewRegistry
	withFaults  = server.WithFaults
)

// flagContext is server.FlagContext, failing the test on an error.
func flagContext(t *testing.T, flags ...cli.Flag) *cli.Context {
	t.Helper()
	c, err := server.FlagContext(flags...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
