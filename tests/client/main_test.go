// Package client_test runs the typed Go client (github.com/sluice-io/sluice/api)
// against a real in-process cluster: every group of calls end to end, the
// retries across a coordinator's restart, and the runnable examples of
// docs/client.md.
package client_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// cluster is the one cluster of the package's tests and examples, started
// by TestMain: examples take no *testing.T to start one with.
var cluster *sluicetest.Cluster

// TestMain starts the cluster, runs the tests and examples, and stops it.
func TestMain(m *testing.M) {
	tb := &mainTB{name: "TestClient"}
	code := func() int {
		defer tb.cleanup()
		if err := tb.run(func() { cluster = sluicetest.Start(tb, sluicetest.Options{Agents: 2}) }); err != nil {
			fmt.Fprintln(os.Stderr, "client tests: start the cluster:", err)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}
