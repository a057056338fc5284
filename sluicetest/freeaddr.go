package sluicetest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Ports FreeAddr hands out lie in [freePortLow, the kernel's ephemeral range):
// above the fixed ports the test brokers listen on (Kafka 9092–9095,
// PostgreSQL 15432), below the ports the kernel gives to listeners on port 0
// and to outgoing connections.
const freePortLow = 20000

var (
	freePortsMu sync.Mutex
	// freePortsGiven holds the ports this test binary handed out already, so
	// that no two tests (or two processes of one test) get the same one.
	freePortsGiven = map[int]bool{}
)

// FreeAddr returns a loopback address with a port that was free a moment
// ago. Sluice's listeners set SO_REUSEADDR, so a restarted process can take
// the same address again at once.
//
// The port comes from below the kernel's ephemeral range: a port in that
// range can be taken between this check and the child's bind by any process
// on the machine that listens on port 0 or opens a connection (the embedded
// brokers of the other tests running beside this one do both; a CI run lost
// a dev start to "bind: address already in use" so). Below the range only
// another caller of FreeAddr could take it, and this one never hands out a
// port twice.
func FreeAddr(t TB) string {
	t.Helper()
	high := ephemeralLow()
	freePortsMu.Lock()
	defer freePortsMu.Unlock()
	for range 1000 {
		port := freePortLow + rand.IntN(high-freePortLow)
		if freePortsGiven[port] {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue // taken: try another
		}
		ln.Close()
		freePortsGiven[port] = true
		return addr
	}
	t.Fatalf("find a free port: none of 1000 ports tried in [%d, %d) was free", freePortLow, high)
	return ""
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// ip_local_port_range), or 32768, the usual one, where it cannot be read.
func ephemeralLow() int {
	const usual = 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return usual
	}
	var low, high int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &low, &high); err != nil || low <= freePortLow+1000 {
		return usual
	}
	return low
}
