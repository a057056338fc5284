// Package natstest gives a test the embedded NATS server the dev mode runs,
// and connections to it, each stopped when the test ends.
package natstest

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/sluice-io/sluice/shared/embedded"
)

// Start starts an embedded NATS server on a free loopback port, its
// JetStream store in a temporary directory, shut down when the test ends,
// and returns its client URL.
func Start(t testing.TB, opts ...embedded.NATSOption) string {
	t.Helper()
	ns, err := embedded.NATS("", t.TempDir(), opts...)
	if err != nil {
		t.Fatalf("start embedded NATS: %v", err)
	}
	t.Cleanup(ns.Shutdown)
	return ns.ClientURL()
}

// Connect connects to the server at url, closed when the test ends.
func Connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("connect to NATS at %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}
