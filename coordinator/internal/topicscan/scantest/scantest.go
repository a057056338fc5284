// Package scantest gives the tests of the coordinator's record topics
// (audit, offsets history) their brokers: a kfake one, and an address
// where none listens.
package scantest

import (
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Broker starts a one-broker kfake cluster for the test, closed when it
// ends, and returns its address.
func Broker(t testing.TB) string {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	return kc.ListenAddrs()[0]
}

// Unreachable returns an address on which nothing listens: a broker that
// is gone.
func Unreachable(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
